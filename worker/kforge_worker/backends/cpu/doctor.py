"""The cpu backend needs no tool beyond torch's C++ toolchain, which the `hello` message does not
report."""

from ..backend import Doctor

DOCTOR = Doctor()
