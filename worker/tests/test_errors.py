"""errors.py and the build helpers directly: how exceptions become (kind, check)."""

import torch

from kforge_worker.build.build import classify_build_exception, first_error_line
from kforge_worker.protocol.errors import classify


def kind_and_check(exc):
    failure = classify(exc, "runtime_error", "forward", "the candidate's forward raised")
    return failure.kind, failure.check


def test_out_of_memory_is_crashed_oom():
    assert kind_and_check(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")) == ("crashed", "oom")
    oom_class = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_class is not None:
        assert kind_and_check(oom_class("anything")) == ("crashed", "oom")


def test_device_errors_are_runtime_error_device_error():
    for text in (
        "CUDA error: an illegal memory access was encountered",
        "CUDA error: unspecified launch failure",
        "CUDA error: device-side assert triggered",
    ):
        assert kind_and_check(RuntimeError(text)) == ("runtime_error", "device-error")


def test_other_exceptions_keep_the_callers_kind_and_check():
    failure = classify(ValueError("bad\nsecond line"), "runtime_error", "forward", "the candidate's forward raised")
    assert (failure.kind, failure.check) == ("runtime_error", "forward")
    assert failure.message == "the candidate's forward raised: ValueError: bad"
    assert "ValueError: bad" in failure.traceback_text


def test_torch_build_error_carries_the_compiler_output():
    output = (
        "[1/2] c++ -c main.cpp\nFAILED: main.o\nmain.cpp:7:12: error: 'foo' was not declared in this scope\n"
        "ninja: build stopped: subcommand failed.\n"
    )
    failure = classify_build_exception(RuntimeError(f"Error building extension 'kforge_x': {output}"))
    assert (failure.kind, failure.check) == ("compile_error", "build")
    assert failure.compiler_output == output
    assert failure.message == "the extension did not build: main.cpp:7:12: error: 'foo' was not declared in this scope"


def test_nvcc_style_error_line_is_found():
    output = '/tmp/x/cuda.cu(12): error: identifier "foo" is undefined\n1 error detected\n'
    assert first_error_line(output) == '/tmp/x/cuda.cu(12): error: identifier "foo" is undefined'


def test_nvcc_fatal_line_wins_over_ninja_echoes_of_the_command():
    # What CUDA 13 printed on the H200 for examples/level1_01_relu/cuda_compile_error.py (-arch=sm_70):
    # nvcc's line says "fatal", not "error", and ninja echoes the command before it.
    output = (
        "[1/3] /usr/local/cuda/bin/nvcc -MD -MF cuda.cuda.o.d -DTORCH_EXTENSION_NAME=relu_sm70 "
        "-Xcudafe --diag_suppress=cc_clobber_ignored -Werror=cross-execution-space-call -arch=sm_70 -c cuda.cu\n"
        "FAILED: cuda.cuda.o\n/usr/local/cuda/bin/nvcc -Werror=cross-execution-space-call -arch=sm_70 -c cuda.cu\n"
        "nvcc fatal   : Unsupported gpu architecture 'compute_70'\nninja: build stopped: subcommand failed.\n"
    )
    assert first_error_line(output) == "nvcc fatal   : Unsupported gpu architecture 'compute_70'"
    failure = classify_build_exception(RuntimeError(f"Error building extension 'relu_sm70': {output}"))
    assert failure.message == "the extension did not build: nvcc fatal   : Unsupported gpu architecture 'compute_70'"


def test_undefined_symbol_on_load_is_a_compile_error():
    failure = classify_build_exception(ImportError("/b/kforge_x.so: undefined symbol: _Z3addN2at6TensorE"))
    assert (failure.kind, failure.check) == ("compile_error", "build")


def test_plain_import_error_is_runtime_error_import():
    failure = classify_build_exception(ModuleNotFoundError("No module named 'cutlass'"))
    assert (failure.kind, failure.check) == ("runtime_error", "import")


def test_the_message_names_the_source_file_without_its_build_folder():
    output = (
        "[1/2] /usr/local/cuda/bin/nvcc -c /tmp/kforge/builds/1843e1cba7b8/kforge_relu/cuda.cu -o cuda.cuda.o\n"
        "FAILED: cuda.cuda.o\n"
        '/tmp/kforge/builds/1843e1cba7b8/kforge_relu/cuda.cu(6): error: static assertion failed with "broken"\n'
        '1 error detected in the compilation of "/tmp/kforge/builds/1843e1cba7b8/kforge_relu/cuda.cu".\n'
    )
    failure = classify_build_exception(RuntimeError(f"Error building extension 'kforge_relu': {output}"))
    assert failure.message == 'the extension did not build: cuda.cu(6): error: static assertion failed with "broken"'
    assert failure.compiler_output == output  # the full diagnostics keep every path
