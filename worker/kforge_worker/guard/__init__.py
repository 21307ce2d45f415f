"""Every check against a candidate that cheats (docs/guard.md, docs/hacks.md): the static guard
(`static/`), the policies, and the run-time guard (dispatch and kernel traces, own-kernel and
own-work rules, torch-fallback, provenance, poison, global state, integrity, side streams)."""
