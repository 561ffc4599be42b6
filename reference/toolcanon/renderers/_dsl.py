"""Short constructors for value-schema DSL nodes, so each family's schema reads like its contract table."""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = [
    "Node",
    "any_json",
    "array",
    "boolean",
    "const",
    "enum",
    "integer",
    "null",
    "number",
    "obj",
    "one_of",
    "optional",
    "required",
    "string",
]

Node: TypeAlias = dict[str, Any]
"""One DSL node (a plain dict, as :func:`toolcanon.definition.define_tool` expects)."""


def string() -> Node:
    """A ``string`` node."""
    return {"type": "string"}


def integer() -> Node:
    """An ``integer`` node (any finite number with an integral value)."""
    return {"type": "integer"}


def number() -> Node:
    """A ``number`` node."""
    return {"type": "number"}


def boolean() -> Node:
    """A ``boolean`` node."""
    return {"type": "boolean"}


def null() -> Node:
    """A ``null`` node."""
    return {"type": "null"}


def any_json() -> Node:
    """A ``json`` node: any lossless JSON value."""
    return {"type": "json"}


def const(kind: str, value: Any) -> Node:
    """A scalar node of ``kind`` fixed to ``value``."""
    return {"type": kind, "const": value}


def enum(*values: str) -> Node:
    """A ``string`` node limited to ``values``."""
    return {"type": "string", "enum": list(values)}


def array(items: Node) -> Node:
    """An ``array`` node whose items match ``items``."""
    return {"type": "array", "items": items}


def obj(properties: dict[str, Node], *, additional: bool = False) -> Node:
    """An ``object`` node; mark properties with :func:`required` (others are optional)."""
    return {"type": "object", "additionalProperties": additional, "properties": properties}


def one_of(*branches: Node) -> Node:
    """A ``oneOf`` node: a value must match exactly one branch."""
    return {"oneOf": list(branches)}


def required(node: Node) -> Node:
    """The property node ``node`` marked ``required: True``."""
    return {**node, "required": True}


def optional(node: Node) -> Node:
    """The property node ``node`` as it is (optional); reads as the contract's **O** column."""
    return node
