"""The triage of surviving mutants (``mutation/triage.json``): equivalent, needs a scenario, or a unit test.

An **equivalent** mutant behaves as the original does for every input: no test can kill it, so the score
leaves it out. A mutant **needs a scenario** when the contract says what it breaks but no scenario looks
there (filed under the blind spot it falls in); it is a **unit test**'s when it changes a detail of the Python
API that no language-neutral scenario can see. Each entry records the hash of the function it mutates (mutmut's
``hash_by_function_name``): a mutant name is stable only while its function is unchanged, so an entry whose
function changed is stale and counts as untriaged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from mutation.errors import MutationError
from mutation.outcomes import function_of
from mutation.targets import module_of

__all__ = ["BLIND_SPOTS", "TRIAGE_FILE", "VERDICTS", "Triage", "TriageError", "Verdict", "current", "load_triage"]

Verdict: TypeAlias = Literal["equivalent", "needs a scenario", "unit test"]
VERDICTS: Final[tuple[Verdict, ...]] = ("equivalent", "needs a scenario", "unit test")

BLIND_SPOTS: Final = (
    "size/depth/fused fast path",
    "deep schema",
    "what code receives",
    "key order",
    "identity",
    "log bytes/damaged logs",
    "step runner",
    "execution mode",
    "hook removal",
    "non-string deny reason",
    "wrapper signal replacement",
    "number boundaries",
    "other",
)
"""Where a mutant that needs a scenario falls: what the scenarios do not yet look at."""

TRIAGE_FILE: Final = Path(__file__).resolve().parent / "triage.json"


class TriageError(MutationError):
    """The triage file is malformed: the message names the entry and what is wrong."""


@dataclass(frozen=True, slots=True)
class Triage:
    """One triaged mutant."""

    name: str
    verdict: Verdict
    why: str
    function_hash: str
    blind_spot: str | None = None

    @property
    def function_key(self) -> str:
        """The mutated function, module-qualified (``_fused.x_walk``), as :func:`read_hashes` keys it."""
        return f"{module_of(self.name)}.{function_of(self.name)}"


def load_triage(path: Path = TRIAGE_FILE) -> dict[str, Triage]:
    """Every entry of a triage file, by mutant name."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TriageError(f"{path}: cannot be read: {error}") from None
    mutants = data.get("mutants") if isinstance(data, dict) else None
    if not isinstance(mutants, dict):
        raise TriageError(f"{path}: not a triage file (no object at $.mutants)")
    return {name: _entry(path, name, entry) for name, entry in mutants.items()}


def _entry(path: Path, name: str, entry: Any) -> Triage:
    where = f"{path}: $.mutants[{name!r}]"
    try:
        module_of(name)
    except ValueError as error:
        raise TriageError(f"{where}: {error}") from None
    if not isinstance(entry, dict):
        raise TriageError(f"{where}: not an object")
    unknown = set(entry) - {"verdict", "why", "function", "blindSpot"}
    if unknown:
        raise TriageError(f"{where}: unknown member {sorted(unknown)[0]!r}")
    verdict, why, function, blind_spot = (entry.get(key) for key in ("verdict", "why", "function", "blindSpot"))
    if verdict not in VERDICTS:
        raise TriageError(f"{where}.verdict: {verdict!r} is not one of {', '.join(VERDICTS)}")
    if not isinstance(why, str) or not why.strip():
        raise TriageError(f"{where}.why: says nothing")
    if not isinstance(function, str) or not function:
        raise TriageError(f"{where}.function: not the hash of the mutated function")
    if verdict == "needs a scenario":
        if blind_spot not in BLIND_SPOTS:
            raise TriageError(f"{where}.blindSpot: {blind_spot!r} is not one of {', '.join(BLIND_SPOTS)}")
    elif blind_spot is not None:
        raise TriageError(f"{where}.blindSpot: only a mutant that needs a scenario has one")
    return Triage(name, verdict, why, function, blind_spot)


def current(triage: Mapping[str, Triage], hashes: Mapping[str, str]) -> tuple[dict[str, Triage], list[Triage]]:
    """The entries whose function is unchanged (by name), and the stale ones: their function changed or is
    not among ``hashes`` (a function not mutated in this run is neither)."""
    valid: dict[str, Triage] = {}
    stale: list[Triage] = []
    for name, entry in triage.items():
        digest = hashes.get(entry.function_key)
        if digest is None:
            continue
        if digest == entry.function_hash:
            valid[name] = entry
        else:
            stale.append(entry)
    return valid, stale
