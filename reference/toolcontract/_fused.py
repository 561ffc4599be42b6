"""The fused normalizer: one walk that checks losslessness, validates and builds the frozen copy.

For a schema of the supported subset, :func:`compile_normalizer` generates (once, at registration) Python code
specialised to that schema. The generated function either returns exactly what the contract's three steps —
snapshot, validate, freeze — would produce for a valid lossless value, or raises :class:`NotNormalized`, in
which case the caller takes the ordinary path that reports the contract's exact messages. It never decides that
a value is invalid: it only declines, so messages and their order come from one place.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable
from typing import Any, Final

from toolcontract._text_cache import TextKeyedCache
from toolcontract.frozen import FrozenDict, FrozenList
from toolcontract.jsonvalue import (
    MAX_SAFE_INTEGER,
    _Bail,
    _fast_copy,
    in_es_order,
    is_array_index,
)

__all__ = ["FusedNormalization", "NotNormalized", "compile_normalizer", "run_without_gc"]

NotNormalized = _Bail
"""Raised by a generated normalizer when the value needs the ordinary (message-producing) path."""

# Schemas nested deeper than this are not fused: the generated code recurses once per schema level.
_MAX_SCHEMA_DEPTH: Final = 64
_SCALAR_TYPES: Final = frozenset({"string", "number", "integer", "boolean", "null"})


def run_without_gc(function: Callable[[Any], Any], value: Any) -> Any:
    """Call ``function(value)`` with the cyclic garbage collector paused (it only allocates acyclic data)."""
    if not gc.isenabled():
        return function(value)
    gc.disable()
    try:
        return function(value)
    finally:
        gc.enable()


class _Generator:
    """Emits one Python function per container schema node; scalar checks are inlined."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {}
        self.count = 0

    def constant(self, value: Any) -> str:
        name = f"K{len(self.constants)}"
        self.constants[name] = value
        return name

    def function_for(self, schema: Any, depth: int) -> str:
        """The name of a generated function ``f(value) -> normalized copy`` for ``schema``."""
        if depth > _MAX_SCHEMA_DEPTH:
            raise _TooDeep
        self.count += 1
        name = f"n{self.count}"
        kind = schema.get("type")
        if "oneOf" in schema:
            body = self._one_of(schema)
        elif kind is None:
            body = ["return fast_copy(v, 0)"]
        elif kind == "object":
            body = self._object(schema, depth)
        elif kind == "array":
            body = self._array(schema, depth)
        else:
            body = [*self.scalar_check(schema, "v"), "return v"]
        self.lines.append(f"def {name}(v):")
        self.lines.extend("    " + line for line in body)
        return name

    def scalar_check(self, schema: Any, var: str) -> list[str]:
        """Lines that raise ``B`` unless ``var`` matches a scalar schema (type, enum, const)."""
        kind = schema["type"]
        lines: list[str]
        if kind == "string":
            lines = [f"if type({var}) is not str: raise B"]
        elif kind == "boolean":
            lines = [f"if type({var}) is not bool: raise B"]
        elif kind == "null":
            lines = [f"if {var} is not None: raise B"]
        else:
            integral = f" or not {var}.is_integer()" if kind == "integer" else ""
            lines = [
                f"t = type({var})",
                "if t is float:",
                f"    if {var} - {var} != 0.0 or ({var} == 0.0 and copysign(1.0, {var}) < 0.0){integral}: raise B",
                "elif t is int:",
                f"    if not -MAX <= {var} <= MAX: raise B",
                "else: raise B",
            ]
        if "enum" in schema:
            lines.append(f"if {var} not in {self.constant(frozenset(schema['enum']))}: raise B")
        if "const" in schema:
            lines.append(f"if {var} != {self.constant(schema['const'])}: raise B")
        return lines

    def _check_into(self, schema: Any, var: str, depth: int) -> tuple[list[str], str | None]:
        """Lines checking ``var`` in place (scalars), or the function that returns its normalized copy."""
        if "oneOf" not in schema and schema.get("type") in _SCALAR_TYPES:
            return self.scalar_check(schema, var), None
        return [], self.function_for(schema, depth + 1)

    def _object(self, schema: Any, depth: int) -> list[str]:
        properties: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        closed = schema.get("additionalProperties") is False
        lines = [
            "if type(v) is not dict and type(v) is not FD: raise B",
            "for k in v:",
            "    if type(k) is not str: raise B",
            "o = FD(v)",
        ]
        all_required = closed and required == set(properties)
        if all_required:
            lines.append(f"if len(o) != {len(properties)}: raise B")
        elif closed:
            lines.append("found = 0")
        for key, child in properties.items():
            checks, function = self._check_into(child, "x", depth)
            lines.append(f"x = o.get({key!r}, M)")
            if key in required:
                lines.append("if x is M: raise B")
                block: list[str] = []
                indent = ""
            else:
                lines.append("if x is not M:")
                block = []
                indent = "    "
            if closed and not all_required:
                block.append("found += 1")
            block.extend(checks)
            if function is not None:
                block.append(f"setitem(o, {key!r}, {function}(x))")
            lines.extend(indent + line for line in (block or ["pass"]))
        if closed and not all_required:
            lines.append("if found != len(o): raise B")
        if not closed:
            declared = self.constant(frozenset(properties))
            lines.append("for k, x in v.items():")
            lines.append(f"    if k not in {declared}: setitem(o, k, fast_copy(x, 0))")
        needs_reorder = not closed or any(is_array_index(key) for key in properties)
        lines.append("return reorder(o)" if needs_reorder else "return o")
        return lines

    def _array(self, schema: Any, depth: int) -> list[str]:
        lines = ["if type(v) is not list and type(v) is not FL: raise B"]
        items = schema.get("items")
        if items is None:
            return [*lines, "return FL([fast_copy(x, 1) for x in v])"]
        checks, function = self._check_into(items, "x", depth)
        if function is not None:
            return [*lines, f"return FL([{function}(x) for x in v])"]
        return [*lines, "for x in v:", *("    " + line for line in checks), "return FL(v)"]

    def _one_of(self, schema: Any) -> list[str]:
        # exact-one counting is decided by the ordinary validator on the generic copy: never guessed here
        from toolcontract.schema import compile_validator

        branches = [compile_validator(branch).is_valid for branch in schema["oneOf"]]
        name = self.constant(tuple(branches))
        return [
            "c = fast_copy(v, 0)",
            f"if sum(1 for valid in {name} if valid(c)) != 1: raise B",
            "return c",
        ]


