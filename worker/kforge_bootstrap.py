"""The trusted entry of every worker:
`python3 -I -B -u <checkout>/worker/kforge_bootstrap.py [--worker-dir DIR] [options] ROLE`.

`-I` ignores PYTHONPATH, PYTHONHOME, the user's site folder and the current directory, so nothing a
candidate could have dropped (a sitecustomize.py or usercustomize.py, a module named like one of
ours in a folder on PYTHONPATH) runs before kforge's own code. This file puts the worker's folder
(`--worker-dir`, default its own) and its own folder (for `kforge_sandbox`) in front of the import
path and nothing else, takes the bytecode prefix from `--pycache-prefix` (`-I` ignores
PYTHONPYCACHEPREFIX), and hands over to the sandbox launcher (kforge_sandbox/launch.py).
"""

import os
import sys


def _value(argv, flag):
    for index, item in enumerate(argv[:-1]):
        if item == flag:
            return os.path.abspath(argv[index + 1])
    return None


if __name__ == "__main__":
    own_folder = os.path.dirname(os.path.abspath(__file__))
    arguments = sys.argv[1:]
    worker_folder = _value(arguments, "--worker-dir") or own_folder
    sys.path[:0] = [worker_folder] + ([own_folder] if own_folder != worker_folder else [])
    prefix = _value(arguments, "--pycache-prefix")
    if prefix:
        sys.pycache_prefix = prefix
    sys.dont_write_bytecode = True
    if "--worker-dir" not in arguments:
        arguments = ["--worker-dir", worker_folder] + arguments
    from kforge_sandbox.launch import main

    if own_folder != worker_folder:
        # kforge_sandbox is loaded; from here on only the worker's folder serves imports.
        sys.path.remove(own_folder)
    main(arguments)
