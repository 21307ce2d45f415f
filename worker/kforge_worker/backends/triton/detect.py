"""The triton backend runs on a CUDA device the request names (`cuda:N`)."""

import functools

from .. import nvidia
from ..backend import Detect

DETECT = Detect("cuda", nvidia.SPELLING, functools.partial(nvidia.resolve_device, "triton"))
