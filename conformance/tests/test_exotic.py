"""Exotic tags in Python: every kind of the format is either built or reported not expressible."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from toolcanon_conformance.exotic import PYTHON_INEXPRESSIBLE, NotExpressible, first_inexpressible, materialize
from toolcanon_conformance.scenario import scenario_schema

REPOSITORY = Path(__file__).resolve().parents[2]
KINDS: tuple[str, ...] = tuple(scenario_schema()["$defs"]["exoticKind"]["enum"])

JAVASCRIPT_ONLY = (
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
)


@pytest.mark.parametrize("kind", JAVASCRIPT_ONLY)
def test_javascript_only_kinds_are_not_expressible(kind: str) -> None:
    assert kind in KINDS
    with pytest.raises(NotExpressible, match=f"^not expressible: {re.escape(kind)}$") as raised:
        materialize({"a": [1, {"$exotic": kind}]})
    assert raised.value.kind == kind
    assert first_inexpressible({"steps": [{"call": {"arguments": {"x": {"$exotic": kind}}}}]}) == kind


@pytest.mark.parametrize("kind", [kind for kind in KINDS if kind not in PYTHON_INEXPRESSIBLE])
def test_every_other_kind_has_a_python_value(kind: str) -> None:
    value = materialize({"$exotic": kind})
    assert value != {"$exotic": kind}
    assert first_inexpressible({"v": {"$exotic": kind}}) is None


def test_the_python_column_lists_exactly_the_javascript_only_kinds() -> None:
    assert set(JAVASCRIPT_ONLY) == PYTHON_INEXPRESSIBLE
    assert set(KINDS) >= PYTHON_INEXPRESSIBLE


def test_first_inexpressible_is_in_document_order() -> None:
    document: dict[str, Any] = {"a": {"$exotic": "nan"}, "b": [{"$exotic": "date"}, {"$exotic": "bigint"}]}
    assert first_inexpressible(document) == "date"
    assert math.isnan(materialize({"$exotic": "nan"}))


def test_the_protocol_table_names_every_kind() -> None:
    """docs/protocol.md's table of exotic values defines each kind of the schema, and no other."""
    text = (REPOSITORY / "docs" / "protocol.md").read_text("utf-8")
    section = text.split("### Exotic values", 1)[1]
    table = section.split("| kind | the value it stands for |", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    named = {kind for row in rows for kind in re.findall(r"`([a-z-]+)`", row.split("|")[1])}
    assert named == set(KINDS)
    for row in rows:
        python_column = row.split("|")[3]
        kinds = re.findall(r"`([a-z-]+)`", row.split("|")[1])
        if any(kind in PYTHON_INEXPRESSIBLE for kind in kinds):
            assert "✘" in python_column, row
        else:
            assert "✔" in python_column, row
