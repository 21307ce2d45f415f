"""Running a backend's diagnostic tools (nvcc, nvidia-smi) for the `hello` environment."""

import os
import shutil
import subprocess
from typing import List, Optional

TOOL_TIMEOUT_SECONDS = 10
TOOL_OUTPUT_LIMIT_BYTES = 64 * 1024


def run_tool(command: List[str]) -> Optional[str]:
    """Runs a short diagnostic command; its stdout (capped) or None when it is absent or fails."""
    if shutil.which(command[0]) is None and not os.path.isfile(command[0]):
        return None
    try:
        result = subprocess.run(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=TOOL_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    return result.stdout[:TOOL_OUTPUT_LIMIT_BYTES].decode("utf-8", "replace")
