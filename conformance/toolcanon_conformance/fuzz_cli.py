"""``toolcanon fuzz``: generated scenarios against an implementation in any language, failures saved shrunk.

The command line of :mod:`toolcanon_conformance.properties`: it draws scenarios
(:func:`~toolcanon_conformance.strategies.scenarios`, within the capabilities both sides declare), runs each
on the implementation and on the reference, and checks that the transcripts are byte for byte the same (the
differential check) and that the implementation's transcript keeps the contract's oracle-free invariants. A
failing scenario is shrunk by hypothesis and, with ``--save DIR``, written as a regression scenario ready to
commit, its golden (the reference's transcript) beside it::

    DIR/scenarios/fuzz-<hash>.json   a scenario file of the kit's format (an id, rules, requires, ...)
    DIR/goldens/fuzz-<hash>.json     the reference's transcript of it, the golden ``toolcanon check`` wants

so that ``toolcanon check --impl ... --scenarios DIR/scenarios --goldens DIR/goldens`` shows the failure
again. After one failure is saved, the hunt goes on for the examples left, a failure already saved no longer
counting, until ``--max-failures`` distinct ones are found. Two failures are the same when they first differ
in the same way at the same place (step ids and array indices aside), or break the same invariant, or error
the same way. A scenario the implementation does not answer in time is saved as drawn, not shrunk (every
attempt would cost a whole timeout), and ends the run.

The session logs the implementations write meanwhile are throwaway: they go to a scratch folder
(:func:`scratch_directory`), RAM-backed where the system has one, so that their fsyncs cost nothing.

``--seconds N`` is a time budget: no scenario is drawn once it is spent (a failure found before is still
shrunk), and the run reports what it checked. Ctrl-C (``SIGINT``) does not interrupt a scenario where it is: it
ends the run once the scenario under way has been checked, and the run reports what it found, in one line when
it found nothing; a second Ctrl-C ends it at once.

``--known FILE`` names the implementation's known disagreements (:mod:`toolcanon_conformance.known`): a scenario
whose every difference one of them explains is counted under it, neither shrunk nor saved nor a failure, and the
hunt goes on.

Exit status: 0 no failure found, 1 a failure found, 2 a usage error or an implementation (or the reference)
that cannot be started, or a reference that fails on a generated scenario; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import random
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Final

from hypothesis import HealthCheck, Phase, Verbosity, given, seed
from hypothesis import settings as Settings
from hypothesis import strategies as st

from toolcanon import canonical_json
from toolcanon_conformance.adapters.inprocess import BUNDLED_REFERENCE, InProcess
from toolcanon_conformance.adapters.subprocess import Subprocess
from toolcanon_conformance.arguments import whole_number
from toolcanon_conformance.diff import Path as JsonPath
from toolcanon_conformance.diff import format_path
from toolcanon_conformance.display import visible
from toolcanon_conformance.exceptions import AdapterError
from toolcanon_conformance.implementation import Implementation
from toolcanon_conformance.known import KnownDisagreements, KnownError, counts_by_class
from toolcanon_conformance.properties import ConformanceFailure, ImplementationPair, ReferenceFailure
from toolcanon_conformance.strategies import EXOTIC_KINDS, REFERENCE_EXOTIC_KINDS, scenarios

__all__ = [
    "DEFAULT_EXAMPLES",
    "REFERENCE_TARGET",
    "Found",
    "FuzzRun",
    "Reporter",
    "fuzz",
    "fuzz_command",
    "rules_of",
    "scratch_directory",
    "signature_of",
]

_PROG: Final = "toolcanon fuzz"
REFERENCE_TARGET: Final = BUNDLED_REFERENCE
"""The reference ``--against`` defaults to: the bundled one, in this process."""
DEFAULT_EXAMPLES: Final = 200
"""Scenarios drawn when ``--examples`` is not given."""


class _UsageError(Exception):
    """A problem with what the user asked for: reported in one line, exit status 2."""


class _Stop(BaseException):
    """Ends a hypothesis run before the next scenario (not an ``Exception``, so hypothesis lets it through): the
    run was interrupted, or its time budget is spent."""


class _Abort(BaseException):
    """Ends a hypothesis run at once, without shrinking (not an ``Exception``, so hypothesis lets it through):
    the reference failed, or the implementation hung."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


# --- what a run finds ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Found:
    """One distinct failure: the shrunk :class:`~toolcanon_conformance.properties.ConformanceFailure`, what
    makes it distinct (:func:`signature_of`), the id and rules of its regression scenario, how many attempts
    shrinking it took, and the files it was saved to (scenario, golden) when it was saved."""

    failure: ConformanceFailure
    signature: str
    scenario_id: str
    rules: tuple[str, ...]
    shrink_attempts: int
    shrunk: bool = True
    saved: tuple[Path, Path] | None = None
    reproduced: str | None = None  # the status ``toolcanon check`` gives the saved scenario


