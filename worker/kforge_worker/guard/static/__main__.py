"""`python -m kforge_worker.guard.static FILE [POLICY] [PRECISION]`: print findings as JSON."""

from .analysis import main

raise SystemExit(main())
