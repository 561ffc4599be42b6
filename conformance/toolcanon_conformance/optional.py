"""Optional paths: transcript places where the contract fixes less than one implementation's bytes.

A scenario's ``optional`` lists them (``docs/protocol.md``, "Top-level keys"), each with ``why`` the contract
leaves its bytes open and, with ``must``, the JSON type the value there must still have (with ``prefix``, a
string that must begin with the text the contract fixes, the rest open). A difference at or
under an optional path does not fail the scenario: it is an *optional difference*, reported apart from the
required results. ``must`` is checked whatever the bytes: another type there, or nothing, is a required
difference. Unlike ``ignore`` (host-specific text by nature), ``optional`` is for what the contract leaves open.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, cast

from toolcanon_conformance.diff import Difference, Path, compare, format_path, is_under, parse_path, values_at

__all__ = [
    "JSON_TYPES",
    "JsonType",
    "OptionalDifference",
    "OptionalPath",
    "judge_bytes",
    "optional_paths",
]

JsonType: TypeAlias = Literal["string", "number", "boolean", "null", "object", "array"]
#: The values of an optional entry's ``must``.
JSON_TYPES: Final[tuple[JsonType, ...]] = ("string", "number", "boolean", "null", "object", "array")

_NAMED: Final[dict[str, str]] = {
    "string": "a string",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
    "object": "an object",
    "array": "an array",
}


@dataclass(frozen=True, slots=True)
class OptionalPath:
    """One entry of a scenario's ``optional``: the path, why its bytes are open, the type it must keep."""

    path: Path
    why: str
    must: JsonType | None = None
    prefix: str | None = None

    @property
    def where(self) -> str:
        """The path written as ``$.steps.c.result.error.message``."""
        return format_path(self.path)


@dataclass(frozen=True, slots=True)
class OptionalDifference:
    """A difference at or under an optional path: reported, never failing the scenario."""

    difference: Difference
    optional: OptionalPath

    def __str__(self) -> str:
        return f"{self.difference}\n  optional: {self.optional.why}"


def optional_paths(scenario: Mapping[str, Any]) -> tuple[OptionalPath, ...]:
    """The optional paths of a scenario (already validated)."""
    entries = []
    for entry in scenario.get("optional", ()):
        prefix = entry.get("prefix")
        must = "string" if prefix is not None else entry.get("must")
        path, why = parse_path(str(entry["path"])), str(entry["why"])
        entries.append(OptionalPath(path, why, cast("JsonType | None", must), prefix))
    return tuple(entries)


def judge_bytes(
    golden: bytes, actual: bytes, ignore: Sequence[Path] = (), optional: Sequence[OptionalPath] = ()
) -> tuple[tuple[Difference, ...], tuple[OptionalDifference, ...]]:
    """The required differences of ``actual`` from ``golden``, and, when there is none, the optional ones."""
    if not optional:
        return compare(golden, actual, ignore), ()
    same = golden == actual
    required = () if same else compare(golden, actual, (*ignore, *(entry.path for entry in optional)))
    typed = [entry for entry in optional if entry.must is not None]
    if typed and not (required and required[0].kind == "not-json"):
        # Checked on equal bytes too: a golden is held to the types its scenario fixes.
        required += _type_differences(golden, actual, typed)
    if required or same:
        return required, ()
    found: list[OptionalDifference] = []
    for difference in compare(golden, actual, ignore):
        entry = next((entry for entry in optional if is_under(difference.path, entry.path)), None)
        if entry is None:  # not expected: every other place agrees; judged required all the same
            return (difference,), ()
        found.append(OptionalDifference(difference, entry))
    return (), tuple(found)


def _type_differences(golden: bytes, actual: bytes, typed: Sequence[OptionalPath]) -> tuple[Difference, ...]:
    """A difference for each typed optional path whose value is not of its ``must`` type, or is absent."""
    paths = [entry.path for entry in typed]
    try:
        expected, found = values_at(golden, paths), values_at(actual, paths)
    except ValueError:  # equal bytes that are not JSON: nothing to type (different ones are a not-json difference)
        return ()
    differences: list[Difference] = []
    for entry, wanted, there in zip(typed, expected, found, strict=True):
        if there is not None and there[0] == entry.must and entry.prefix is None:
            continue
        if there is not None and there[0] == entry.must:
            text = json.loads(there[1])
            if text.startswith(entry.prefix):
                continue
            detail = f"must begin with {json.dumps(entry.prefix)}: the contract leaves only the rest open"
            golden_text = None if wanted is None else wanted[1]
            differences.append(Difference(entry.path, "value", golden_text, there[1], detail))
            continue
        must = _NAMED[str(entry.must)]
        golden_text = None if wanted is None else wanted[1]
        if there is None:
            detail = f"must be {must}: the contract leaves its bytes open, not its presence"
            differences.append(Difference(entry.path, "missing", golden_text, None, detail))
        else:
            detail = f"must be {must}, not {_NAMED[there[0]]}: the contract leaves its bytes open, not its type"
            differences.append(Difference(entry.path, "type", golden_text, there[1], detail))
    return tuple(differences)
