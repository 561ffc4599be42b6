"""The errors of a mutation run: a usage error, and a run that cannot give a meaningful score."""

from __future__ import annotations

__all__ = ["MutationError", "UsageError"]


class MutationError(Exception):
    """The run cannot measure anything: the set-up is broken (the message says how)."""


class UsageError(MutationError):
    """An option names something that does not exist (a module, a suite) or a value out of range."""
