"""The cpu backend launches no kernels: the guard tells its own work by the calls of its extension
functions (guard/own_work.py), not by names."""

from ..backend import TraceNames

TRACE_NAMES = TraceNames()
