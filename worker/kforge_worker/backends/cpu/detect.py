"""The cpu backend runs on device `cpu`."""

from ..backend import Detect, Device, DeviceMismatch


def resolve(resolved: Device, spelled: str) -> Device:
    if resolved.type != "cpu":
        raise DeviceMismatch(f"the cpu backend runs on device `cpu`, got {spelled!r}")
    return resolved


DETECT = Detect("cpu", "`cpu`", resolve)
