"""The triton backend compiles its kernels when they are first called: a Triton
`CompilationError` there is a `compile_error`. Extensions it builds beside them (`load_inline`)
build for the device's architecture like the cuda backend's."""

from .. import nvidia
from ..backend import Build


def is_compilation_error(error: BaseException) -> bool:
    """A Triton `CompilationError` (any Triton version), recognised without importing Triton."""
    return any(
        cls.__name__ == "CompilationError" and cls.__module__.startswith("triton") for cls in type(error).__mro__
    )


BUILD = Build(
    configure=nvidia.configure_build,
    is_compilation_error=is_compilation_error,
    compile_error_subject="the Triton kernel",
    preload_modules=("triton", "triton.language"),
)
