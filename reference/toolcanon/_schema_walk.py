"""Drive nested generator walks with an explicit stack, so nesting depth is bounded by memory, not recursion.

A walk step is a generator. It ``yield``s a child step to run it and receives the child's return value (or the
child's exception, raised at the ``yield``), exactly like a recursive call, but the frames live on a list.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeAlias, TypeVar

__all__ = ["Step", "run_walk"]

T = TypeVar("T")

Step: TypeAlias = Generator[Any, Any, T]
"""A walk step: yields child steps, receives their results, returns its own result."""


def run_walk(root: Step[T]) -> T:
    """Run ``root`` and every step it yields (depth-first), and return the root's result."""
    stack: list[Step[Any]] = [root]
    sent: Any = None
    error: BaseException | None = None
    while True:
        top = stack[-1]
        try:
            if error is None:
                child = top.send(sent)
            else:
                thrown, error = error, None
                child = top.throw(thrown)
        except StopIteration as stop:
            stack.pop()
            if not stack:
                result: T = stop.value
                return result
            sent = stop.value
            continue
        except BaseException as raised:
            stack.pop()
            if not stack:
                raise
            error = raised
            continue
        stack.append(child)
        sent = None
