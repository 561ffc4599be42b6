"""What mutmut found for each mutant, read from the ``.meta`` files it leaves beside each mutated module."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from mutation.errors import MutationError
from mutation.targets import PACKAGE, module_of

__all__ = ["STATUSES", "Outcome", "Status", "function_of", "read_hashes", "read_outcomes", "status_of"]

Status: TypeAlias = Literal["killed", "survived", "timeout", "no tests", "other"]
STATUSES: Final[tuple[Status, ...]] = ("killed", "survived", "timeout", "no tests", "other")

#: mutmut 3's exit codes of a mutant's test run (``mutmut.stats.status_by_exit_code``), as this run counts them:
#: pytest's 1 (a test failed) and 3 (an internal error) kill; 0 survives; 5 and mutmut's 33 mean no test reached
#: the mutant; mutmut's 36 and a CPU-limit signal are a timeout. Anything else (a segfault, a kill, a code
#: mutmut calls suspicious, a mutant not checked) is ``other``.
_BY_EXIT_CODE: Final[Mapping[int | None, tuple[Status, str]]] = {
    1: ("killed", "killed"),
    3: ("killed", "killed"),
    0: ("survived", "survived"),
    5: ("no tests", "no tests"),
    33: ("no tests", "no tests"),
    36: ("timeout", "timeout"),
    -24: ("timeout", "timeout"),
    24: ("timeout", "timeout"),
    152: ("timeout", "timeout"),
    255: ("timeout", "timeout"),
    -11: ("other", "segfault"),
    -9: ("other", "segfault"),
    2: ("other", "interrupted"),
    34: ("other", "skipped"),
    37: ("other", "caught by type check"),
    None: ("other", "not checked"),
}


def status_of(exit_code: int | None) -> tuple[Status, str]:
    """The status of a mutant whose test run exited with ``exit_code``, and mutmut's own name for it."""
    return _BY_EXIT_CODE.get(exit_code, ("other", "suspicious"))


def function_of(mutant: str) -> str:
    """The mutated function's key in mutmut's hashes: ``x_name`` or ``xǁClassǁmethod``."""
    return mutant.rpartition(".")[2].partition("__mutmut_")[0]


@dataclass(frozen=True, slots=True)
class Outcome:
    """One mutant's result: its status, mutmut's name for it, and the hash of the function it mutates."""

    name: str
    status: Status
    detail: str
    exit_code: int | None
    seconds: float
    function_hash: str

    @property
    def module(self) -> str:
        """The module the mutant is in."""
        return module_of(self.name)

    def report(self) -> dict[str, Any]:
        """The outcome as the JSON report lists it."""
        return {
            "name": self.name,
            "module": self.module,
            "status": self.status,
            "mutmut": self.detail,
            "exitCode": self.exit_code,
            "seconds": round(self.seconds, 3),
            "function": self.function_hash,
        }


def _meta_files(mutants: Path) -> Iterator[Path]:
    yield from sorted((mutants / "src" / PACKAGE).glob("*.py.meta"))


def read_hashes(mutants: Path) -> dict[str, str]:
    """The hash of every mutated function, by module-qualified key (``_fused.x_walk``)."""
    hashes: dict[str, str] = {}
    for path in _meta_files(mutants):
        module = path.name.removesuffix(".py.meta")
        for function, digest in _load(path).get("hash_by_function_name", {}).items():
            hashes[f"{module}.{function}"] = str(digest)
    return hashes


def read_outcomes(mutants: Path, names: Collection[str]) -> list[Outcome]:
    """The outcome of each of ``names``, in their order, from the ``.meta`` files under ``mutants``.

    A name no ``.meta`` file knows means mutmut made other mutants than were sampled: an error.
    """
    exit_codes: dict[str, int | None] = {}
    durations: dict[str, float] = {}
    for path in _meta_files(mutants):
        meta = _load(path)
        exit_codes.update(meta.get("exit_code_by_key", {}))
        durations.update(meta.get("durations_by_key", {}))
    hashes = read_hashes(mutants)
    unknown = [name for name in names if name not in exit_codes]
    if unknown:
        raise MutationError(
            f"mutmut made no mutant {unknown[0]} (and {len(unknown) - 1} more sampled ones): "
            "the mutants were listed with another mutmut than the one that ran"
        )
    outcomes = []
    for name in names:
        code = exit_codes[name]
        status, detail = status_of(code)
        function = f"{module_of(name)}.{function_of(name)}"
        outcomes.append(Outcome(name, status, detail, code, float(durations.get(name, 0.0)), hashes.get(function, "")))
    return outcomes


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MutationError(f"{path}: cannot be read as mutmut's results: {error}") from None
    if not isinstance(data, dict):
        raise MutationError(f"{path}: not mutmut's results (not a JSON object)")
    return data
