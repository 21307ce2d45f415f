"""The cuda backend's extensions build for the device's architecture, and the kernels compiled
into them are listed after the build (`build-info`, build/build_info.py)."""

from .. import nvidia
from ..backend import Build

BUILD = Build(configure=nvidia.configure_build, lists_built_kernels=True)
