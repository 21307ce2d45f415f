"""The cuda backend: CUDA C++ extensions (`load_inline`, `load`) on an NVIDIA GPU."""

from ..backend import Backend
from .build import BUILD
from .clock import CLOCK
from .detect import DETECT
from .doctor import DOCTOR
from .trace_names import TRACE_NAMES

BACKEND = Backend("cuda", DETECT, BUILD, TRACE_NAMES, CLOCK, DOCTOR)
