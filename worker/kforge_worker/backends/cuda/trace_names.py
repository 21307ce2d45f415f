"""The cuda backend's kernels are told by the names compiled into its extensions (cuobjdump,
`Build.lists_built_kernels`); it has no just-in-time kernels of its own."""

from ..backend import TraceNames

TRACE_NAMES = TraceNames()