@dataclass(slots=True)
class FuzzRun:
    """What a run did: the seed, the scenarios drawn and checked (``examples`` of ``requested``, ``None`` for no
    limit but the time ``budget``), its wall time and the share of it spent drawing, the failures found, why it
    stopped early (or ``None``), whether the budget ended it, and whether it was interrupted (with the failure
    it was shrinking then, if any); ``classified`` counts the drawn scenarios each known disagreement explained
    (by its id, ``--known``)."""

    seed: int
    requested: int | None
    examples: int = 0
    seconds: float = 0.0
    drawing_seconds: float = 0.0
    found: list[Found] = field(default_factory=list)
    stopped: str | None = None
    budget: float | None = None
    out_of_time: bool = False
    interrupted: bool = False
    interrupted_shrinking: str | None = None
    classified: dict[str, int] = field(default_factory=dict)

    @property
    def known(self) -> int:
        """Drawn scenarios that showed a known disagreement only."""
        return sum(self.classified.values())

    @property
    def rate(self) -> float:
        """Scenarios checked per second."""
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    @property
    def drawing_share(self) -> float:
        """The share of the wall time spent drawing scenarios."""
        return self.drawing_seconds / self.seconds if self.seconds > 0 else 0.0


def signature_of(failure: ConformanceFailure) -> str:
    """What tells one failure from another: for a differing transcript, the kind and place of the first
    difference with step ids and array indices left out (and nothing below a value, metadata or arguments);
    for broken invariants, the first one without its path; for an errored outcome, how it errored."""
    if failure.kind == "differs":
        difference = failure.difference
        if difference is None:
            return "differs: the bytes"
        return f"differs: {difference.kind} at {_general_path(difference.path)}"
    if failure.kind == "invariant":
        first = failure.violations[0] if failure.violations else ""
        return "invariant: " + first.partition(": ")[2]
    if failure.kind == "errored":
        kind = str(failure.context.get("kind", "errored"))
        if kind == "raised":
            message = str(failure.context.get("message", ""))
            return f"errored: raised {message.partition(':')[0]}"
        return f"errored: {kind}"
    return failure.kind


_LEAF_FIELDS: Final = frozenset({"value", "meta", "arguments"})


def _general_path(path: JsonPath) -> str:
    """``$.steps.*.events[*].data.value``: the path with step ids and indices left out, cut below a value."""
    parts = ["$"]
    for position, element in enumerate(path):
        if isinstance(element, int):
            parts.append("[*]")
        elif position == 1 and path[0] == "steps":
            parts.append(".*")
        else:
            parts.append(format_path((element,))[1:])
        if element in _LEAF_FIELDS or len(parts) > 6:
            break
    return "".join(parts)


# Where a failure shows (a field of a step's outcome, or a broken invariant) and the rule it most likely
# breaks: the saved scenario names it, to be checked before the scenario is committed.
_RULES_BY_FIELD: Final = (
    (("result", "meta"), "R-NORM-5"),
    (("result", "additionalContexts"), "R-CTX-1"),
    (("result", "concludesTurn"), "R-TURN-1"),
    (("result", "error", "info"), "R-RES-3"),
    (("result", "error"), "R-RES-2"),
    (("result", "isError"), "R-RES-1"),
    (("result", "content"), "R-NORM-1"),
    (("result", "value"), "R-NORM-1"),
    (("result",), "R-RES-1"),
    (("phases",), "R-WRAP-1"),
    (("nested",), "R-NEST-1"),
    (("frozen",), "R-SNAP-6"),
    (("events",), "R-LOG-2"),
    (("messages",), "R-REPLAY-1"),
    (("schemas",), "R-SCHEMAS-1"),
    (("error",), "R-SCHEMAS-2"),
)
_RULES_BY_INVARIANT: Final = (
    ("reached the log", "R-LOG-3"),
    ("tool-result block", "R-REPLAY-1"),
    ("verbatim", "R-REPLAY-1"),
    ("replayed", "R-REPLAY-1"),
    ("toolCallId", "R-REPLAY-1"),
    ("can be mutated", "R-SNAP-6"),
    ("container", "R-SNAP-6"),
    ("a failure has a value", "R-RES-2"),
    ("a success has an error", "R-RES-1"),
    ("not a boolean", "R-RES-1"),
)


