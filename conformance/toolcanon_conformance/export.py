"""``toolcanon cases --export DIR``: the scenarios and their goldens, copied out of the installed kit.

An implementation in another language can then run the suite with its own test runner, from files in its own
repository: ``DIR/scenarios/<id>.json`` (the scenario files, byte for byte), ``DIR/goldens/<id>.json`` (their
golden transcripts, byte for byte) and ``DIR/schemas/*.schema.json`` (the JSON Schemas of the scenario format,
the transcript, the protocol messages, baselines and reports). A scenario without a golden is copied alone.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from toolcanon_conformance.scenario import Scenario

__all__ = ["ExportError", "Exported", "destination_problem", "export_cases"]


class ExportError(ValueError):
    """The export cannot be written where it was asked to (a usage error)."""


@dataclass(frozen=True, slots=True)
class Exported:
    """The files written, each relative to the export's folder, by kind."""

    scenarios: tuple[Path, ...]
    goldens: tuple[Path, ...]
    schemas: tuple[Path, ...]

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file written, scenarios first, then goldens, then schemas."""
        return self.scenarios + self.goldens + self.schemas


def destination_problem(destination: Path, *, force: bool) -> str | None:
    """Why files cannot be written into ``destination`` as the kit's writing commands do, or ``None``: it may be
    missing (then it is created) or an empty folder; one that holds anything only with ``force``."""
    if destination.exists() and not destination.is_dir():
        return f"{destination} is not a folder"
    if destination.is_dir() and any(destination.iterdir()) and not force:
        return f"{destination} is not empty (--force writes into it anyway)"
    return None


def export_cases(scenarios: Sequence[Scenario], goldens: Path, destination: Path, *, force: bool = False) -> Exported:
    """Copy ``scenarios`` (each from its source file), their goldens from ``goldens`` and the kit's schemas
    into ``destination``.

    ``destination`` may not exist yet (it is created, parents too) or be an empty folder; one that holds
    anything is refused with :class:`ExportError` unless ``force``, and then files of the same name are
    replaced and others left alone.
    """
    problem = destination_problem(destination, force=force)
    if problem is not None:
        raise ExportError(problem)
    written_scenarios: list[Path] = []
    written_goldens: list[Path] = []
    try:
        for folder in ("scenarios", "goldens", "schemas"):
            (destination / folder).mkdir(parents=True, exist_ok=True)
        for scenario in scenarios:
            if scenario.source is None:
                raise ExportError(f"scenario {scenario.id} has no source file to copy")
            name = f"{scenario.id}.json"
            shutil.copyfile(scenario.source, destination / "scenarios" / name)
            written_scenarios.append(Path("scenarios") / name)
            golden = goldens / name
            if golden.is_file():
                shutil.copyfile(golden, destination / "goldens" / name)
                written_goldens.append(Path("goldens") / name)
        schemas = _copy_schemas(destination / "schemas")
    except OSError as error:
        raise ExportError(f"cannot write {destination}: {error}") from None
    return Exported(tuple(written_scenarios), tuple(written_goldens), schemas)


def _copy_schemas(folder: Path) -> tuple[Path, ...]:
    written: list[Path] = []
    source = resources.files("toolcanon_conformance").joinpath("schemas")
    for entry in sorted(source.iterdir(), key=lambda item: item.name):
        if entry.name.endswith(".schema.json"):
            (folder / entry.name).write_bytes(entry.read_bytes())
            written.append(Path("schemas") / entry.name)
    return tuple(written)
