"""Fuzz target ``scenario``: loading a scenario file (``toolcanon_conformance.scenario``).

The input is the bytes of one ``*.json`` file in an otherwise empty directory. ``load_scenarios`` must return
the scenario or raise :class:`ScenarioError`; a scenario it accepts must validate again from its parsed data,
and a second file declaring the same id must be refused with :class:`ScenarioError`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from fuzz import seeds
from fuzz.mutation import JSON_TOKENS
from fuzz.target import ACCEPTED, PropertyViolation, Target, rejected
from toolcanon_conformance.scenario import ScenarioError, iter_exotic_tags, load_scenarios, scenario_from_data

__all__ = ["TARGET", "check"]

_SCRATCH: Final = "/dev/shm" if Path("/dev/shm").is_dir() else None


def check(data: bytes) -> str:
    """Load a directory holding one scenario file made of ``data``."""
    with tempfile.TemporaryDirectory(prefix="toolcanon-fuzz-", dir=_SCRATCH) as name:
        folder = Path(name)
        (folder / "a.json").write_bytes(data)
        try:
            loaded = load_scenarios(folder)
        except ScenarioError as error:
            return rejected(error)
        if len(loaded) != 1 or not isinstance(loaded[0].id, str):
            raise PropertyViolation(f"one file loaded as {loaded!r}")
        scenario = loaded[0]
        scenario_from_data(scenario.data, "<again>")
        for tag in iter_exotic_tags(scenario.data):
            if "$exotic" not in tag:
                raise PropertyViolation(f"iter_exotic_tags yielded {tag!r}")
        (folder / "b.json").write_bytes(data)
        try:
            load_scenarios(folder)
        except ScenarioError as error:
            if error.json_path != "$.id":
                raise PropertyViolation(f"a duplicate id is refused at {error.json_path}, not $.id") from None
        else:
            raise PropertyViolation("two files declaring one id both load")
    return ACCEPTED


def _seeds() -> Iterator[bytes]:
    yield from seeds.scenario_texts()


TARGET = Target(
    name="scenario",
    summary="toolcanon_conformance.scenario.load_scenarios on a directory holding one fuzzed file",
    check=check,
    seeds=_seeds,
    tokens=JSON_TOKENS,
)