def rules_of(failure: ConformanceFailure) -> tuple[str, ...]:
    """The contract rule the failure most likely breaks, from where it shows (none for a crash, a hang or a
    skip): a logged event holding a key the reference's does not is R-LOG-3, another difference in the log is
    R-LOG-2, a difference in the result's metadata R-NORM-5, a broken freeze R-SNAP-6, and so on."""
    if failure.kind == "invariant":
        text = " ".join(failure.violations)
        return tuple(dict.fromkeys(rule for needle, rule in _RULES_BY_INVARIANT if needle in text))[:1]
    difference = failure.difference
    if failure.kind != "differs" or difference is None:
        return ()
    path = difference.path
    if path[:1] == ("registrations",):
        return ("R-REG-1",)
    if len(path) < 2 or path[0] != "steps":
        return ()
    fields = tuple(element for element in path[2:] if isinstance(element, str))
    if fields[:1] == ("events",) and difference.kind == "unexpected":
        return ("R-LOG-3",)
    if fields[:1] == ("nested",):
        if fields[1:3] == ("result", "meta"):
            return ("R-NEST-3",)
        fields = fields[1:]  # a nested call's result is judged as a direct call's
    if fields[:2] == ("result", "content") and (difference.expected or "").startswith('"Error: '):
        return ("R-NORM-8",)  # a failure's content is "Error: <message>"
    for prefix, rule in _RULES_BY_FIELD:
        if fields[: len(prefix)] == prefix:
            return (rule,)
    return ()


# --- the run -------------------------------------------------------------------------------------------


class Reporter:
    """Where a run says how far it got: ``progress`` after each scenario, ``shrinking`` after each attempt
    at shrinking a failure, ``found`` for each distinct failure (shrunk, and saved when asked)."""

    def progress(self, run: FuzzRun, elapsed: float) -> None:
        """Called after each scenario drawn and checked."""

    def shrinking(self, run: FuzzRun, signature: str, attempts: int) -> None:
        """Called after each attempt at shrinking a failure."""

    def found(self, run: FuzzRun, found: Found) -> None:
        """Called once a failure is shrunk (and saved)."""


@dataclass(slots=True)
class _Round:
    """One hypothesis run: the failure it shrinks (its signature), and the attempts so far."""

    target: str | None = None
    attempts: int = 0


def fuzz(
    pair: ImplementationPair,
    *,
    examples: int | None = DEFAULT_EXAMPLES,
    seconds: float | None = None,
    seed_value: int = 0,
    differential: bool = True,
    invariants: bool = True,
    exotic_kinds: Sequence[str] | None = None,
    max_failures: int = 1,
    save: Path | None = None,
    reporter: Reporter | None = None,
    interrupted: Callable[[], bool] | None = None,
    known: KnownDisagreements | None = None,
) -> FuzzRun:
    """Check the pair's implementation on ``examples`` generated scenarios, deterministically for a seed.

    ``seconds`` is a time budget: once it is spent no scenario is drawn (a failure found before is still
    shrunk); ``examples`` ``None`` leaves the budget alone to end the run. ``interrupted`` is asked before each
    scenario: when it answers true the run ends there, ``FuzzRun.interrupted``. ``pair`` is started here and
    stopped at the end; whatever its ``start`` raises is left to the caller (an
    :class:`~toolcanon_conformance.exceptions.AdapterError` for the kit's adapters), and so is a
    :class:`~toolcanon_conformance.properties.ReferenceFailure`. Each distinct failure (up to
    ``max_failures``) is shrunk and, with ``save``, written there (see the module's documentation). A failure
    that ``known`` explains wholly is counted in ``FuzzRun.classified`` instead, and the hunt goes on.
    """
    if examples is None and seconds is None:
        raise ValueError("fuzz needs a number of examples, a time budget in seconds, or both")
    report = reporter if reporter is not None else Reporter()
    run = FuzzRun(seed_value, examples, budget=seconds)
    began = time.perf_counter()
    drawing = [0.0]
    limits = _Limits(None if seconds is None else began + seconds, interrupted or _never)
    try:
        capabilities = pair.start()
        kinds = REFERENCE_EXOTIC_KINDS if exotic_kinds is None else tuple(exotic_kinds)
        strategy = _timed(scenarios(capabilities=capabilities, exotic_kinds=kinds), drawing)
        seen: set[str] = set()
        rounds = 0
        while (examples is None or run.examples < examples) and len(run.found) < max_failures:
            if run.stopped is not None or _stopping(limits, run):
                break
            state = _Round()
            check = _property(pair, state, seen, run, began, report, differential, invariants, limits, known)
            budget = _UNLIMITED if examples is None else examples - run.examples
            test = seed(_round_seed(seed_value, rounds))(_settings(budget)(given(strategy)(check)))
            rounds += 1
            try:
                test()
            except _Stop:
                _stopping(limits, run, shrinking=state.target)
                break
            except ConformanceFailure as failure:
                assert state.target is not None
                found = _found(pair, failure, state.target, state.attempts, save, run.seed)
            except _Abort as abort:
                if not isinstance(abort.error, ConformanceFailure):
                    raise abort.error from None
                # A hang: shrinking it would cost a whole timeout per attempt, and the adapter may not recover.
                found = _found(pair, abort.error, signature_of(abort.error), 0, save, run.seed, shrunk=False)
                run.stopped = "the implementation did not answer a scenario in time"
            else:
                break
            seen.add(found.signature)
            run.found.append(found)
            report.found(run, found)
    finally:
        run.seconds = time.perf_counter() - began
        run.drawing_seconds = drawing[0]
        pair.stop()
    return run


