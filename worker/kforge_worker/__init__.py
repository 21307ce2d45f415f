"""kforge's evaluation worker: `python3 -m kforge_worker reference|candidate` (docs/worker-protocol.md)."""

PROTOCOL_VERSION = 1
