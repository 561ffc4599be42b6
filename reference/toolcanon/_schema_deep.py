"""The iterative engine: the same violations as the closures, for schemas too tall for recursion.

Each node is a walk step (``_schema_walk``), so schema height is bounded by memory. A subtree short enough for
the recursive closures is handed to them; the steps only carry the part of the schema above that.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import repeat
from typing import Any, Final

from toolcanon._schema_kinds import is_lossless, is_lossless_beside
from toolcanon._schema_nodes import SchemaNode
from toolcanon._schema_paths import ValuePath, missing_required, must_be, must_match_one_branch, not_declared
from toolcanon._schema_walk import Step, run_walk
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import es_key_order

__all__ = ["CLOSURE_HEIGHT", "collect_iteratively", "collect_without_closures", "valid_iteratively"]

CLOSURE_HEIGHT: Final = 100
"""Subtrees at most this tall run on the recursive closures (two frames a level, plus the lossless check)."""


def valid_iteratively(node: SchemaNode, value: Any, height: int = CLOSURE_HEIGHT) -> bool | None:
    """Whether ``value`` has no violation under ``node``, without deep recursion; ``None`` when it cannot tell.

    The boolean check of a tall schema, for the commonest case, a valid value: one explicit stack of iterators
    over the (node, value) pairs still to check, a few dozen bytes a level, where the reporting walk keeps two
    generator steps, a path and a list of violations per level. Subtrees at most ``height`` tall run on the
    closures. A ``oneOf`` above that height (its branches would each need a walk of their own) is ``None``, as
    is any failure to read the value: the reporting walk then decides. It may raise, when the closures do.
    """
    stack: list[Iterator[tuple[SchemaNode, Any]]] = [iter(((node, value),))]
    while stack:
        for child_node, child in stack[-1]:
            if child_node.depth <= height:
                if not child_node.valid(child):
                    return False
                continue
            opened = _open(child_node, child, height)
            if opened is None or opened is False:
                return opened
            if opened is not True:
                stack.append(opened)
                break
        else:
            stack.pop()
    return True


def _open(node: SchemaNode, value: Any, height: int) -> Iterator[tuple[SchemaNode, Any]] | bool | None:
    """The pairs under a container node still to check, or its verdict (``True``, ``False``, ``None``: unsure)."""
    kind = node.kind
    value_kind = type(value)
    if kind == "array":
        if value_kind is not list and value_kind is not FrozenList:
            return False
        if node.items is None:
            return is_lossless(value)
        return zip(repeat(node.items), value)
    if kind == "object":
        if value_kind is not dict and value_kind is not FrozenDict:
            return False
        for key in value:
            if type(key) is not str:
                return False  # not lossless JSON: a violation, whatever else the object holds
        for key in node.required:
            if key not in value:
                return False
        properties = node.properties
        if node.closed:
            for key in value:
                if key not in properties:
                    return False
        elif not is_lossless_beside(value, properties):
            return False
        return iter([(child, value[key]) for key, child in properties.items() if key in value])
    if kind == "oneOf":
        if any(branch.depth > height for branch in node.branches):
            return None
        return sum(1 for branch in node.branches if branch.valid(value)) == 1
    if kind == "any":
        return is_lossless(value)
    return node.valid(value)  # a scalar never recurses


def collect_iteratively(node: SchemaNode, value: Any, path: ValuePath) -> list[str]:
    """Every violation of ``value`` under ``node``, in the contract's order, without deep recursion."""
    out: list[str] = []
    run_walk(_collect(node, value, path, out, True))
    return out


def _collect(node: SchemaNode, value: Any, path: ValuePath, out: list[str], use_closures: bool) -> Step[None]:
    if use_closures and node.depth <= CLOSURE_HEIGHT:
        start = len(out)
        try:
            if not node.valid(value):
                node.collect(value, path, out)
            return
        except Exception:
            # The caller's stack was already deep (RecursionError), or reading the value raised: finish this
            # subtree with steps, which place such a failure at the node that met it.
            del out[start:]
    kind = node.kind
    if kind == "object":
        yield from _collect_object(node, value, path, out, use_closures)
    elif kind == "array":
        yield from _collect_array(node, value, path, out, use_closures)
    elif kind == "oneOf":
        matched = 0
        for branch in node.branches:
            scratch: list[str] = []
            yield _collect(branch, value, path, scratch, use_closures)
            if not scratch:
                matched += 1
        if matched != 1:
            out.append(must_match_one_branch(path, matched))
    elif kind == "any":
        if not is_lossless(value):
            out.append(must_be(path, "a lossless JSON value"))
    else:
        # Scalars never recurse: their closure is always safe to call.
        node.collect(value, path, out)


def _collect_object(node: SchemaNode, value: Any, path: ValuePath, out: list[str], use_closures: bool) -> Step[None]:
    kind = type(value)
    if kind is not dict and kind is not FrozenDict:
        out.append(must_be(path, "an object"))
        return
    start = len(out)
    try:
        for key in node.required:
            if key not in value:
                out.append(missing_required(path, key))
        for key, child in node.properties.items():
            if key in value:
                yield _collect(child, value[key], (path, key), out, use_closures)
        if node.closed:
            for key in es_key_order([key for key in value if type(key) is str]):
                if key not in node.properties:
                    out.append(not_declared(path, key))
        if len(out) == start and not is_lossless_beside(value, node.properties):
            out.append(must_be(path, "a lossless JSON object"))
    except RecursionError:
        raise
    except Exception:
        del out[start:]
        out.append(must_be(path, "a lossless JSON value"))


def _collect_array(node: SchemaNode, value: Any, path: ValuePath, out: list[str], use_closures: bool) -> Step[None]:
    kind = type(value)
    if kind is not list and kind is not FrozenList:
        out.append(must_be(path, "an array"))
        return
    if node.items is None:
        if not is_lossless(value):
            out.append(must_be(path, "a dense lossless JSON array"))
        return
    for index, item in enumerate(value):
        yield _collect(node.items, item, (path, index), out, use_closures)


def collect_without_closures(node: SchemaNode, value: Any, path: ValuePath) -> list[str]:
    """Like :func:`collect_iteratively`, but no subtree is handed to the recursive closures (tests compare both)."""
    out: list[str] = []
    run_walk(_collect(node, value, path, out, False))
    return out
