"""The fused normalizer: one walk that checks losslessness, validates and builds the frozen copy.

For a schema of the supported subset, :func:`compile_normalizer` generates (once, at registration) Python code
specialised to that schema. The generated function either returns exactly what the contract's three steps —
snapshot, validate, freeze — would produce for a valid lossless value, or raises :class:`NotNormalized`, in
which case the caller takes the ordinary path that reports the contract's exact messages. It never decides that
a value is invalid: it only declines, so messages and their order come from one place, the validator.

:class:`FusedNormalization` is a tool's whole value normalization: the fused walk once it pays off, and for a
value it declines, the validator's findings on the value itself (no copy) or, before, the step-by-step path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from toolcanon._collector import without_collector
from toolcanon._text_cache import TextKeyedCache
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import (
    MAX_SAFE_INTEGER,
    NotLosslessJson,
    _Bail,
    _fast_copy,
    in_es_order,
    is_array_index,
    snapshot_json,
)

__all__ = ["NOT_LOSSLESS", "FusedNormalization", "NotNormalized", "OutputRejected", "compile_normalizer"]

NotNormalized = _Bail
"""Raised by a generated normalizer when the value needs the ordinary (message-producing) path."""

NOT_LOSSLESS: Final = "value is not lossless JSON"
"""The one violation of a candidate value that is not lossless JSON (digest 4.1 step 1)."""

# Schemas nested deeper than this are not fused: the generated code recurses once per schema level.
_MAX_SCHEMA_DEPTH: Final = 64
# An object with more properties than this is checked by a loop over a table, not by one statement block per
# property: compiling a function body is superlinear in its length.
_UNROLLED_PROPERTIES: Final = 32
_SCALAR_TYPES: Final = frozenset({"string", "number", "integer", "boolean", "null"})
# a scalar is normalized in no time: pausing the collector for it would cost more than it saves
_CONTAINERS: Final = frozenset({dict, list, FrozenDict, FrozenList})


class OutputRejected(Exception):
    """A candidate value is not valid output; ``violations`` are the contract's messages, in order."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("; ".join(violations))
        self.violations = violations


