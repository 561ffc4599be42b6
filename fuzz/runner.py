"""Run the fuzz targets one after the other, each in its own process, and print what each found.

``python -m fuzz [--seconds N] [--out DIR] [NAME ...]``: every target whose name contains one of the NAMEs
(all of them by default) is fuzzed for N seconds (300 by default) by :mod:`fuzz.engine`. Each target's corpus,
crash reproducers and fuzzer log go under ``DIR/<target>/``; the corpus is kept from one run to the next,
the crashes are not. When an input hangs or exhausts memory, libFuzzer ends the process and saves the input;
the runner then records it and restarts the target for the time that is left. The exit status is 1 when any
target crashed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from fuzz import TARGETS
from fuzz.seeds import ROOT

__all__ = ["TargetRun", "main", "run_target"]

# Seconds a worker may take beyond its budget (imports, the seed corpus) before it is killed.
_STARTUP_GRACE: Final = 120.0
_MAX_SEGMENTS: Final = 20  # restarts after a libFuzzer-detected hang or memory exhaustion
_LIBFUZZER_ARTIFACTS: Final = ("crash-", "timeout-", "oom-", "leak-", "slow-unit-")


@dataclass(slots=True)
class TargetRun:
    """One target's run, summed over its worker processes."""

    name: str
    engine: str = "?"
    elapsed: float = 0.0
    executions: int = 0
    crashing_inputs: int = 0
    crashes: list[dict[str, Any]] = field(default_factory=list)
    artifacts: list[tuple[str, str]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def crashed(self) -> bool:
        """True when anything crashed (or a worker ended without a result)."""
        return bool(self.crashes or self.artifacts or self.failures)

    @property
    def per_second(self) -> float:
        """Executions per second of fuzzing."""
        return self.executions / self.elapsed if self.elapsed > 0 else 0.0

    def add(self, result: dict[str, Any]) -> None:
        """Sum one worker's ``result.json`` into this run (a crash seen again counts its inputs once more)."""
        self.engine = result["engine"]
        self.elapsed += result["elapsed"]
        self.executions += result["executions"]
        self.crashing_inputs += result["crashing_inputs"]
        known = {crash["signature"]: crash for crash in self.crashes}
        for crash in result["crashes"]:
            if crash["signature"] in known:
                known[crash["signature"]]["inputs"] += crash["inputs"]
            else:
                self.crashes.append(crash)


def _prepare(folder: Path) -> None:
    """Keep the corpus of an earlier run; drop its crashes, artifacts and result."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(folder / "crashes", ignore_errors=True)
    for path in folder.iterdir():
        if path.name.startswith("libfuzzer-") or path.name in ("result.json", "fuzzer.log"):
            path.unlink()


def _new_artifacts(folder: Path, seen: set[Path]) -> list[Path]:
    found = sorted(
        path
        for path in folder.glob("libfuzzer-*")
        if path not in seen and path.name.removeprefix("libfuzzer-").startswith(_LIBFUZZER_ARTIFACTS)
    )
    seen.update(found)
    return found


def _libfuzzer_report(log: Path, since: int) -> str:
    """libFuzzer's one-line verdict on the segment of ``log`` after byte ``since``, and the innermost Python frame."""
    with log.open("rb") as stream:
        stream.seek(since)
        lines = stream.read().decode("utf-8", "replace").splitlines()
    verdict = next((line.split("ERROR: ", 1)[1] for line in lines if "ERROR: libFuzzer:" in line), "")
    frames = [line.strip() for line in lines if line.lstrip().startswith('File "')]
    return f"{verdict}; {frames[0]}" if verdict and frames else verdict


def run_target(name: str, folder: Path, seconds: float, input_timeout: float, engine: str) -> TargetRun:
    """Fuzz one target in worker processes for ``seconds`` in all."""
    _prepare(folder)
    run = TargetRun(name)
    seen: set[Path] = set()
    log = folder / "fuzzer.log"
    deadline = time.monotonic() + seconds
    for _ in range(_MAX_SEGMENTS):
        remaining = deadline - time.monotonic()
        if remaining < 1:
            break
        (folder / "result.json").unlink(missing_ok=True)
        command = [
            sys.executable,
            "-m",
            "fuzz.engine",
            name,
            "--folder",
            str(folder),
            "--seconds",
            f"{remaining:.1f}",
            "--input-timeout",
            str(input_timeout),
            "--engine",
            engine,
        ]
        since = log.stat().st_size if log.exists() else 0
        with log.open("ab") as output:
            try:
                status = subprocess.run(
                    command,
                    check=False,
                    cwd=ROOT,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    timeout=remaining + _STARTUP_GRACE,
                ).returncode
            except subprocess.TimeoutExpired:
                status = None
        result_path = folder / "result.json"
        if result_path.is_file():
            run.add(json.loads(result_path.read_text("utf-8")))
        artifacts = _new_artifacts(folder, seen)
        run.artifacts.extend((str(path), _libfuzzer_report(log, since)) for path in artifacts)
        if status == 0:
            break
        if not artifacts:
            run.failures.append(
                "the worker was killed after outliving its time"
                if status is None
                else f"the worker exited with status {status} (see {log})"
            )
            break
    return run


def _print_run(run: TargetRun) -> None:
    crashes = len(run.crashes) + len(run.artifacts)
    print(
        f"{run.name:<12} {run.engine:<10} {run.elapsed:7.1f} s  {run.executions:>10,} executions"
        f"  {run.per_second:>9,.0f}/s  {crashes} crash{'es' if crashes != 1 else ''}"
        + (f" ({run.crashing_inputs:,} crashing inputs)" if run.crashing_inputs else "")
    )
    for crash in run.crashes:
        print(f"    {crash['signature']}: {crash['exception'][:160]}")
        print(f"        reproducer ({crash['size']} bytes, {crash['inputs']} inputs): {crash['reproducer']}")
    for artifact, report in run.artifacts:
        kind = Path(artifact).name.removeprefix("libfuzzer-").split("-")[0]
        print(f"    libFuzzer {kind}: {report or 'see the fuzzer log'}")
        print(f"        reproducer: {artifact}")
    for failure in run.failures:
        print(f"    {failure}")


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="fuzz only the targets whose name contains NAME")
    parser.add_argument("--seconds", type=float, default=300.0, help="seconds per target (default 300)")
    parser.add_argument(
        "--input-timeout",
        type=float,
        default=10.0,
        help="per-input time bound (default 10 s: instrumented code is slow)",
    )
    parser.add_argument("--engine", choices=("auto", "atheris", "hypothesis"), default="auto")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(tempfile.gettempdir()) / "toolcanon-fuzz",
        help="where corpora, reproducers and logs go",
    )
    parser.add_argument("--list", action="store_true", help="list the targets and exit")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Fuzz the selected targets; 1 when any crashed, 2 when no target matches."""
    arguments = _arguments(argv)
    if arguments.list:
        from fuzz import load_target

        for name in TARGETS:
            print(f"{name:<12} {load_target(name).summary}")
        return 0
    names = [name for name in TARGETS if not arguments.names or any(part in name for part in arguments.names)]
    if not names:
        print(f"no fuzz target matches {' '.join(arguments.names)} (there are {', '.join(TARGETS)})")
        return 2
    out: Path = arguments.out.resolve()
    print(f"fuzzing {', '.join(names)} for {arguments.seconds:g} s each; corpora, reproducers and logs under {out}")
    runs = []
    for name in names:
        run = run_target(name, out / name, arguments.seconds, arguments.input_timeout, arguments.engine)
        _print_run(run)
        runs.append(run)
    crashed = [run.name for run in runs if run.crashed]
    print(f"crashed: {', '.join(crashed)}" if crashed else "no crashes")
    return 1 if crashed else 0
