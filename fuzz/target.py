"""What a fuzz target is: one entry point fed bytes, the typed errors it may raise, and its seed inputs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["ACCEPTED", "PropertyViolation", "Target", "rejected"]

ACCEPTED = "accepted"
"""The outcome of an input the entry point took without error."""


def rejected(error: BaseException) -> str:
    """The outcome of an input the entry point refused with one of its documented typed errors."""
    return f"rejected:{type(error).__name__}"


class PropertyViolation(AssertionError):
    """An entry point returned, but what it returned breaks a promise of its documentation."""


@dataclass(frozen=True, slots=True)
class Target:
    """One fuzz target.

    ``check`` feeds one input to the entry point and returns its outcome (:data:`ACCEPTED` or
    :func:`rejected`); it raises for anything else, which is a crash. ``seeds`` yields valid inputs derived
    from the project's own data, so that fuzzing starts from the inputs the entry point is meant for;
    ``tokens`` are byte strings worth splicing into its inputs (a mutation dictionary).
    """

    name: str
    summary: str
    check: Callable[[bytes], str]
    seeds: Callable[[], Iterable[bytes]]
    tokens: tuple[bytes, ...] = ()
