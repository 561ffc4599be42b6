"""Running ``mutmut run`` on the sampled mutants of a scratch project, with a progress line now and then.

mutmut redraws one status line in place (``\\r``), which shows nothing useful in a log; this reads its output,
keeps all of it in ``mutmut.log`` beside the project, and prints the phases it goes through and, every
``interval`` seconds, how many mutants are done, what became of them, and the rate.
"""

from __future__ import annotations

import codecs
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from mutation.errors import MutationError

__all__ = ["Progress", "RunTimes", "parse_progress", "phase_of", "run_mutmut"]

_PROGRESS: Final = re.compile(
    r"(?P<done>\d+)/(?P<total>\d+)\s+🎉 (?P<killed>\d+) 🫥 (?P<no_tests>\d+)\s+⏰ (?P<timeout>\d+)"
    r"\s+🤔 (?P<suspicious>\d+)\s+🙁 (?P<survived>\d+)"
)
_SPINNER: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_PHASES: Final = (
    "Generating mutants",
    "Running stats",
    "Listing all tests",
    "Running clean tests",
    "Running forced fail test",
    "Running mutation testing",
)
#: What mutmut prints when the set-up cannot measure anything, and what it means here.
_FAILURES: Final = {
    "Failed to run clean test": "the unmutated tests fail in the scratch project",
    "Unable to force test failures": (
        "a deliberately broken reference was not caught: the tests do not import mutmut's mutated copy"
    ),
    "failed to collect stats": "the tests fail (or cannot be collected) in the scratch project",
    "could not find any test case for any mutant": "no test reaches any mutated function",
    "none match any mutant key": "the tests import the reference under another module path than mutmut's",
}


@dataclass(frozen=True, slots=True)
class Progress:
    """One status line of mutmut: mutants done (of every mutant it made), and by outcome so far."""

    done: int
    killed: int
    survived: int
    timeout: int
    no_tests: int
    suspicious: int


def parse_progress(line: str) -> Progress | None:
    """The progress a mutmut status line reports (``None`` for any other line)."""
    match = _PROGRESS.search(line)
    if match is None:
        return None
    number = {key: int(value) for key, value in match.groupdict().items()}
    return Progress(
        number["done"], number["killed"], number["survived"], number["timeout"], number["no_tests"],
        number["suspicious"],
    )  # fmt: skip


def phase_of(line: str) -> str | None:
    """The phase a mutmut line starts (``Running stats``, …), or ``None``."""
    text = line.strip().lstrip(_SPINNER).strip()
    return next((phase for phase in _PHASES if text.startswith(phase)), None)


@dataclass(frozen=True, slots=True)
class RunTimes:
    """How long a mutmut run took: in all, and testing mutants (after the set-up: stats, clean run)."""

    seconds: float
    mutation_seconds: float


def run_mutmut(
    project: Path,
    names: Sequence[str],
    *,
    label: str,
    jobs: int,
    echo: Callable[[str], None] = print,
    interval: float = 15.0,
) -> RunTimes:
    """Run mutmut on ``names`` in ``project``; raises :class:`MutationError` when mutmut fails."""
    mutmut = Path(sys.executable).parent / "mutmut"  # the one installed beside this interpreter
    command = [str(mutmut) if mutmut.is_file() else "mutmut", "run", "--max-children", str(jobs), *names]
    env = {key: value for key, value in os.environ.items() if key != "MUTANT_UNDER_TEST"}
    env.setdefault("HYPOTHESIS_PROFILE", "ci")  # derandomized, no example database: a run is reproducible
    log = project.parent / f"{project.name}-mutmut.log"
    began = time.monotonic()
    testing_began: float | None = None
    last_shown = began
    phase: str | None = None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    with log.open("w", encoding="utf-8") as record:
        process = subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert process.stdout is not None
        while chunk := os.read(process.stdout.fileno(), 65536):
            text = decoder.decode(chunk)
            record.write(text)
            pending += text
            *lines, pending = re.split(r"[\r\n]", pending)
            for line in lines:
                started = phase_of(line)
                if started is not None and started != phase:
                    phase = started
                    if phase == "Running mutation testing":
                        testing_began = time.monotonic()
                    echo(f"[{label}] {phase} …")
                progress = parse_progress(line)
                now = time.monotonic()
                if progress is not None and testing_began is not None and now - last_shown >= interval:
                    last_shown = now
                    echo(f"[{label}] {_progress_text(progress, len(names), now - testing_began)}")
                elif "mutations/second" in line:
                    echo(f"[{label}] mutmut: {line.strip()}")
        returncode = process.wait()
    ended = time.monotonic()
    if returncode != 0:
        output = log.read_text(encoding="utf-8")
        reason = next((why for marker, why in _FAILURES.items() if marker in output), "mutmut failed")
        tail = "\n".join(line[:300] for line in output.replace("\r", "\n").splitlines()[-40:])
        raise MutationError(f"{label}: {reason} (mutmut exited {returncode}; whole output: {log})\n{tail}")
    return RunTimes(ended - began, ended - (testing_began or ended))


def _progress_text(progress: Progress, total: int, seconds: float) -> str:
    rate = progress.done / seconds if seconds > 0 else 0.0
    # no time left is promised: mutmut tries the mutants whose tests are quickest first, the slow ones last
    return (
        f"{progress.done}/{total} mutants: {progress.killed} killed, {progress.survived} survived, "
        f"{progress.timeout} timed out, {progress.no_tests} no tests ({rate:.2f}/s so far, the quickest first)"
    )
