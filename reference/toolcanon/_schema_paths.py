"""Lazy paths (of values and of schemas) and the texts of value violations (digest 1.25-1.31).

A path is the root label (a ``str``) or a ``(parent, key)`` pair: a ``str`` key is a property, an ``int``
key an array index. Validation passes pairs down and renders a path to text only when it reports a violation.
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = [
    "SchemaPath",
    "ValuePath",
    "missing_required",
    "must_be",
    "must_match_one_branch",
    "not_declared",
    "property_path",
    "render_path",
    "schema_path_text",
]

ValuePath: TypeAlias = "str | tuple[ValuePath, str | int]"


def render_path(path: ValuePath) -> str:
    """The path of a violation at a node: its :func:`property_path`, where ``""`` (the arguments root, or an empty
    key under it) is ``arguments``."""
    return property_path(path) or "arguments"


def property_path(path: ValuePath) -> str:
    """Path text: ``parent.key`` (``key`` under the root ``""``), ``parent[i]``, written as it is, empty included.

    A missing or undeclared property names its key by this text, as the original's ``propertyPath`` does, so an
    empty key under the arguments root is ``""``; every violation at a node names it by :func:`render_path`.
    """
    keys: list[str | int] = []
    while type(path) is tuple:
        path, key = path
        keys.append(key)
    assert type(path) is str
    text = path
    for key in reversed(keys):
        if type(key) is int:
            text = f"{text}[{key}]"
        elif text == "":
            text = str(key)
        else:
            text = f"{text}.{key}"
    return text


def must_be(path: ValuePath, what: str) -> str:
    """``"<path>" must be <what>``: the form of every per-node value violation."""
    return f'"{render_path(path)}" must be {what}'


def must_match_one_branch(path: ValuePath, matched: int) -> str:
    """The violation for a value matching other than exactly one oneOf branch (digest 1.30)."""
    return f'"{render_path(path)}" must match exactly one oneOf branch (matched {matched})'


def missing_required(path: ValuePath, key: str) -> str:
    """The violation for a required property that the object lacks (digest 1.27)."""
    return f'missing required property "{property_path((path, key))}"'


def not_declared(path: ValuePath, key: str) -> str:
    """The violation for an undeclared key of a closed object (digest 1.27)."""
    return f'"{property_path((path, key))}" is not a declared property (additionalProperties: false)'


SchemaPath: TypeAlias = "str | tuple[SchemaPath, str]"
"""A schema path: the root text, or ``(parent, suffix)`` with a suffix like ``.items`` or ``.oneOf[2]``."""


def schema_path_text(path: SchemaPath) -> str:
    """The text of a schema path (built on demand, so deep schemas do not copy ever longer strings)."""
    suffixes: list[str] = []
    while type(path) is tuple:
        path, suffix = path
        suffixes.append(suffix)
    assert type(path) is str
    suffixes.append(path)
    return "".join(reversed(suffixes))
