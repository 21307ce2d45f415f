"""The cuda backend is timed by CUDA events (nvidia.py)."""

from ..nvidia import CLOCK

__all__ = ["CLOCK"]
