"""One target fuzzed in this process: crash bookkeeping, the atheris and hypothesis drivers, the worker's entry.

A :class:`Campaign` feeds inputs to a target and keeps, per distinct crash (exception type and the place in
the project where it was raised), the shortest input that caused it. With atheris the project's modules are
instrumented for coverage and libFuzzer mutates the inputs (one mutation in four is a structural one of
:mod:`fuzz.mutation`); libFuzzer also enforces the per-input time bound (an input that hangs ends the process,
and libFuzzer saves it). Without atheris, hypothesis draws the inputs (raw bytes and mutants of the seeds) and
an alarm enforces the bound. The runner reads the ``result.json`` this module writes.

Run as ``python -m fuzz.engine TARGET --folder DIR --seconds N``; :mod:`fuzz.runner` does that for you.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import importlib
import json
import os
import random
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Final

from fuzz.mutation import mutate
from fuzz.target import Target

__all__ = [
    "Campaign",
    "Crash",
    "InputTimedOut",
    "atheris_available",
    "fuzz_with_atheris",
    "fuzz_with_hypothesis",
    "main",
    "run_inputs",
]

#: The packages whose code is instrumented, and where a crash is located.
PROJECT_PACKAGES: Final = ("toolcanon", "toolcanon_conformance")
_PROJECT_DIRS: Final = (
    f"{os.sep}toolcanon{os.sep}",
    f"{os.sep}toolcanon_conformance{os.sep}",
)
_RESULT_EVERY: Final = 1.0  # seconds between two writes of result.json while fuzzing
_MIN_MAX_LEN: Final = 16384  # room for nesting a thousand levels deep in JSON text


class InputTimedOut(BaseException):
    """One input ran past the per-input time bound (a hang).

    A ``BaseException``: the code under test must not be able to swallow it with ``except Exception``.
    """


@dataclass(slots=True)
class Crash:
    """One distinct crash: where it was raised, what was raised, and the shortest input that raises it."""

    signature: str
    exception: str
    traceback: str
    reproducer: str
    size: int
    inputs: int


def atheris_available() -> bool:
    """True when atheris can be imported here."""
    try:
        importlib.import_module("atheris")
    except ImportError:
        return False
    return True


def _location(trace: TracebackType | None, outermost: bool) -> str:
    """The innermost (or outermost) frame of project code in a traceback, else its innermost frame."""
    frames = traceback.extract_tb(trace)
    if not frames:
        return "<no traceback>"
    project = [frame for frame in frames if any(part in frame.filename for part in _PROJECT_DIRS)]
    chosen = (project[0] if outermost else project[-1]) if project else frames[-1]
    return f"{_short_path(chosen.filename)}:{chosen.lineno} in {chosen.name}"


def _short_path(filename: str) -> str:
    for marker in ("reference" + os.sep, "conformance" + os.sep, "fuzz" + os.sep):
        index = filename.rfind(os.sep + marker)
        if index >= 0:
            return filename[index + 1 :]
    return filename


def _describe(error: BaseException) -> str:
    try:
        text = str(error)
    except Exception:
        text = "<unprintable>"
    return f"{type(error).__name__}: {text[:500]}"


class Campaign:
    """Feeds one target's inputs and records what crashes it, in ``folder/crashes``."""

    def __init__(self, target: Target, folder: Path, input_timeout: float | None) -> None:
        self.target = target
        self.folder = folder
        self.crash_folder = folder / "crashes"
        self.input_timeout = input_timeout
        self.executions = 0
        self.crashing_inputs = 0
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.crashes: dict[str, Crash] = {}
        self.slowest = 0.0
        self.started = time.monotonic()
        self.engine = "direct"
        self._use_alarm = False
        self._alarm = False  # an alarm interrupts only while an input runs
        self._last_write = 0.0

    # --- the per-input time bound, by alarm (the hypothesis driver; libFuzzer has its own) -------------

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        if self._alarm:
            raise InputTimedOut(f"an input ran for more than {self.input_timeout:g} s")

    def arm_alarm(self) -> Callable[[], None]:
        """Enforce the time bound with ``SIGALRM`` from now on; returns the function that stops doing so."""
        previous = signal.signal(signal.SIGALRM, self._on_alarm)
        self._use_alarm = True

        def disarm() -> None:
            self._use_alarm = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

        return disarm

    # --- feeding ---------------------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Run one input; a crash is recorded, never raised (an interrupt from the keyboard is)."""
        self.executions += 1
        began = time.perf_counter()
        try:
            if self._use_alarm and self.input_timeout:
                self._alarm = True
                signal.setitimer(signal.ITIMER_REAL, self.input_timeout)
            try:
                outcome = self.target.check(data)
            finally:
                self._alarm = False
                if self._use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # anything else out of the entry point is the crash we look for
            where = _location(error.__traceback__, outermost=isinstance(error, InputTimedOut))
            self._record(data, error, f"{type(error).__name__} at {where}")
            return
        elapsed = time.perf_counter() - began
        self.slowest = max(self.slowest, elapsed)
        if self.input_timeout and elapsed > self.input_timeout:  # slow inside C code, where no alarm lands
            slow = InputTimedOut(f"an input ran for {elapsed:.2f} s (the bound is {self.input_timeout:g} s)")
            self._record(data, slow, f"InputTimedOut: slow input that finished as {outcome}")
            return
        self.outcomes[outcome] += 1

    def _record(self, data: bytes, error: BaseException, signature: str) -> None:
        self.crashing_inputs += 1
        self.outcomes["crash"] += 1
        known = self.crashes.get(signature)
        if known is not None:
            known.inputs += 1
            if len(data) >= known.size:
                return
        name = "crash-" + hashlib.sha1(signature.encode()).hexdigest()[:12]
        self.crash_folder.mkdir(parents=True, exist_ok=True)
        reproducer = self.crash_folder / f"{name}.bin"
        reproducer.write_bytes(data)
        text = "".join(traceback.format_exception(error))
        crash = Crash(
            signature, _describe(error), text, str(reproducer), len(data), 1 if known is None else known.inputs
        )
        self.crashes[signature] = crash
        (self.crash_folder / f"{name}.txt").write_text(self._crash_report(crash, data), "utf-8", "backslashreplace")
        self.write_result()

    def _crash_report(self, crash: Crash, data: bytes) -> str:
        shown = f"bytes.fromhex({data.hex()!r})" if len(data) <= 512 else f"open({crash.reproducer!r}, 'rb').read()"
        return (
            f"target: {self.target.name}\nsignature: {crash.signature}\nexception: {crash.exception}\n"
            f"input: {crash.size} bytes, {data[:300]!r}{'…' if len(data) > 300 else ''}\n\n"
            f"reproduce (from the checkout's root):\n"
            f'    python -c "from fuzz import load_target; load_target({self.target.name!r}).check({shown})"\n\n'
            f"{crash.traceback}"
        )

    # --- results ---------------------------------------------------------------------------------------

    def result(self, engine: str) -> dict[str, Any]:
        """What the run found, as the runner reads it."""
        elapsed = time.monotonic() - self.started
        return {
            "target": self.target.name,
            "engine": engine,
            "elapsed": round(elapsed, 3),
            "executions": self.executions,
            "per_second": round(self.executions / elapsed, 1) if elapsed > 0 else 0.0,
            "slowest": round(self.slowest, 4),
            "outcomes": dict(self.outcomes.most_common()),
            "crashing_inputs": self.crashing_inputs,
            "crashes": [asdict(crash) for crash in self.crashes.values()],
        }

    def write_result(self, force: bool = True) -> None:
        """Write ``result.json`` (atomically); unless ``force``, at most once a second."""
        now = time.monotonic()
        if not force and now - self._last_write < _RESULT_EVERY:
            return
        self._last_write = now
        path = self.folder / "result.json"
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(self.result(self.engine), indent=2), "utf-8")
        partial.replace(path)


