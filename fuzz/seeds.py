"""Seed inputs from the project's own data: scenario files, golden transcripts and the test vectors."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Final

from toolcanon.session import parse_model_arguments

__all__ = [
    "ROOT",
    "documents",
    "golden_texts",
    "in_chunks",
    "logged_events",
    "scenario_texts",
    "vector_numbers",
    "vector_objects",
    "vector_strings",
]

ROOT: Final = Path(__file__).resolve().parent.parent
"""The checkout the fuzz targets belong to."""


def _files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).glob("*.json"), key=lambda path: path.name)


@cache
def scenario_texts() -> tuple[bytes, ...]:
    """The bytes of every scenario file in ``fixtures/scenarios``."""
    return tuple(path.read_bytes() for path in _files("fixtures/scenarios"))


@cache
def golden_texts() -> tuple[bytes, ...]:
    """The bytes of every golden transcript in ``snapshots/scenarios``."""
    return tuple(path.read_bytes() for path in _files("snapshots/scenarios"))


def _parsed(texts: tuple[bytes, ...]) -> Iterator[Any]:
    # A golden of a value 100,000 levels deep is too deep for the recursive parser, and for the targets that take
    # these seeds: their mutations are about shape, so such a golden is left out.
    for text in texts:
        try:
            yield json.loads(text)
        except RecursionError:
            continue


def documents() -> Iterator[Any]:
    """Every scenario and golden transcript (but those nested too deep for recursion), parsed."""
    yield from _parsed(scenario_texts() + golden_texts())


def _event_lists(value: Any) -> Iterator[list[dict[str, Any]]]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            events = item.get("events")
            if isinstance(events, list) and all(isinstance(e, dict) and "type" in e for e in events):
                yield events
            else:
                stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def logged_events() -> Iterator[list[dict[str, Any]]]:
    """The session-log events (``type`` and ``data``) the goldens record, one list per log."""
    for text in golden_texts():
        try:
            json.loads(text)  # a golden too deep for the recursive parser is left out, as documents() does
        except RecursionError:
            continue
        # read as JSON.parse reads it: 100000000000000000000 in a golden is the double 1e20, not an unsafe int
        yield from _event_lists(parse_model_arguments(text))


@cache
def _vectors() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ROOT / "fixtures/vectors/ecmascript-json.json").read_bytes())
    return loaded


def vector_numbers() -> list[float]:
    """The doubles of ``fixtures/vectors/ecmascript-json.json``."""
    return [struct.unpack(">d", bytes.fromhex(entry["bits"]))[0] for entry in _vectors()["numbers"]]


def vector_strings() -> list[str]:
    """The strings (UTF-16 code units, lone surrogates included) of the same vectors."""
    return [
        b"".join(unit.to_bytes(2, "little") for unit in entry["utf16"]).decode("utf-16-le", "surrogatepass")
        for entry in _vectors()["strings"]
    ]


def vector_objects() -> list[Any]:
    """The objects of the same vectors, keys in insertion order, and the values of their indent cases."""
    objects: list[Any] = [
        {key: position for position, key in enumerate(entry["insertion"])} for entry in _vectors()["objects"]
    ]
    return objects + [entry["value"] for entry in _vectors()["indent"]]


def in_chunks(items: list[Any], size: int = 64) -> list[list[Any]]:
    """``items`` cut into lists of at most ``size`` (what one container of a fuzz program holds)."""
    return [items[start : start + size] for start in range(0, len(items), size)]
