"""Known disagreements: how ``toolcanon fuzz --known FILE`` tells a known edge case of an implementation from a new one.

A strict baseline lists the scenarios of the suite an implementation is known to fail; a generated scenario has no
id a baseline could list. A *known-disagreements* file says instead what each known disagreement looks like, so
that the fuzzer recognises it in any scenario it draws::

    {"formatVersion": 1,
     "knownDisagreements": [
       {"id": "replay-cuts-the-log", "class": "deviation", "scenario": "replay-malformed-line",
        "reason": "a complete malformed line cuts the log instead of refusing it",
        "intent": {"source": "packages/session/session-persistence/src/index.ts", "quote": "only a torn final …"},
        "holds": [{"damage": {"how": ["malformed-line", "drop", "duplicate", "reorder"]}}],
        "differences": [{"path": "$.steps.*.refused"}, {"path": "$.steps.*.messages"}]}]}

A failure is *known* when every difference between the two transcripts is explained by an entry whose ``holds``
patterns the scenario holds: the difference lies at or under one of the entry's ``differences`` paths (``*``
stands for any one key or index) and each side's JSON text matches the expression given for it, or it lies
under one of the entry's ``reordered`` arrays and the two arrays there hold the same items in another order. An
errored outcome is known when its message matches an entry's ``errored`` expression. Anything else (another
difference beside known ones, a broken invariant, a skip, a hang) is a new failure. Each entry names its
``class`` (``deviation``, ``host-limit`` or ``not-pinned``, ``docs/edge-cases.md`` section 11) and the scenario
of the suite that pins it: the file is kept honest by ``conformance/tests/test_fuzz_known.py``, which runs each
entry's scenario on both sides and requires the entry to recognise what differs.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Any, Final, Literal, TypeAlias

from toolcanon_conformance._schemas import schema_errors
from toolcanon_conformance.deepjson import NESTING_LIMIT, first_too_deep, loads
from toolcanon_conformance.diff import Difference, Path
from toolcanon_conformance.properties import ConformanceFailure

__all__ = [
    "CLASSES",
    "Class",
    "KnownDisagreement",
    "KnownDisagreements",
    "KnownError",
    "counts_by_class",
    "parse_path_pattern",
]

Class: TypeAlias = Literal["deviation", "host-limit", "not-pinned"]
CLASSES: Final[tuple[Class, ...]] = ("deviation", "host-limit", "not-pinned")
"""The classes of a known disagreement, in the order reports give them."""

_WILDCARD: Final = "*"
_PATH_PART: Final = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*|\*)|\[(\d+|\*)\]|\[(\"(?:[^\"\\]|\\.)*\")\]")


class KnownError(ValueError):
    """A known-disagreements file that cannot be read: not JSON, not of its schema, or a bad pattern."""


PathPattern: TypeAlias = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class _DifferencePattern:
    path: PathPattern
    expected: re.Pattern[str] | None
    actual: re.Pattern[str] | None

    def explains(self, difference: Difference) -> bool:
        if not _under(difference.path, self.path):
            return False
        for pattern, text in ((self.expected, difference.expected), (self.actual, difference.actual)):
            if pattern is not None and (text is None or pattern.search(text) is None):
                return False
        return True


@dataclass(frozen=True, slots=True)
class KnownDisagreement:
    """One entry: its id, class, regression scenario, reason, the quoted intent (source, quote) and its patterns."""

    id: str
    cls: Class
    scenario: str
    reason: str
    intent: tuple[str, str] | None
    holds: tuple[Any, ...]
    differences: tuple[_DifferencePattern, ...]
    reordered: tuple[PathPattern, ...]
    errored: re.Pattern[str] | None

    def applies_to(self, scenario: Mapping[str, Any]) -> bool:
        """Whether the scenario holds every ``holds`` pattern somewhere."""
        return all(_holds_somewhere(scenario, pattern) for pattern in self.holds)

    def explains(self, difference: Difference, transcripts: tuple[Any, Any] | None) -> bool:
        """Whether this entry explains one difference (``transcripts``: both parsed, for ``reordered``)."""
        if any(pattern.explains(difference) for pattern in self.differences):
            return True
        if transcripts is None:
            return False
        for pattern in self.reordered:
            prefix = _matching_prefix(difference.path, pattern)
            if prefix is not None and _same_items(transcripts, prefix):
                return True
        return False


@dataclass(frozen=True, slots=True)
class KnownDisagreements:
    """The entries of a known-disagreements file, and where it was read from."""

    entries: tuple[KnownDisagreement, ...]
    source: str = "<known>"

    @classmethod
    def load(cls, file: str | FilePath) -> KnownDisagreements:
        """Read a file, checked against ``schemas/known.schema.json``."""
        try:
            data = loads(FilePath(file).read_text(encoding="utf-8"), max_depth=NESTING_LIMIT)
        except (OSError, ValueError) as error:
            raise KnownError(f"{file}: cannot read the known disagreements: {error}") from None
        return cls.from_json(data, source=str(file))

    @classmethod
    def from_json(cls, data: Any, source: str = "<known>") -> KnownDisagreements:
        """The entries of a parsed file."""
        if first_too_deep(data, NESTING_LIMIT) is not None:
            raise KnownError(f"{source}: not a known-disagreements file: nested deeper than {NESTING_LIMIT} levels")
        errors = schema_errors("known.schema.json", data)
        if errors:
            raise KnownError(f"{source}: not a known-disagreements file: " + "; ".join(errors))
        entries: list[KnownDisagreement] = []
        for item in data["knownDisagreements"]:
            if any(entry.id == item["id"] for entry in entries):
                raise KnownError(f"{source}: {item['id']} is listed twice")
            try:
                entries.append(_entry(item))
            except (ValueError, re.error) as error:
                raise KnownError(f"{source}: {item['id']}: {error}") from None
        return cls(tuple(entries), source)

    def by_id(self, entry_id: str) -> KnownDisagreement:
        """The entry of that id (``KeyError`` when none)."""
        for entry in self.entries:
            if entry.id == entry_id:
                return entry
        raise KeyError(entry_id)

    def classify(self, failure: ConformanceFailure) -> tuple[KnownDisagreement, ...]:
        """The entries that together explain the failure, in file order; empty when it is not (wholly) known."""
        applicable = [entry for entry in self.entries if entry.applies_to(failure.scenario)]
        if failure.kind == "errored":
            message = str(failure.context.get("message", ""))
            return tuple(entry for entry in applicable if entry.errored is not None and entry.errored.search(message))[
                :1
            ]
        if failure.kind != "differs" or not failure.differences:
            return ()
        parsed = _parsed(failure.transcripts)
        used: dict[str, KnownDisagreement] = {}
        for difference in failure.differences:
            entry = next((entry for entry in applicable if entry.explains(difference, parsed)), None)
            if entry is None:
                return ()
            used.setdefault(entry.id, entry)
        return tuple(entry for entry in self.entries if entry.id in used)


def _entry(item: Mapping[str, Any]) -> KnownDisagreement:
    intent = item.get("intent")
    return KnownDisagreement(
        id=item["id"],
        cls=item["class"],
        scenario=item["scenario"],
        reason=item["reason"],
        intent=None if intent is None else (intent["source"], intent["quote"]),
        holds=tuple(item.get("holds", ())),
        differences=tuple(
            _DifferencePattern(
                parse_path_pattern(pattern["path"]),
                None if "expected" not in pattern else re.compile(pattern["expected"]),
                None if "actual" not in pattern else re.compile(pattern["actual"]),
            )
            for pattern in item.get("differences", ())
        ),
        reordered=tuple(parse_path_pattern(text) for text in item.get("reordered", ())),
        errored=None if "errored" not in item else re.compile(item["errored"]),
    )


def parse_path_pattern(text: str) -> PathPattern:
    """``$.steps.*.result[0]`` as its parts, ``*`` standing for any one key or index."""
    rest = text.strip()[1:]
    parts: list[str | int] = []
    position = 0
    while position < len(rest):
        match = _PATH_PART.match(rest, position)
        if match is None:
            raise ValueError(f"not a path pattern: {text!r} (at {rest[position:]!r})")
        name, index, quoted = match.groups()
        if name is not None:
            parts.append(name)
        elif index is not None:
            parts.append(_WILDCARD if index == _WILDCARD else int(index))
        else:
            parts.append(loads(quoted))
        position = match.end()
    return tuple(parts)


def _under(path: Path, pattern: PathPattern) -> bool:
    return _matching_prefix(path, pattern) is not None


def _matching_prefix(path: Path, pattern: PathPattern) -> Path | None:
    """The part of ``path`` that ``pattern`` matches, when ``path`` lies at or under it."""
    if len(path) < len(pattern):
        return None
    for element, wanted in zip(path, pattern, strict=False):
        if wanted not in (_WILDCARD, element):
            return None
    return path[: len(pattern)]


def _parsed(transcripts: tuple[str, str] | None) -> tuple[Any, Any] | None:
    if transcripts is None:
        return None
    try:
        return loads(transcripts[0]), loads(transcripts[1])
    except ValueError:
        return None


def _at(document: Any, path: Path) -> Any:
    for element in path:
        found = isinstance(document, dict) and isinstance(element, str) and element in document
        if not (found or (isinstance(document, list) and isinstance(element, int) and element < len(document))):
            return None
        document = document[element]
    return document


def _same_items(transcripts: tuple[Any, Any], path: Path) -> bool:
    expected, actual = (_at(document, path) for document in transcripts)
    if not isinstance(expected, list) or not isinstance(actual, list):
        return False
    return Counter(map(_item_text, expected)) == Counter(map(_item_text, actual))


def _item_text(item: Any) -> str:
    # Not the canonical writer: a transcript may hold a number the writer refuses (an unsafe integer).
    return json.dumps(item, ensure_ascii=False)


def _holds_somewhere(document: Any, pattern: Any) -> bool:
    return any(_matches(value, pattern) for value in _values(document))


def _values(document: Any) -> Iterator[Any]:
    pending = [document]
    while pending:
        value = pending.pop()
        yield value
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


def _matches(value: Any, pattern: Any) -> bool:
    if isinstance(pattern, dict):
        return isinstance(value, dict) and all(
            key in value and _matches(value[key], wanted) for key, wanted in pattern.items()
        )
    if isinstance(pattern, list):
        return any(_matches(value, choice) for choice in pattern)
    return type(value) is type(pattern) and value == pattern


def counts_by_class(counts: Mapping[str, int], known: KnownDisagreements) -> dict[str, int]:
    """Per class, in :data:`CLASSES` order, how many failures the entries of ``counts`` (id → count) explained."""
    totals: dict[str, int] = {}
    for cls in CLASSES:
        total = sum(count for entry_id, count in counts.items() if known.by_id(entry_id).cls == cls)
        if total:
            totals[cls] = total
    return totals
