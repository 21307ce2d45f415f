"""The candidate's sandbox: what `kforge_bootstrap.py` sets up around a worker before it runs.

Standard library and ctypes only (nothing can be installed on the GPU hosts). Each layer is tried
in turn and degrades to the next best where the kernel refuses it; what is in force and what is
missing is the isolation report (report.py) that the worker's `hello` carries and every verdict
records (docs/security.md).
"""