class _Generator:
    """Emits one Python function per container schema node; scalar checks are inlined.

    The properties of a wide object are checked by one loop over a table instead, with one shared check
    function per distinct scalar schema, so the generated code stays short whatever the schema's width.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {}
        self.count = 0
        self.scalar_checks: dict[str, str] = {}
        self.tables: list[str] = []

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
        self._emit(name, body)
        return name

    def _emit(self, name: str, body: list[str]) -> None:
        self.lines.append(f"def {name}(v):")
        self.lines.extend("    " + line for line in body)

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

    def shared_scalar_check(self, schema: Any) -> str:
        """The name of a function ``c(value) -> value`` that raises ``B`` unless ``value`` matches ``schema``."""
        kind = schema["type"]
        constrained = "enum" in schema or "const" in schema
        key = repr((kind, schema.get("enum"), "const" in schema, schema.get("const"))) if constrained else kind
        name = self.scalar_checks.get(key)
        if name is None:
            name = self.scalar_checks[key] = f"c{len(self.scalar_checks)}"
            self._emit(name, [*self.scalar_check(schema, "v"), "return v"])
        return name

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
        counts = closed and not all_required
        if len(properties) > _UNROLLED_PROPERTIES:
            lines.extend(self._property_table(properties, required, counts, depth))
        else:
            lines.extend(self._unrolled_properties(properties, required, counts, depth))
        if closed and not all_required:
            lines.append("if found != len(o): raise B")
        if not closed:
            declared = self.constant(frozenset(properties))
            lines.append("for k, x in v.items():")
            lines.append(f"    if k not in {declared}: setitem(o, k, fast_copy(x, 0))")
        needs_reorder = not closed or any(is_array_index(key) for key in properties)
        lines.append("return reorder(o)" if needs_reorder else "return o")
        return lines

    def _unrolled_properties(
        self, properties: dict[str, Any], required: set[str], counts: bool, depth: int
    ) -> list[str]:
        lines: list[str] = []
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
            if counts:
                block.append("found += 1")
            block.extend(checks)
            if function is not None:
                block.append(f"setitem(o, {key!r}, {function}(x))")
            lines.extend(indent + line for line in (block or ["pass"]))
        return lines

    def _property_table(self, properties: dict[str, Any], required: set[str], counts: bool, depth: int) -> list[str]:
        rows = []
        for key, child in properties.items():
            copies = "oneOf" in child or child.get("type") not in _SCALAR_TYPES
            name = self.function_for(child, depth + 1) if copies else self.shared_scalar_check(child)
            rows.append((key, key in required, name, copies))
        # the rows name their functions; _generate binds the names once the functions exist
        table = self.constant(tuple(rows))
        lines = [
            f"for k, needed, f, copies in {table}:",
            "    x = o.get(k, M)",
            "    if x is M:",
            "        if needed: raise B",
            "        continue",
        ]
        if counts:
            lines.append("    found += 1")
        lines.extend(["    if copies: setitem(o, k, f(x))", "    else: f(x)"])
        self.tables.append(table)
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
        from toolcanon.schema import compile_validator

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
    return without_collector(_generate_code, schema)


def _generate_code(schema: Any) -> Callable[[Any], Any] | None:
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
    for table in generator.tables:
        rows = namespace[table]
        namespace[table] = tuple((key, needed, namespace[name], copies) for key, needed, name, copies in rows)
    normalizer: Callable[[Any], Any] = namespace[entry]
    normalizer.__doc__ = source
    return normalizer


_MISSING: Final = object()


def _declines(value: Any) -> Any:
    raise _Bail


class FusedNormalization:
    """A tool's value normalization (digest 4.1 steps 1-3), fused once the tool has normalized enough data.

    Generating and compiling the code costs about a millisecond; a tool that only ever sees a few small values
    (a one-off call, a test scenario) never pays it and keeps the step-by-step path. A large value (a root
    container of more than ``threshold`` items) pays it at once.
    """

    __slots__ = ("_normalizer", "_schema", "_seen", "_threshold", "_validator")

    def __init__(self, schema: Any, threshold: int = 64) -> None:
        from toolcanon.schema import compile_validator

        self._schema = schema
        self._validator = compile_validator(schema)
        self._normalizer: Callable[[Any], Any] | None = None
        self._seen = 0
        self._threshold = threshold

    def __call__(self, candidate: Any) -> Any:
        """The fused walk's normalized value, or :class:`NotNormalized` (not generated yet, or declined)."""
        normalizer = self._generated(candidate)
        if normalizer is None:
            raise _Bail
        if type(candidate) in _CONTAINERS:
            return without_collector(normalizer, candidate)
        return normalizer(candidate)

    def normalize(self, candidate: Any) -> Any:
        """The normalized value: the snapshot of a valid lossless ``candidate``; else :class:`OutputRejected`.

        The fused walk returns a valid value at once. When it declines, one walk over the candidate, without
        copying it, finds the contract's messages and whether it is lossless at all (a candidate that is not
        lossless JSON has that one violation, whatever else is wrong), so an invalid value costs little more than
        a valid one.
        """
        if type(candidate) in _CONTAINERS:
            return without_collector(self._normalize, candidate)
        return self._normalize(candidate)

    def _generated(self, candidate: Any) -> Callable[[Any], Any] | None:
        """The generated normalizer, generated once enough data was seen (``None`` before that)."""
        normalizer = self._normalizer
        if normalizer is None:
            kind = type(candidate)
            self._seen += 1 + (len(candidate) if kind is list or kind is dict else 0)
            if self._seen < self._threshold:
                return None
            normalizer = self._normalizer = compile_normalizer(self._schema) or _declines
        return normalizer

    def _normalize(self, candidate: Any) -> Any:
        normalizer = self._generated(candidate)
        if normalizer is not None and normalizer is not _declines:
            try:
                return normalizer(candidate)
            except (_Bail, RecursionError):
                pass
            # the walk declined a value of the shape it was generated for: most likely an invalid one
            verdict = self._validator.violations_if_lossless(candidate, "value")
            if verdict is None:
                raise OutputRejected([NOT_LOSSLESS])
            if verdict:
                raise OutputRejected(verdict)
            return _snapshot(candidate)  # valid, but deeper than the walk goes
        value = _snapshot(candidate)
        violations = self._validator.violations(value, "value")
        if violations:
            raise OutputRejected(violations)
        return value


def _snapshot(candidate: Any) -> Any:
    try:
        return snapshot_json(candidate)
    except NotLosslessJson:
        raise OutputRejected([NOT_LOSSLESS]) from None
