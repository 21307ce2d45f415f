"""The wire to the TypeScript side (docs/worker-protocol.md): the channel, request validation, stage
messages, failures and machine faults as data, the `hello` environment, and output files."""
