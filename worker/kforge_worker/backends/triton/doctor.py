"""The triton backend needs the `triton` package: the `hello` environment's `triton`."""

from typing import Dict, Optional

from ..backend import Doctor


def triton_version() -> Optional[str]:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:
        return None
    try:
        return version("triton")
    except PackageNotFoundError:
        return None


def tool_versions() -> Dict[str, Optional[str]]:
    return {"triton": triton_version()}


DOCTOR = Doctor(tool_versions)