# --- drivers -------------------------------------------------------------------------------------------


def _libfuzzer_dictionary(tokens: Iterable[bytes]) -> str:
    lines = []
    for token in tokens:
        escaped = "".join(chr(b) if 0x20 <= b < 0x7F and b not in b'"\\' else f"\\x{b:02x}" for b in token)
        lines.append(f'"{escaped}"')
    return "\n".join(lines) + "\n"


def _write_corpus(folder: Path, inputs: Iterable[bytes]) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    largest = 0
    for data in inputs:
        (folder / f"seed-{hashlib.sha1(data).hexdigest()}").write_bytes(data)
        largest = max(largest, len(data))
    return largest


def fuzz_with_atheris(campaign: Campaign, seconds: float) -> None:
    """Fuzz until ``seconds`` have passed, then write the result and end the process (libFuzzer never returns)."""
    atheris: Any = importlib.import_module("atheris")
    folder = campaign.folder
    largest = _write_corpus(folder / "corpus", campaign.target.seeds())
    argv = [
        sys.argv[0],
        f"-timeout={max(1, round(campaign.input_timeout or 10))}",
        f"-max_total_time={int(seconds) + 60}",
        f"-max_len={min(max(_MIN_MAX_LEN, largest), 1 << 20)}",
        "-len_control=0",
        "-rss_limit_mb=3072",
        f"-artifact_prefix={folder}{os.sep}libfuzzer-",
        str(folder / "corpus"),
    ]
    if campaign.target.tokens:
        dictionary = folder / "tokens.dict"
        dictionary.write_text(_libfuzzer_dictionary(campaign.target.tokens), "ascii")
        argv.insert(1, f"-dict={dictionary}")
    campaign.engine = "atheris"
    deadline = time.monotonic() + seconds

    def one_input(data: bytes) -> None:
        campaign.feed(data)
        if time.monotonic() >= deadline:
            campaign.write_result()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)  # libFuzzer has no way back to the caller; the result is written
        campaign.write_result(force=False)

    structural = random.Random()
    tokens = campaign.target.tokens

    def mutator(data: bytes, max_size: int, seed: int) -> bytes:
        # one mutation in four is ours: deep brackets, tokens, splices, edits libFuzzer's byte mutators rarely make
        if seed % 4:
            mutated: bytes = atheris.Mutate(data, max_size)
            return mutated
        structural.seed(seed)
        return mutate(data, structural, tokens)[:max_size]

    atheris.Setup(argv, one_input, custom_mutator=mutator)
    campaign.started = time.monotonic()
    atheris.Fuzz()