#: ``max_examples`` of a run that only its time budget ends.
_UNLIMITED: Final = 2**31 - 1


def _never() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class _Limits:
    """What ends a run besides its count: the time budget's deadline (``perf_counter``), and the interrupt."""

    deadline: float | None
    interrupted: Callable[[], bool]

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline


def _stopping(limits: _Limits, run: FuzzRun, *, shrinking: str | None = None) -> bool:
    """Whether the run ends now, interrupted or out of time (recorded in ``run``)."""
    if limits.interrupted():
        run.interrupted = True
        run.interrupted_shrinking = shrinking
        return True
    if limits.out_of_time():
        run.out_of_time = True
        return True
    return False


def _property(
    pair: ImplementationPair,
    state: _Round,
    seen: set[str],
    run: FuzzRun,
    began: float,
    report: Reporter,
    differential: bool,
    invariants: bool,
    limits: _Limits,
    known: KnownDisagreements | None,
) -> Callable[[dict[str, Any]], None]:
    def check(scenario: dict[str, Any]) -> None:
        # Checked here, between scenarios, where stopping leaves nothing half done; the time budget ends the
        # drawing of new scenarios only, never the shrinking of a failure found.
        if limits.interrupted() or (state.target is None and limits.out_of_time()):
            raise _Stop
        _check_one(pair, scenario, state, seen, run, began, report, differential, invariants, known)

    return check


def _check_one(
    pair: ImplementationPair,
    scenario: dict[str, Any],
    state: _Round,
    seen: set[str],
    run: FuzzRun,
    began: float,
    report: Reporter,
    differential: bool,
    invariants: bool,
    known: KnownDisagreements | None = None,
) -> None:
    """The property of one round: check the scenario, raising only for the failure this round shrinks (a known
    disagreement is counted, when the scenario was drawn, not shrunk)."""
    if state.target is None:
        run.examples += 1
    else:
        state.attempts += 1
        report.shrinking(run, state.target, state.attempts)
    try:
        pair.check(scenario, differential=differential, invariants=invariants)
    except ConformanceFailure as failure:
        explained = known.classify(failure) if known is not None else ()
        if explained:
            if state.target is None:
                for entry in explained:
                    run.classified[entry.id] = run.classified.get(entry.id, 0) + 1
            return
        signature = signature_of(failure)
        if signature in seen or (state.target is not None and signature != state.target):
            return  # saved already, or another failure: the next round hunts it
        if failure.context.get("kind") == "timed-out":
            raise _Abort(failure) from None
        state.target = signature
        raise
    except ReferenceFailure as error:
        raise _Abort(error) from None
    finally:
        if state.target is None or state.attempts == 0:
            report.progress(run, time.perf_counter() - began)


def _timed(strategy: st.SearchStrategy[dict[str, Any]], total: list[float]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def timed(draw: st.DrawFn) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return draw(strategy)
        finally:
            total[0] += time.perf_counter() - started

    return timed()


def _round_seed(seed_value: int, round_number: int) -> int:
    return seed_value if round_number == 0 else random.Random(f"{seed_value}:{round_number}").getrandbits(64)


def _settings(max_examples: int) -> Settings:
    # No example database (a run is repeated by its seed), no deadline (an adapter may be a slow process),
    # no health checks (the scenarios are large by design), quiet (failures are reported here), no explain
    # phase (it reruns the failure many times to say which parts matter: the shrunk scenario says it).
    return Settings(
        max_examples=max_examples,
        database=None,
        deadline=None,
        derandomize=False,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.shrink),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )


def _found(
    pair: ImplementationPair,
    failure: ConformanceFailure,
    signature: str,
    attempts: int,
    save: Path | None,
    seed_value: int,
    *,
    shrunk: bool = True,
) -> Found:
    """The (shrunk) failure as a regression scenario, saved (and run again from its file) when asked."""
    rules = rules_of(failure)
    document = _regression_scenario(failure, rules, seed_value)
    found = Found(failure, signature, str(document["id"]), rules, attempts, shrunk=shrunk)
    if save is None:
        return found
    golden = pair.reference_transcript(document)
    saved = _save(save, document, golden)
    return _reproduced(pair, found, saved)


