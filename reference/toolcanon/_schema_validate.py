"""The subset validator: a supported schema compiled once, then run on any value (digest 1.25-1.32)."""

from __future__ import annotations

from toolcanon._collector import without_collector
from toolcanon._schema_closures import Findings, compile_closures
from toolcanon._schema_deep import CLOSURE_HEIGHT, collect_iteratively, valid_iteratively
from toolcanon._schema_kinds import is_lossless
from toolcanon._schema_nodes import SchemaNode, build_nodes
from toolcanon._schema_subset import schema_violations
from toolcanon._text_cache import TextKeyedCache
from toolcanon.errors import JsonSchemaError
from toolcanon.jsonvalue import JsonValue

__all__ = ["Validator", "compile_validator"]

_VALIDATORS: TextKeyedCache[Validator] = TextKeyedCache()


class Validator:
    """A compiled subset schema. Build it with :func:`compile_validator`, once per schema.

    Total: neither method raises, whatever the value (NaN, tuples, unknown objects, cycles, deep nesting). A
    value that is not lossless JSON is reported where the contract says (digest 1.26-1.31).
    """

    __slots__ = ("_collect", "_node", "_shallow", "_valid")

    def __init__(self, node: SchemaNode) -> None:
        self._node = node
        self._valid = node.valid
        self._collect = node.collect
        self._shallow = node.depth <= CLOSURE_HEIGHT

    def violations(self, value: object, root: str = "value") -> list[str]:
        """Every violation of ``value``, in the contract's order; ``[]`` when it is valid.

        ``root`` labels the value in messages (``"value"`` for tool output). The empty root ``""`` is for
        arguments: it renders as ``arguments`` and its properties as bare ``key`` (digest 1.25).
        """
        if self._shallow:
            try:
                if self._valid(value):
                    return []
                out: list[str] = []
                self._collect(value, root, out)
                return out
            except Exception:
                # Only a RecursionError (a caller already deep in the stack) lands here in practice.
                pass
        elif without_collector(self._deep_valid, value):
            return []
        return without_collector(collect_iteratively, self._node, value, root)

    def _deep_valid(self, value: object) -> bool | None:
        """The tall schema's boolean check (``None``: unsure), its memory a fraction of the reporting walk's."""
        try:
            return valid_iteratively(self._node, value)
        except Exception:
            return None  # a RecursionError of the closures, a caller already deep in the stack

    def violations_if_lossless(self, value: object, root: str = "value") -> list[str] | None:
        """The violations that ``value``'s snapshot has, found on ``value`` itself; ``None`` if it is not lossless.

        For a value expected to be invalid: one walk, no copy, none of the value's own code run, and only the
        parts holding a violation checked for losslessness (see :class:`Findings`).
        """
        if self._shallow:
            findings = Findings()
            try:
                self._collect(value, root, findings)
            except Exception:
                pass  # a RecursionError: the caller is already deep in the stack
            else:
                return list(findings) if findings.lossless else None
        if not is_lossless(value):
            return None
        return self.violations(value, root)

    def is_valid(self, value: object) -> bool:
        """True when ``value`` has no violation (the fast path: nothing is allocated)."""
        if self._shallow:
            try:
                return self._valid(value)
            except Exception:
                pass
        else:
            verdict = without_collector(self._deep_valid, value)
            if verdict is not None:
                return verdict
        return not without_collector(collect_iteratively, self._node, value, "value")


def compile_validator(schema: JsonValue) -> Validator:
    """Compile a raw schema of the supported subset into a :class:`Validator`.

    Raises :class:`JsonSchemaError` (every violation) when the schema is outside the subset: the validator's
    behaviour is defined only for supported schemas. Validators hold no state, so one is compiled per distinct
    schema text and shared.
    """
    return _VALIDATORS.get(schema, _compile)


def _compile(schema: JsonValue) -> Validator:
    # one node and two closures per schema object, all kept: a large schema would trigger full collections
    return without_collector(_compile_nodes, schema)


def _compile_nodes(schema: JsonValue) -> Validator:
    violations = schema_violations(schema)
    if violations:
        raise JsonSchemaError(violations)
    root, nodes = build_nodes(schema)
    for node in nodes:
        compile_closures(node)
    return Validator(root)
