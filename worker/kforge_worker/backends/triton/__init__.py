"""The triton backend: Triton JIT kernels (`@triton.jit`) on an NVIDIA GPU."""

from ..backend import Backend
from .build import BUILD
from .clock import CLOCK
from .detect import DETECT
from .doctor import DOCTOR
from .trace_names import TRACE_NAMES

BACKEND = Backend("triton", DETECT, BUILD, TRACE_NAMES, CLOCK, DOCTOR)
