"""Name tables of the static guard for what a candidate reaches outside its own work: network,
processes, files, descriptors and the environment (`sandbox`), the harness (`harness-read`,
`timer-patch`), threads and deferred work (`deferred-work`) and side streams (`side-stream`)."""

from __future__ import annotations

from ...backends.registry import STREAM_CALLS

_NETWORK_MODULES = frozenset(
    {
        "socket",
        "ssl",
        "urllib",
        "urllib2",
        "urllib3",
        "http",
        "httpx",
        "requests",
        "aiohttp",
        "ftplib",
        "smtplib",
        "poplib",
        "imaplib",
        "telnetlib",
        "xmlrpc",
        "websocket",
        "websockets",
        "paramiko",
        "grpc",
        "zmq",
        "boto3",
        "botocore",
        "asyncssh",
        "pycurl",
        "socketserver",
    }
)
_PROCESS_MODULES = frozenset({"subprocess", "pty", "pexpect", "sh", "plumbum"})
_CONCURRENCY_MODULES = frozenset(
    {"threading", "_thread", "concurrent", "multiprocessing", "asyncio", "torch.multiprocessing", "queue", "sched"}
)
_HARNESS_READ_CALLS = {
    "gc.get_objects": "scans every live Python object",
    "gc.get_referrers": "walks the referrers of objects",
    "gc.get_referents": "walks the referents of objects",
    "inspect.stack": "inspects the call stack",
    "inspect.currentframe": "takes the current frame",
    "inspect.getouterframes": "inspects the caller's frames",
    "inspect.getinnerframes": "inspects frames",
    "inspect.trace": "inspects frames",
    "sys._getframe": "takes a caller's frame",
    "sys._current_frames": "reads every thread's frame",
    "sys.settrace": "installs a trace hook on the harness",
    "sys.setprofile": "installs a profile hook on the harness",
    "threading.settrace": "installs a trace hook on the harness",
    "threading.setprofile": "installs a profile hook on the harness",
    "traceback.extract_stack": "inspects the call stack",
    "traceback.walk_stack": "inspects the call stack",
    "ctypes.string_at": "reads raw memory",
    "ctypes.wstring_at": "reads raw memory",
    "ctypes.memmove": "copies raw memory",
    "ctypes.memset": "writes raw memory",
    "ctypes.cast": "reinterprets raw pointers",
    "ctypes.addressof": "takes raw addresses",
    "inspect.getsource": "reads other modules' source files",
    "inspect.getsourcelines": "reads other modules' source files",
    "inspect.getsourcefile": "locates other modules' source files",
    "inspect.getfile": "locates other modules' source files",
}
_FRAME_ATTRIBUTES = frozenset(
    {"f_back", "f_locals", "f_globals", "f_builtins", "tb_frame", "gi_frame", "cr_frame", "ag_frame", "__subclasses__"}
)
_SUBPROCESS_CALLS = frozenset(
    {
        "os.system",
        "os.popen",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.posix_spawnp",
        "os.kill",
        "os.killpg",
        "os.setsid",
        "os.setpgrp",
        "os.setpgid",
        "os.chdir",
        "os.fchdir",
        "os.chroot",
        "signal.signal",
        "signal.alarm",
        "signal.setitimer",
        "signal.pthread_kill",
        "resource.setrlimit",
        "os.sched_setaffinity",
        "os.nice",
    }
)
_SUBPROCESS_PREFIXES = ("os.exec", "os.spawn", "subprocess.", "pty.", "pexpect.", "runpy.")
_DYNAMIC_CODE = frozenset(
    {
        "builtins.exec",
        "builtins.eval",
        "builtins.compile",
        "importlib.util.spec_from_file_location",
        "importlib.util.module_from_spec",
        "importlib.machinery.SourceFileLoader",
        "importlib.reload",
        "builtins.breakpoint",
        "code.interact",
        "pdb.set_trace",
    }
)
_FD_CALLS = frozenset(
    {
        "os.write",
        "os.fdopen",
        "os.dup",
        "os.dup2",
        "os.close",
        "os.closerange",
        "os.read",
        "os.sendfile",
        "os.set_inheritable",
        "os.ftruncate",
        "os.lseek",
    }
)
_WRITE_PATH_CALLS = {
    # qualified name: index of the path argument written to
    "os.remove": 0,
    "os.unlink": 0,
    "os.rename": 1,
    "os.replace": 1,
    "os.rmdir": 0,
    "os.removedirs": 0,
    "os.mkdir": 0,
    "os.makedirs": 0,
    "os.chmod": 0,
    "os.chown": 0,
    "os.symlink": 1,
    "os.link": 1,
    "os.truncate": 0,
    "os.utime": 0,
    "os.mkfifo": 0,
    "shutil.copy": 1,
    "shutil.copy2": 1,
    "shutil.copyfile": 1,
    "shutil.copytree": 1,
    "shutil.move": 1,
    "shutil.rmtree": 0,
    "torch.save": 1,
    "numpy.save": 0,
    "numpy.savez": 0,
    "pickle.dump": 1,
}
_READ_PATH_CALLS = {
    "os.listdir": 0,
    "os.scandir": 0,
    "os.walk": 0,
    "glob.glob": 0,
    "glob.iglob": 0,
    "torch.load": 0,
    "numpy.load": 0,
    "numpy.fromfile": 0,
    "linecache.getline": 0,
    "linecache.getlines": 0,
    "importlib.import_module": None,
}
_PATH_WRITE_METHODS = frozenset(
    {
        "write_text",
        "write_bytes",
        "unlink",
        "rename",
        "replace",
        "touch",
        "mkdir",
        "rmdir",
        "chmod",
        "symlink_to",
        "hardlink_to",
    }
)
_PATH_READ_METHODS = frozenset({"read_text", "read_bytes", "iterdir", "glob", "rglob"})
_DEFERRED_CALLS = {
    "threading.Thread": "starts a thread",
    "threading.Timer": "starts a timer thread",
    "_thread.start_new_thread": "starts a thread",
    "_thread.start_new": "starts a thread",
    "concurrent.futures.ThreadPoolExecutor": "starts a thread pool",
    "concurrent.futures.ProcessPoolExecutor": "starts a process pool",
    "concurrent.futures.thread.ThreadPoolExecutor": "starts a thread pool",
    "asyncio.run": "runs an event loop",
    "asyncio.create_task": "schedules a task",
    "asyncio.ensure_future": "schedules a task",
    "asyncio.get_event_loop": "uses an event loop",
    "torch.jit.fork": "forks an asynchronous task",
    "atexit.register": "registers work to run at exit, after the harness saved its results",
    "weakref.finalize": "registers work to run when an object dies",
    "torch.Tensor._make_subclass": "builds a tensor subclass",
    "torch.Tensor._make_wrapper_subclass": "builds a tensor wrapper subclass",
    "torch._C._disabled_torch_function_impl": "hooks torch functions",
}
_DEFERRED_PREFIXES = ("multiprocessing.", "torch.multiprocessing.", "torch.futures.")
_TENSOR_BASES = frozenset(
    {
        "torch.Tensor",
        "torch._C._TensorBase",
        "torch._C.TensorBase",
        "torch.nn.Parameter",
        "torch.nn.parameter.Parameter",
        "torch.utils._python_dispatch.TorchDispatchMode",
        "torch.overrides.TorchFunctionMode",
        "torch.utils._mode_utils",
    }
)
_SIDE_STREAM_CALLS = frozenset(
    {
        "torch.cuda.Stream",
        "torch.cuda.streams.Stream",
        "torch.cuda.ExternalStream",
        "torch.cuda.stream",
        "torch.cuda.set_stream",
        "torch.cuda.StreamContext",
        "torch.Stream",
        *STREAM_CALLS,  # the backends' own (backends/*/trace_names.py)
    }
)
#: Environment variables whose setting injects code into the processes a build starts (the
#: compiler, ninja) or changes the harness's own settings: setting one stays a `sandbox` rejection.
_INJECTING_ENVIRONMENT = frozenset({"LD_PRELOAD", "LD_AUDIT", "PYTHONSTARTUP", "PYTHONINSPECT", "BASH_ENV", "ENV"})
_HARNESS_ENVIRONMENT_PREFIXES = ("KFORGE_",)
_TIMING_TARGETS = (
    "torch.cuda.Event",
    "torch.cuda.synchronize",
    "torch.cuda.streams",
    "torch.cuda.Stream",
    "torch.Event",
    "torch.cuda.current_stream",
    "torch.cuda.default_stream",
    "torch.cuda.event",
    "torch.synchronize",
)
_JOIN_METHODS = frozenset({"wait_stream", "wait_event", "synchronize"})
