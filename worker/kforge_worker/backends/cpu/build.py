"""The cpu backend's extensions build for the host with the defaults of torch's cpp_extension:
nothing to configure, no kernels to list."""

from ..backend import Build

BUILD = Build()