class _TooDeep(Exception):
    pass


def compile_normalizer(schema: Any) -> Callable[[Any], Any] | None:
    """A fused normalizer for a schema that passed the subset assertion, or ``None`` if it is too deep.

    Normalizers hold no state, so one is generated per distinct schema text and shared.
    """
    return _GENERATED.get(schema, _generate)


_GENERATED: TextKeyedCache[Callable[[Any], Any] | None] = TextKeyedCache()


def _generate(schema: Any) -> Callable[[Any], Any] | None:
    generator = _Generator()
    try:
        entry = generator.function_for(schema, 0)
    except (_TooDeep, RecursionError):
        return None
    namespace: dict[str, Any] = {
        "B": _Bail,
        "M": _MISSING,
        "FD": FrozenDict,
        "FL": FrozenList,
        "MAX": MAX_SAFE_INTEGER,
        "copysign": math.copysign,
        "fast_copy": _fast_copy,
        "setitem": dict.__setitem__,
        "reorder": in_es_order,
        **generator.constants,
    }
    source = "\n".join(generator.lines)
    exec(compile(source, f"<normalizer {entry}>", "exec"), namespace)
    normalizer: Callable[[Any], Any] = namespace[entry]
    normalizer.__doc__ = source
    return normalizer


_MISSING: Final = object()


def _declines(value: Any) -> Any:
    raise _Bail


class FusedNormalization:
    """A tool's fused normalization, generated once the tool has normalized enough data to repay it.

    Generating and compiling the code costs about a millisecond; a tool that only ever sees a few small values
    (a one-off call, a test scenario) never pays it and keeps the step-by-step path. A large value (a root
    container of more than ``threshold`` items) pays it at once.
    """

    __slots__ = ("_normalizer", "_schema", "_seen", "_threshold")

    def __init__(self, schema: Any, threshold: int = 64) -> None:
        self._schema = schema
        self._normalizer: Callable[[Any], Any] | None = None
        self._seen = 0
        self._threshold = threshold

    def __call__(self, candidate: Any) -> Any:
        """The normalized value, or :class:`NotNormalized` (not generated yet, or declined)."""
        normalizer = self._normalizer
        if normalizer is None:
            kind = type(candidate)
            self._seen += 1 + (len(candidate) if kind is list or kind is dict else 0)
            if self._seen < self._threshold:
                raise _Bail
            normalizer = self._normalizer = compile_normalizer(self._schema) or _declines
        return run_without_gc(normalizer, candidate)
