"""The cpu backend: C++ extensions and PyTorch code on the host, no GPU."""

from ..backend import Backend
from .build import BUILD
from .clock import CLOCK
from .detect import DETECT
from .doctor import DOCTOR
from .trace_names import TRACE_NAMES

BACKEND = Backend("cpu", DETECT, BUILD, TRACE_NAMES, CLOCK, DOCTOR)
