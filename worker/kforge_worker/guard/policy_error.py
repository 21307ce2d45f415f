"""The error of a policy that cannot be used (policy.py)."""

from __future__ import annotations


class PolicyError(ValueError):
    """A policy that cannot be used; the message names the field and the bad value."""

    def __init__(self, message: str, *, field: str | None = None, cause: BaseException | None = None):
        super().__init__(message)
        self.field = field
        self.__cause__ = cause
