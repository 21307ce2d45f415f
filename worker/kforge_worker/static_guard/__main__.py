"""`python -m kforge_worker.static_guard FILE [POLICY] [PRECISION]`: print findings as JSON."""

from .analysis import main

raise SystemExit(main())