def _regression_scenario(failure: ConformanceFailure, rules: tuple[str, ...], seed_value: int) -> dict[str, Any]:
    drawn = dict(failure.scenario)
    drawn["id"] = "generated"
    digest = hashlib.sha256(canonical_json(drawn).encode("utf-8", "surrogatepass")).hexdigest()
    where = f" at {failure.difference.where}" if failure.difference is not None else ""
    reason = failure.reason.splitlines()[0]
    document: dict[str, Any] = {
        "formatVersion": drawn["formatVersion"],
        "id": f"fuzz-{digest[:10]}",
        "rules": list(rules),
        "description": f"Found by toolcanon fuzz --seed {seed_value}: {reason}{where}.",
    }
    document.update((key, value) for key, value in drawn.items() if key not in ("formatVersion", "id", "description"))
    return document


def _save(directory: Path, document: dict[str, Any], golden: str) -> tuple[Path, Path]:
    scenarios_dir, goldens_dir = directory / "scenarios", directory / "goldens"
    scenarios_dir.mkdir(parents=True, exist_ok=True)
    goldens_dir.mkdir(parents=True, exist_ok=True)
    scenario_file = scenarios_dir / f"{document['id']}.json"
    golden_file = goldens_dir / f"{document['id']}.json"
    scenario_file.write_text(canonical_json(document, 2) + "\n", encoding="utf-8")
    golden_file.write_bytes(golden.encode("utf-8", "surrogatepass"))
    return scenario_file, golden_file


def _reproduced(pair: ImplementationPair, found: Found, saved: tuple[Path, Path]) -> Found:
    """``found`` with how ``toolcanon check`` judges the saved scenario (read back from its file)."""
    from toolcanon_conformance.runner import judge
    from toolcanon_conformance.scenario import load_scenario

    scenario = load_scenario(saved[0]).data
    if found.failure.context.get("kind") == "timed-out":
        return _with(found, saved=saved, reproduced="errored (not run again: it hangs)")
    try:
        transcript = pair.transcript(scenario)
    except ConformanceFailure as failure:
        return _with(found, saved=saved, reproduced=failure.kind)
    status = judge(scenario, transcript, saved[1].read_bytes()).status
    return _with(found, saved=saved, reproduced=status)


def _with(found: Found, **changes: Any) -> Found:
    return replace(found, **changes)


# --- the scratch folder --------------------------------------------------------------------------------

_RAM_BACKED: Final = Path("/dev/shm")


@contextlib.contextmanager
def scratch_directory(parent: str | None = None) -> Iterator[Path]:
    """A fresh folder, removed afterwards, that is the process's temporary folder meanwhile (``tempfile``'s,
    and ``TMPDIR`` for the adapter processes started meanwhile).

    It is made in ``parent``, else in a RAM-backed folder (``/dev/shm``) when the system has a writable one,
    else in the system's temporary folder. The session logs a scenario's persist steps write there are read
    back at once and thrown away; on a disk every one of them costs fsyncs, which a busy disk makes the larger
    part of a scenario's time.
    """
    if parent is None and _RAM_BACKED.is_dir() and os.access(_RAM_BACKED, os.W_OK | os.X_OK):
        parent = str(_RAM_BACKED)
    folder = Path(tempfile.mkdtemp(prefix="toolcanon-fuzz-", dir=parent))
    saved_tempdir, saved_environment = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = str(folder)
    os.environ["TMPDIR"] = str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = saved_tempdir
        if saved_environment is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_environment
        shutil.rmtree(folder, ignore_errors=True)


