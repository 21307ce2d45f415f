"""Everything backend-specific, one folder per backend (`cuda/`, `triton/`, `cpu/`), each with the
same modules: `detect.py` (the device it runs on), `build.py` (its extension builds and compile
errors), `trace_names.py` (the names the guard tells its kernels by), `clock.py` (how a call on
its device is timed) and `doctor.py` (the tool versions the `hello` message
reports). Each folder's `__init__.py` gathers them into one `Backend` (backend.py); `registry.py`
lists the backends and answers for them all. What NVIDIA's cuda and triton share is `nvidia.py`.

Importing this package does not import torch: the static guard reads the trace names without it.
"""
