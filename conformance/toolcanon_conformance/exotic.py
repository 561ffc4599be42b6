"""Exotic values in Python: the Python column of the scenario format's applicability table.

A scenario writes a value JSON cannot carry as a tag, ``{"$exotic": KIND}``. :func:`materialize` builds the
native Python value of every tag inside a parsed JSON value; the kinds Python cannot express at all raise
:class:`NotExpressible` (the scenario is then *not applicable* to a Python implementation, never passed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolcanon_conformance.scenario import iter_exotic_tags

__all__ = ["PYTHON_INEXPRESSIBLE", "NotExpressible", "first_inexpressible", "materialize"]

PYTHON_INEXPRESSIBLE: Final = frozenset(
    {
        "undefined",
        "bigint",
        "sparse-array",
        "symbol-key",
        "throwing-getter",
        "symbol",
        "null-prototype",
        "other-realm",
        "accessor-property",
        "non-enumerable-key",
        "array-extra-key",
        "array-symbol-key",
        "date",
        "map",
        "regexp",
        "error",
        "boxed-primitive",
        "throwing-proxy",
    }
)
"""The kinds with no Python value: JavaScript's ``undefined``, ``10n``, symbols, array holes and symbol keys;
prototypes, property attributes, realms and proxies, which a plain ``dict`` or ``list`` does not have; and
getters (a plain ``dict`` runs no code when read)."""


class NotExpressible(Exception):
    """A tag whose kind Python cannot express; ``kind`` names it."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"not expressible: {kind}")
        self.kind = kind


class OpaqueObject:
    """An instance of an empty user class (``opaque-object``)."""


class DictSubclass(dict[str, Any]):
    """A user subclass of ``dict`` (``dict-subclass``)."""


class ListSubclass(list[Any]):
    """A user subclass of ``list`` (``list-subclass``)."""


def _function() -> None:
    """The ``function`` kind: any plain function."""


def _cycle() -> list[Any]:
    container: list[Any] = []
    container.append(container)
    return container


_BUILDERS: Final[Mapping[str, Any]] = {
    "nan": lambda: float("nan"),
    "infinity": lambda: float("inf"),
    "negative-infinity": lambda: float("-inf"),
    "negative-zero": lambda: -0.0,
    "unsafe-integer": lambda: 2**53,
    "cycle": _cycle,
    "non-string-key": lambda: {1: "a"},
    "opaque-object": OpaqueObject,
    "function": lambda: _function,
    "bytes": lambda: b"x",
    "tuple": lambda: (1, 2),
    "set": lambda: {1},
    "lone-surrogate": lambda: "\ud800",
    "dict-subclass": lambda: DictSubclass({"a": 1}),
    "list-subclass": lambda: ListSubclass([1, 2]),
}


def first_inexpressible(scenario: Any) -> str | None:
    """The first kind (in document order) of a scenario that Python cannot express, or ``None``.

    Besides the tags, a metadata projector of kind ``undefined`` (one that returns JavaScript's ``undefined``)
    counts as the kind ``undefined``.
    """
    stack: list[tuple[Any, str]] = [(scenario, "")]
    while stack:
        node, key = stack.pop()
        if isinstance(node, dict):
            if "$exotic" in node:
                if node["$exotic"] in PYTHON_INEXPRESSIBLE:
                    return str(node["$exotic"])
                continue
            if key == "presentationMeta" and node.get("kind") == "undefined":
                return "undefined"
            stack.extend((item, name) for name, item in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((item, "") for item in reversed(node))
    return None


def materialize(value: Any) -> Any:
    """``value`` with every exotic tag replaced by a fresh native value; untouched when it holds no tag.

    Raises :class:`NotExpressible` for a kind Python cannot express.
    """
    if not any(True for _ in iter_exotic_tags(value)):
        return value
    return _materialize(value)


def _materialize(value: Any) -> Any:
    # Without recursion: a generated value holding a tag may be nested a hundred thousand levels deep.
    root: list[Any] = [None]
    work: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while work:
        node, target, slot = work.pop()
        if isinstance(node, dict):
            if "$exotic" in node:
                kind = node["$exotic"]
                if kind in PYTHON_INEXPRESSIBLE:
                    raise NotExpressible(kind)
                target[slot] = _BUILDERS[kind]()
                continue
            copied: Any = dict.fromkeys(node)
            work.extend((item, copied, key) for key, item in node.items())
        elif isinstance(node, list):
            copied = [None] * len(node)
            work.extend((item, copied, index) for index, item in enumerate(node))
        else:
            copied = node
        target[slot] = copied
    return root[0]