def _hypothesis_inputs(seeds: list[bytes], tokens: tuple[bytes, ...]) -> Any:
    from hypothesis import strategies as st

    def mutant(choice: tuple[int, int]) -> bytes:
        rng = random.Random(choice[1])
        return mutate(seeds[choice[0]], rng, tokens, seeds)

    return st.one_of(
        st.binary(max_size=4096),
        st.tuples(st.integers(0, len(seeds) - 1), st.integers(0, 2**32 - 1)).map(mutant),
    )


def fuzz_with_hypothesis(campaign: Campaign, seconds: float) -> None:
    """Feed every seed, then hypothesis-drawn inputs, until ``seconds`` have passed."""
    from hypothesis import HealthCheck, Phase, given, settings

    campaign.engine = "hypothesis"
    seeds = list(campaign.target.seeds()) or [b""]
    disarm = campaign.arm_alarm()
    campaign.started = time.monotonic()
    deadline = campaign.started + seconds
    try:
        for data in seeds:
            if time.monotonic() >= deadline:
                break
            campaign.feed(data)

        @settings(
            max_examples=250,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(_hypothesis_inputs(seeds, campaign.target.tokens))
        def batch(data: bytes) -> None:
            if time.monotonic() < deadline:
                campaign.feed(data)
                campaign.write_result(force=False)

        while time.monotonic() < deadline:
            batch()
    finally:
        disarm()
    campaign.write_result()


def run_inputs(target: Target, inputs: Iterable[bytes], folder: Path, input_timeout: float | None = 5.0) -> Campaign:
    """Feed exactly ``inputs`` (no engine); the campaign says what happened."""
    campaign = Campaign(target, folder, input_timeout)
    disarm = campaign.arm_alarm()
    try:
        for data in inputs:
            campaign.feed(data)
    finally:
        disarm()
    return campaign


# --- the worker process --------------------------------------------------------------------------------


def _load(name: str, engine: str) -> Target:
    """Load the target; with atheris, inside the import hook that instruments the project's modules."""
    from fuzz import load_target

    if engine != "atheris":
        return load_target(name)
    atheris: Any = importlib.import_module("atheris")
    with atheris.instrument_imports(include=list(PROJECT_PACKAGES)):
        return load_target(name)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m fuzz.engine", description="Fuzz one target in this process.")
    parser.add_argument("target")
    parser.add_argument("--folder", type=Path, required=True, help="where the corpus, crashes and result go")
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--input-timeout", type=float, default=10.0, help="the per-input time bound, in seconds")
    parser.add_argument("--engine", choices=("auto", "atheris", "hypothesis"), default="auto")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Fuzz one target for ``--seconds`` and write ``FOLDER/result.json``."""
    arguments = _arguments(argv)
    engine: str = arguments.engine
    if engine == "auto":
        engine = "atheris" if atheris_available() else "hypothesis"
    sys.setrecursionlimit(1000)  # the interpreter's default: the limit the project's code meets in use
    target = _load(arguments.target, engine)
    folder: Path = arguments.folder
    folder.mkdir(parents=True, exist_ok=True)
    campaign = Campaign(target, folder, arguments.input_timeout)
    if engine == "atheris":
        fuzz_with_atheris(campaign, arguments.seconds)
    else:
        fuzz_with_hypothesis(campaign, arguments.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
