"""Fuzz target ``snapshot``: the lossless snapshot of arbitrary Python objects (``toolcanon.jsonvalue``).

The input is a program of :mod:`fuzz.values`. ``snapshot_json`` must either return a frozen copy or raise
:class:`~toolcanon.jsonvalue.NotLosslessJson` naming at least one place; ``is_lossless_json`` and
``iter_rejections`` must agree with it, and a copy must be deeply frozen and snapshot to an equal copy of itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fuzz import seeds
from fuzz.target import ACCEPTED, PropertyViolation, Target, rejected
from fuzz.values import build_value, encode_json
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import NotLosslessJson, canonical_json, is_lossless_json, iter_rejections, snapshot_json

__all__ = ["TARGET", "check"]


def _is_frozen(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict or kind is list:
            return False
        if kind is FrozenDict:
            stack.extend(item.values())
        elif kind is FrozenList:
            stack.extend(item)
    return True


def check(data: bytes) -> str:
    """Snapshot the object ``data`` builds and hold the walker to its promises."""
    value = build_value(data)
    try:
        copy = snapshot_json(value)
    except NotLosslessJson as error:
        if not error.rejections:
            raise PropertyViolation("NotLosslessJson without a rejection") from None
        if is_lossless_json(value):
            raise PropertyViolation("snapshot_json rejects a value is_lossless_json accepts") from None
        walked = list(iter_rejections(value))
        if walked != error.rejections:
            raise PropertyViolation(
                f"iter_rejections yields {walked[:3]}, snapshot_json {error.rejections[:3]}"
            ) from None
        return rejected(error)
    if not is_lossless_json(value):
        raise PropertyViolation("is_lossless_json rejects a value snapshot_json copies")
    if any(True for _ in iter_rejections(value)):
        raise PropertyViolation("iter_rejections rejects a value snapshot_json copies")
    if not _is_frozen(copy):
        raise PropertyViolation("the snapshot holds a mutable container")
    # compared as text: == on containers recurses, and the copy may be nested far past the recursion limit
    if canonical_json(snapshot_json(copy)) != canonical_json(copy):
        raise PropertyViolation("snapshotting a snapshot changed it")
    return ACCEPTED


def _seeds() -> Iterator[bytes]:
    for document in seeds.documents():
        yield encode_json(document)
    for chunk in seeds.in_chunks(seeds.vector_numbers()) + seeds.in_chunks(seeds.vector_strings()):
        yield encode_json(chunk)
    for document in seeds.vector_objects():
        yield encode_json(document)


TARGET = Target(
    name="snapshot",
    summary="toolcanon.jsonvalue.snapshot_json of arbitrary Python objects",
    check=check,
    seeds=_seeds,
)
