"""The compiled form of a supported raw schema: one node per schema object, shared by both engines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolcanon._schema_kinds import ABSENT, is_plain_array
from toolcanon._schema_paths import ValuePath
from toolcanon._schema_walk import Step, run_walk
from toolcanon.jsonvalue import canonical_json, es_key_order

__all__ = ["CollectFn", "SchemaNode", "ValidFn", "build_nodes"]

ValidFn = Callable[[Any], bool]
"""A node's boolean check: is the value valid (no violation at all)?"""
CollectFn = Callable[[Any, ValuePath, list[str]], None]
"""A node's reporting check: append the value's violations, in the contract's order, to the list."""


def _not_compiled(value: Any, *rest: Any) -> Any:
    raise AssertionError("schema node used before its checks were compiled")


class SchemaNode:
    """One schema object of a supported schema, reduced to what validation needs.

    ``kind`` is ``any`` (no type, no oneOf), ``oneOf``, or a type name. ``depth`` is the node's height (a
    leaf is 1): it decides whether the recursive closures may run it. ``valid`` and ``collect`` are its
    compiled checks.
    """

    __slots__ = (
        "branches",
        "closed",
        "collect",
        "const",
        "const_json",
        "depth",
        "enum",
        "enum_json",
        "items",
        "kind",
        "properties",
        "required",
        "valid",
    )

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.enum: frozenset[Any] | None = None
        self.enum_json = ""
        self.const: Any = ABSENT
        self.const_json = ""
        self.properties: dict[str, SchemaNode] = {}
        self.required: tuple[str, ...] = ()
        self.closed = False
        self.items: SchemaNode | None = None
        self.branches: tuple[SchemaNode, ...] = ()
        self.depth = 1
        self.valid: ValidFn = _not_compiled
        self.collect: CollectFn = _not_compiled


def build_nodes(schema: Any) -> tuple[SchemaNode, list[SchemaNode]]:
    """Build the node tree of a schema that passed the subset check; also return every node, children first.

    A schema object shared by several parents becomes one shared node, and so do alike leaves. Iterative: any
    depth.
    """
    # keyed by a schema object's id, and by what a leaf checks
    built: dict[Any, SchemaNode] = {}
    order: list[SchemaNode] = []
    root = run_walk(_build(schema, built, order))
    return root, order


def _build(schema: Any, built: dict[Any, SchemaNode], order: list[SchemaNode]) -> Step[SchemaNode]:
    existing = built.get(id(schema))
    if existing is not None:
        return existing
    children: list[SchemaNode] = []
    if "oneOf" in schema:
        node = SchemaNode("oneOf")
        for branch in schema["oneOf"]:
            children.append(_leaf(branch, built, order) or (yield _build(branch, built, order)))
        node.branches = tuple(children)
    elif "type" not in schema:
        node = SchemaNode("any")
    else:
        node = SchemaNode(schema["type"])
        if node.kind == "object":
            declared = schema.get("properties", {})
            properties = node.properties
            plain = _PlainLeaves(built, order)
            for key in es_key_order(list(declared)):
                property_schema = declared[key]
                if len(property_schema) == 1 and "type" in property_schema:
                    properties[key] = plain[property_schema["type"]]
                else:
                    child = _leaf(property_schema, built, order) or (yield _build(property_schema, built, order))
                    properties[key] = child
                    children.append(child)
            children.extend(plain.values())  # each leaf once, not once per property: the depth is all it gives
            node.required = tuple(schema.get("required", ()))
            node.closed = schema.get("additionalProperties") is False
        elif node.kind == "array":
            if "items" in schema:
                items = schema["items"]
                node.items = _leaf(items, built, order) or (yield _build(items, built, order))
                children.append(node.items)
        else:
            _set_scalar_constraints(node, schema)
    node.depth = 1 + max((child.depth for child in children), default=0)
    built[id(schema)] = node
    order.append(node)
    return node


class _PlainLeaves(dict[str, SchemaNode]):
    """The node of a schema holding a type alone, by type name: the commonest leaf, looked up without a call."""

    __slots__ = ("_built", "_order")

    def __init__(self, built: dict[Any, SchemaNode], order: list[SchemaNode]) -> None:
        super().__init__()
        self._built = built
        self._order = order

    def __missing__(self, kind: str) -> SchemaNode:
        # an object or array schema of a type alone has no child: its node is a leaf too
        node = self._built.get((kind,))
        if node is None:
            node = self._built[(kind,)] = SchemaNode(kind)
            self._order.append(node)
        self[kind] = node
        return node


def _leaf(schema: Any, built: dict[Any, SchemaNode], order: list[SchemaNode]) -> SchemaNode | None:
    """The node of a schema already built or without child schemas (built at once, no walk step), else ``None``.

    Leaves that check the same thing share one node (a node knows nothing of where it is), so a wide schema of
    alike properties compiles one check, not one per property.
    """
    if len(schema) == 1 and "type" in schema and schema["type"] not in {"object", "array"}:
        return _PlainLeaves(built, order)[schema["type"]]  # a type alone, the commonest leaf: one node per type
    existing = built.get(id(schema))
    if existing is not None:
        return existing
    if "oneOf" in schema:
        return None
    kind = schema.get("type")
    if kind in ("object", "array"):
        return None
    node: SchemaNode | None
    if kind is None or ("enum" not in schema and "const" not in schema):
        key: tuple[str, ...] = (kind or "any",)
        node = built.get(key)
        if node is None:
            node = built[key] = SchemaNode(kind or "any")
            order.append(node)
    else:
        fresh = SchemaNode(kind)
        _set_scalar_constraints(fresh, schema)
        key = (kind, fresh.enum_json, fresh.const_json)
        node = built.get(key)
        if node is None:
            node = built[key] = fresh
            order.append(node)
    built[id(schema)] = node
    return node


def _set_scalar_constraints(node: SchemaNode, schema: Any) -> None:
    enum = schema.get("enum")
    if is_plain_array(enum):
        node.enum = frozenset(enum)
        node.enum_json = canonical_json(enum)
    if "const" in schema:
        node.const = schema["const"]
        node.const_json = canonical_json(node.const)
