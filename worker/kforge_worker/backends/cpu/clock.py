"""The cpu backend is timed by the host's clock; a call's work is done when it returns."""

from ..backend import HOST_CLOCK

CLOCK = HOST_CLOCK