# --- the command line ----------------------------------------------------------------------------------


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (more than 0)")
    return seconds


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description=(
            "Draw scenarios, run each on the implementation and on the reference, and require the same "
            "transcript bytes and the contract's invariants; failures are shrunk and can be saved as "
            "regression scenarios."
        ),
        epilog=(
            "Ctrl-C ends the run once the scenario under way is checked (a second Ctrl-C at once). "
            "Exit status: 0 no failure found, 1 a failure found, 2 usage error or an implementation that "
            "cannot be started, 130 interrupted."
        ),
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--impl", metavar="MODULE:ATTR", help="the implementation: a Python object")
    target.add_argument("--impl-cmd", metavar="CMD", help="the implementation: a command speaking the protocol")
    against = parser.add_mutually_exclusive_group()
    against.add_argument("--against", metavar="MODULE:ATTR", help=f"the reference (default: {REFERENCE_TARGET})")
    against.add_argument("--against-cmd", metavar="CMD", help="the reference: a command speaking the protocol")
    parser.add_argument(
        "--examples",
        type=whole_number(1, "count"),
        metavar="N",
        help=f"scenarios (default {DEFAULT_EXAMPLES}; with --seconds alone, as many as the time allows)",
    )
    parser.add_argument(
        "--seconds",
        type=_seconds,
        metavar="N",
        help="time budget: draw no scenario after N seconds (a failure found before is still shrunk), "
        "then report what ran",
    )
    parser.add_argument("--seed", type=_seed, metavar="S", help="repeat a run (default: a random seed, printed)")
    parser.add_argument("--save", metavar="DIR", help="save each shrunk failure: DIR/scenarios, DIR/goldens")
    parser.add_argument(
        "--max-failures",
        type=whole_number(1, "count"),
        default=1,
        metavar="K",
        help="stop after K distinct failures (default 1)",
    )
    parser.add_argument(
        "--check",
        choices=("both", "differential", "invariants"),
        default="both",
        help="the differential check, the invariants, or both (default)",
    )
    parser.add_argument(
        "--exotic-kinds",
        metavar="KINDS",
        help="comma-separated exotic kinds to draw ('' for none; default: every kind the reference expresses)",
    )
    parser.add_argument("--timeout", type=_seconds, default=10.0, metavar="S", help="seconds per scenario (10)")
    parser.add_argument("--startup-timeout", type=_seconds, default=30.0, metavar="S", help="seconds to start (30)")
    parser.add_argument(
        "--tmpdir",
        metavar="DIR",
        help="where the throwaway session logs go (default: /dev/shm when writable, else the system's temp folder)",
    )
    parser.add_argument(
        "--known",
        metavar="FILE",
        help="the implementation's known disagreements: a scenario they explain wholly is counted, not a failure",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on standard error")
    return parser


def fuzz_command(arguments: list[str], *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    """Run ``toolcanon fuzz`` with ``arguments`` (those after ``fuzz``); return the exit status."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    try:
        options = _parser().parse_args(arguments)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    with _deferred_interrupt() as interrupted:
        return _fuzz(options, out, err, interrupted)


def _fuzz(options: argparse.Namespace, out: IO[str], err: IO[str], interrupted: Callable[[], bool]) -> int:
    try:
        kinds = _exotic_kinds(options.exotic_kinds)
        save = _save_directory(options.save)
        scratch_parent = _folder(options.tmpdir, "--tmpdir")
        known = _known(options.known)
        pair = ImplementationPair(
            _implementation(options.impl, options.impl_cmd, options),
            _implementation(options.against, options.against_cmd, options, reference=True),
            concurrent=options.impl_cmd is not None,
        )
    except _UsageError as error:
        _line(err, f"{_PROG}: {error}")
        return 2
    seed_value = options.seed if options.seed is not None else random.SystemRandom().getrandbits(32)
    examples: int | None = options.examples
    if examples is None and options.seconds is None:
        examples = DEFAULT_EXAMPLES
    checks = {"both": "the differential check and the invariants", "differential": "the differential check"}
    if not options.quiet:
        _line(
            err,
            f"{_PROG}: {_extent(examples, options.seconds)}, seed {seed_value}, "
            f"{checks.get(options.check, 'the invariants')}: {pair.implementation!r} against {pair.reference!r}",
        )
    reporter = _Progress(err, examples, interactive=err.isatty(), quiet=options.quiet, budget=options.seconds)
    try:
        with scratch_directory(scratch_parent):
            run = fuzz(
                pair,
                examples=examples,
                seconds=options.seconds,
                seed_value=seed_value,
                differential=options.check != "invariants",
                invariants=options.check != "differential",
                exotic_kinds=kinds,
                max_failures=options.max_failures,
                save=save,
                reporter=reporter,
                interrupted=interrupted,
                known=known,
            )
    except AdapterError as error:
        reporter.clear()
        _line(err, f"{_PROG}: {_start_failure(pair, error)}")
        return 2
    except ReferenceFailure as error:
        reporter.clear()
        _line(err, f"{_PROG}: {error}; the scenario:\n{canonical_json(error.scenario, 2)}")
        return 2
    except KeyboardInterrupt:
        # A second Ctrl-C, or one where no handler of the command's could be installed.
        reporter.clear()
        return _interrupted(out, err, reporter.run, options)
    reporter.clear()
    if run.interrupted:
        return _interrupted(out, err, run, options)
    _line(out, _summary(run, options))
    return 1 if run.found else 0


def _extent(examples: int | None, seconds: float | None) -> str:
    """How much a run draws: ``200 scenarios``, ``scenarios for 60 s``, or both limits."""
    if seconds is None:
        return f"{examples} scenarios"
    if examples is None:
        return f"scenarios for {seconds:g} s"
    return f"{examples} scenarios or {seconds:g} s, whichever ends first"


def _interrupted(out: IO[str], err: IO[str], run: FuzzRun | None, options: argparse.Namespace) -> int:
    """Ctrl-C: the failures found so far on standard output, and one line on standard error; status 130."""
    if run is not None and run.found:
        _line(out, _summary(run, options))
    done = ""
    if run is not None:
        done = f" after {run.examples} scenarios"
        if run.interrupted_shrinking is not None:
            done += f", while shrinking a failure ({run.interrupted_shrinking}): --seed {run.seed} finds it again"
    _line(err, f"{_PROG}: interrupted{done}")
    return 130


@contextlib.contextmanager
def _deferred_interrupt() -> Iterator[Callable[[], bool]]:
    """While the run lasts, Ctrl-C (``SIGINT``) only raises a flag, which the run reads between scenarios; a
    second Ctrl-C raises ``KeyboardInterrupt`` at once.

    A ``KeyboardInterrupt`` raised wherever the signal lands can be swallowed (in a garbage collector callback
    of hypothesis's, leaving the run going) or end an event loop of the reference with a traceback of its own;
    the flag is read where stopping is safe. Left alone when ``SIGINT`` is not Python's default handler (ignored
    in a background job, or handled by the caller), or outside the main thread.
    """
    pressed: list[int] = []

    def handle(signum: int, frame: object) -> None:
        pressed.append(signum)
        if len(pressed) > 1:
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield lambda: False
        return
    previous = signal.signal(signal.SIGINT, handle)
    try:
        yield lambda: bool(pressed)
    finally:
        signal.signal(signal.SIGINT, previous)


def _exotic_kinds(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    kinds = tuple(dict.fromkeys(kind.strip() for kind in text.split(",") if kind.strip()))
    unknown = [kind for kind in kinds if kind not in EXOTIC_KINDS]
    if unknown:
        raise _UsageError(f"--exotic-kinds: not exotic kinds of the scenario format: {', '.join(unknown)}")
    beyond = [kind for kind in kinds if kind not in REFERENCE_EXOTIC_KINDS]
    if beyond:
        raise _UsageError(f"--exotic-kinds: the reference cannot express {', '.join(beyond)}")
    return kinds


def _known(text: str | None) -> KnownDisagreements | None:
    if text is None:
        return None
    if not text.strip():
        raise _UsageError("--known is empty: name the file")
    try:
        return KnownDisagreements.load(text)
    except KnownError as error:
        raise _UsageError(f"--known {error}") from None


def _save_directory(text: str | None) -> Path | None:
    if text is None:
        return None
    if not text.strip():
        raise _UsageError("--save is empty: name the folder")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise _UsageError(f"--save {text}: not a folder")
    existing = next(folder for folder in (path, *path.absolute().parents) if folder.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise _UsageError(f"--save {text}: cannot write in {existing}")
    return path


def _folder(text: str | None, option: str) -> str | None:
    """An existing folder the command may write in."""
    if text is None:
        return None
    if not text.strip():
        raise _UsageError(f"{option} is empty: name the folder")
    if not Path(text).is_dir():
        raise _UsageError(f"{option} {text}: not a folder")
    if not os.access(text, os.W_OK | os.X_OK):
        raise _UsageError(f"{option} {text}: permission denied")
    return text


def _implementation(
    target: str | None, command: str | None, options: argparse.Namespace, *, reference: bool = False
) -> Implementation:
    option = (
        ("--against" if reference else "--impl")
        if command is None
        else ("--against-cmd" if reference else "--impl-cmd")
    )
    if command is not None:
        if not command.strip():
            raise _UsageError(f"{option} is empty: name the command (an unset variable?)")
        try:
            return Subprocess(command, timeout=options.timeout, startup_timeout=options.startup_timeout)
        except ValueError as error:
            raise _UsageError(f"{option}: {error}") from None
    if target is None:
        # The bundled reference runs in this process, never hangs on a generated scenario, and needs no thread.
        return InProcess(REFERENCE_TARGET)
    if not target.strip():
        raise _UsageError(f"{option} is empty: name the implementation (an unset variable?)")
    return InProcess(target, timeout=options.timeout)


def _start_failure(pair: ImplementationPair, error: AdapterError) -> str:
    """Which side could not start, why, and the end of what an adapter process wrote on its standard error (an
    in-process one's is a traceback of the kit's own import machinery: its message says it all)."""
    side = pair.starting if pair.starting is not None else pair.implementation
    which = "the reference" if side is pair.reference else "the implementation"
    text = f"cannot start {which} {side!r}: {error.message}"
    if error.stderr and isinstance(side, Subprocess):
        tail = error.stderr.rstrip("\n").splitlines()[-10:]
        text += "\n--- adapter stderr (last lines) ---\n" + "\n".join(tail)
    return text


def _summary(run: FuzzRun, options: argparse.Namespace) -> str:
    lines = []
    for number, found in enumerate(run.found, start=1):
        failure = found.failure
        shrunk = f"shrunk in {found.shrink_attempts} attempts" if found.shrunk else "not shrunk (it hangs)"
        lines.append(f"Failure {number} ({found.signature}), {shrunk}:")
        lines.extend("  " + line for line in failure.reason.splitlines())
        if failure.difference is not None:
            lines.extend("  " + line for line in str(failure.difference).splitlines())
        lines.extend(f"  - {violation}" for violation in failure.violations)
        if found.saved is not None:
            scenario_file, golden_file = found.saved
            lines.append(f"  saved: {scenario_file} (rules: {', '.join(found.rules) or 'none'})")
            lines.append(f"         {golden_file} (the reference's transcript)")
            lines.append(f"  toolcanon check gives it: {found.reproduced}")
        else:
            lines.append("  the scenario (canonical JSON; --save DIR writes it as a regression scenario):")
            lines.extend("    " + line for line in failure.scenario_json.splitlines())
        lines.append("")
    if run.found and any(found.saved for found in run.found):
        target = f"--impl {options.impl}" if options.impl is not None else f"--impl-cmd {_quoted(options.impl_cmd)}"
        directory = Path(options.save)
        lines.append(
            f"Reproduce: toolcanon check {target} --scenarios {directory / 'scenarios'} "
            f"--goldens {directory / 'goldens'}"
        )
    if run.stopped is not None:
        lines.append(f"Stopped early: {run.stopped}.")
    elif run.out_of_time:
        lines.append(f"Stopped at the time budget: no scenario drawn after {run.budget:g} s (--seconds).")
    if options.known is not None:
        lines.append(_known_account(run, options.known))
    verdict = f"{len(run.found)} failure{'s' if len(run.found) != 1 else ''}" if run.found else "no failure"
    scenarios = f"{run.examples} scenario{'s' if run.examples != 1 else ''}"
    lines.append(
        f"{verdict} in {scenarios} ({run.seconds:.1f} s, {run.rate:.0f}/s, "
        f"{run.drawing_share:.0%} drawing); seed {run.seed}: repeat with --seed {run.seed}"
    )
    return "\n".join(lines)


def _known_account(run: FuzzRun, file: str) -> str:
    """How many drawn scenarios each known disagreement explained, by class and by entry."""
    if not run.classified:
        return f"Known disagreements ({file}): none shown."
    known = KnownDisagreements.load(file)
    classes = ", ".join(f"{cls} {count}" for cls, count in counts_by_class(run.classified, known).items())
    lines = [f"Known disagreements ({file}): {run.known} scenario{'s' if run.known != 1 else ''} ({classes}):"]
    for entry in known.entries:
        if entry.id in run.classified:
            lines.append(f"  {run.classified[entry.id]:>5}  {entry.cls:<10}  {entry.id} (S:{entry.scenario})")
    return "\n".join(lines)


def _quoted(command: str) -> str:
    return shlex.quote(command)


def _line(stream: IO[str], text: str) -> None:
    stream.write(visible(text) + "\n")
    stream.flush()


class _Progress(Reporter):
    """Progress on standard error: redrawn in place on a terminal, a line every few seconds otherwise."""

    def __init__(
        self, stream: IO[str], total: int | None, *, interactive: bool, quiet: bool = False, budget: float | None = None
    ) -> None:
        self.stream = stream
        self.total = total
        self.budget = budget
        self.interactive = interactive
        self.quiet = quiet
        self.shown_at = 0.0
        self.drawn = False
        self.run: FuzzRun | None = None  # the run so far, for a summary when it is interrupted

    def _due(self, now: float) -> bool:
        return now - self.shown_at >= (0.1 if self.interactive else 5.0)

    def _show(self, text: str, now: float) -> None:
        self.shown_at = now
        if self.interactive:
            self.stream.write("\r\x1b[2K" + visible(text))
            self.drawn = True
        else:
            self.stream.write(visible(text) + "\n")
        self.stream.flush()

    def progress(self, run: FuzzRun, elapsed: float) -> None:
        self.run = run
        now = time.monotonic()
        if self.quiet or not (self._due(now) or run.examples == self.total):
            return
        rate = run.examples / elapsed if elapsed > 0 else 0.0
        failures = len(run.found)
        timing = f"{elapsed:.0f} of {self.budget:g} s, " if self.budget is not None else ""
        known = f", {run.known} known" if run.classified else ""
        self._show(
            f"{self._count(run)} scenarios, {timing}{rate:.0f}/s, {failures} failure{'s' if failures != 1 else ''}"
            f"{known}",
            now,
        )

    def _count(self, run: FuzzRun) -> str:
        return str(run.examples) if self.total is None else f"{run.examples}/{self.total}"

    def shrinking(self, run: FuzzRun, signature: str, attempts: int) -> None:
        now = time.monotonic()
        if not self.quiet and (self._due(now) or attempts == 1):
            self._show(f"{self._count(run)} scenarios: shrinking a failure ({signature}), attempt {attempts}", now)

    def found(self, run: FuzzRun, found: Found) -> None:
        if self.quiet:
            return
        self.clear()
        where = f", saved as {found.saved[0]}" if found.saved is not None else ""
        self.stream.write(visible(f"failure {len(run.found)}: {found.signature}{where}") + "\n")
        self.stream.flush()

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.drawn = False
