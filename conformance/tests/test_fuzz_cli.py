"""toolcanon fuzz: broken implementations are found, shrunk, saved as regression scenarios that check
reproduces; runs repeat by seed; crashes, hangs and start-up failures are reported, not raised."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from broken_implementations import BUGS, Broken, Bug

from toolcanon_conformance.adapters.inprocess import InProcess
from toolcanon_conformance.adapters.reference import ReferenceImplementation
from toolcanon_conformance.cli import main
from toolcanon_conformance.diff import Difference
from toolcanon_conformance.fuzz_cli import fuzz as run_fuzz
from toolcanon_conformance.fuzz_cli import fuzz_command, rules_of, signature_of
from toolcanon_conformance.properties import ConformanceFailure, ImplementationPair
from toolcanon_conformance.scenario import load_scenario

HERE = Path(__file__).parent
MISBEHAVING = HERE / "misbehaving_adapter.py"
BUG = {bug.name: bug for bug in BUGS}
REFERENCE = "toolcanon_conformance.adapters.reference:implementation"


def persists_the_value() -> Broken:
    """The implementation ``--impl test_fuzz_cli:persists_the_value`` names."""
    return Broken(BUG["persists-the-value"])


def replay_includes_tool_calls() -> Broken:
    return Broken(BUG["replay-includes-tool-calls"])


def two_bugs() -> Broken:
    """Two unrelated bugs at once: a logged value, and failure content without its ``Error:`` prefix."""
    first, second = BUG["persists-the-value"], BUG["failure-content-without-error-prefix"]

    @contextlib.contextmanager
    def both() -> Iterator[None]:
        with first.inject(), second.inject():
            yield

    return Broken(Bug("two-bugs", first.rule, both))


def fuzz(*arguments: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = fuzz_command(list(arguments), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def saved_files(directory: Path) -> tuple[list[Path], list[Path]]:
    return sorted((directory / "scenarios").glob("*.json")), sorted((directory / "goldens").glob("*.json"))


# --- found, saved, reproduced --------------------------------------------------------------------------


def test_a_broken_implementation_is_found_shrunk_and_saved_as_a_regression_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = f"{__name__}:persists_the_value"
    status, out, err = fuzz("--impl", broken, "--examples", "150", "--seed", "2", "--save", str(tmp_path))
    assert status == 1, out + err
    assert "Failure 1 (differs: unexpected at $.steps.*.events[*].data.value), shrunk in" in out
    assert "1 failure in " in out and "seed 2: repeat with --seed 2" in out
    assert "scenarios, " in err and "shrinking a failure" in err  # progress on standard error

    (scenario_file,), (golden_file,) = saved_files(tmp_path)
    assert scenario_file.name == golden_file.name
    scenario = load_scenario(scenario_file)  # valid against scenario.schema.json
    assert scenario.id == scenario_file.stem and scenario.id.startswith("fuzz-")
    assert scenario.rules == ("R-LOG-3",)
    # Shrunk: one tool, no hook, at most two steps, one of them a log whose event shows the value (a persist step
    # after its call, or a model step).
    assert len(scenario.data["tools"]) == 1 and scenario.data["hooks"] == []
    kinds = [next(key for key in step if key not in {"id", "abort"}) for step in scenario.data["steps"]]
    assert len(kinds) <= 2 and (kinds == ["call", "persist"] or "modelStep" in kinds), kinds
    assert ("persistence" if "persist" in kinds else "model-step") in scenario.requires
    assert "toolcanon check gives it: failed" in out
    transcript = json.loads(golden_file.read_bytes())
    assert transcript["scenario"] == scenario.id and transcript["formatVersion"] == 1

    folders = ["--scenarios", str(tmp_path / "scenarios"), "--goldens", str(tmp_path / "goldens")]
    capsys.readouterr()
    assert main(["check", "--impl", broken, *folders]) == 1
    checked = capsys.readouterr().out
    assert f"{scenario.id} failed [R-LOG-3]" in checked and ".data.value: unexpected" in checked
    assert main(["check", "--impl", REFERENCE, *folders]) == 0  # the golden is the reference's transcript


def test_a_run_repeats_by_its_seed(tmp_path: Path) -> None:
    broken = f"{__name__}:persists_the_value"
    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        status, _out, _err = fuzz("--impl", broken, "--examples", "150", "--seed", "2", "--save", str(directory))
        assert status == 1
    (one,), (golden,) = saved_files(first)
    (two,), (golden_again,) = saved_files(second)
    assert one.name == two.name and one.read_bytes() == two.read_bytes()
    assert golden.read_bytes() == golden_again.read_bytes()


def test_the_reference_passes_through_the_toolcanon_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "--impl", REFERENCE, "--examples", "40", "--seed", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("no failure in 40 scenarios (")
    assert "40/40 scenarios, " in captured.err and "0 failures" in captured.err


def test_the_invariants_alone_catch_a_broken_replay(tmp_path: Path) -> None:
    status, out, _err = fuzz(
        "--impl", f"{__name__}:replay_includes_tool_calls", "--check", "invariants", "--examples", "100", "--seed", "1"
    )
    assert status == 1
    assert "Failure 1 (invariant: not the messages of the log's tool/result events, verbatim)" in out
    assert "- $.steps." in out and "--save DIR writes it as a regression scenario" in out


def test_distinct_failures_are_each_saved_up_to_max_failures(tmp_path: Path) -> None:
    status, out, _err = fuzz(
        "--impl",
        f"{__name__}:two_bugs",
        "--examples",
        "200",
        "--seed",
        "1",  # finds both within a few scenarios and shrinks them fast; other seeds take up to twice as long
        "--max-failures",
        "2",
        "--save",
        str(tmp_path),
    )
    assert status == 1
    assert "Failure 1 (" in out and "Failure 2 (" in out and "2 failures in " in out
    scenarios, goldens = saved_files(tmp_path)
    assert len(scenarios) == len(goldens) == 2
    signatures = {line.split("(", 1)[1].split(")", 1)[0] for line in out.splitlines() if line.startswith("Failure ")}
    assert len(signatures) == 2


def test_an_implementation_over_the_protocol_is_fuzzed_concurrently_with_the_reference(tmp_path: Path) -> None:
    adapter = tmp_path / "adapter.py"
    adapter.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "from broken_implementations import BUGS, Broken\n"
        "from toolcanon_conformance.protocol import serve\n"
        "bug = next(bug for bug in BUGS if bug.name == 'failure-content-without-error-prefix')\n"
        "raise SystemExit(serve(Broken(bug)))\n",
        encoding="utf-8",
    )
    command = f"{sys.executable} {adapter}"
    status, out, _err = fuzz("--impl-cmd", command, "--examples", "100", "--seed", "1", "--save", str(tmp_path / "s"))
    assert status == 1, out
    assert "Failure 1 (differs: " in out and "toolcanon check gives it: failed" in out
    assert "Reproduce: toolcanon check --impl-cmd " in out


# --- broken adapters, start-up and usage errors -----------------------------------------------------------


def misbehaving(mode: str) -> str:
    return f"{sys.executable} {MISBEHAVING} {mode}"


def test_a_crash_is_a_failure_reported_without_a_traceback() -> None:
    status, out, err = fuzz("--impl-cmd", misbehaving("crash"), "--examples", "10", "--seed", "1")
    assert status == 1
    assert "Failure 1 (errored: crashed)" in out and "exited with code 139" in out
    assert "Traceback" not in out + err


def test_a_hang_is_saved_unshrunk_and_ends_the_run(tmp_path: Path) -> None:
    status, out, err = fuzz(
        "--impl-cmd", misbehaving("hang"), "--timeout", "1", "--examples", "10", "--seed", "1", "--save", str(tmp_path)
    )
    assert status == 1
    assert "Failure 1 (errored: timed-out), not shrunk (it hangs)" in out
    assert "Stopped early: the implementation did not answer a scenario in time." in out
    assert "toolcanon check gives it: errored" in out
    (scenario_file,), _goldens = saved_files(tmp_path)
    assert load_scenario(scenario_file).rules == ()
    assert "Traceback" not in out + err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--impl-cmd", misbehaving("start-crash")], "cannot start the implementation Subprocess("),
        (["--impl", "no_such_module:implementation"], "No module named 'no_such_module'"),
        (["--impl", REFERENCE, "--against-cmd", misbehaving("start-crash")], "cannot start the reference Subprocess("),
    ],
)
def test_an_implementation_that_cannot_start_is_a_start_up_error(arguments: list[str], message: str) -> None:
    status, out, err = fuzz(*arguments, "--examples", "5")
    assert status == 2
    assert message in err and out == ""
    assert "Traceback" not in err


def test_a_reference_that_does_not_run_a_generated_scenario_is_reported_not_shrunk() -> None:
    status, out, err = fuzz("--impl", REFERENCE, "--against-cmd", misbehaving("errored"), "--examples", "20")
    assert status == 2 and out == ""
    assert "the reference did not run a generated scenario: Errored(" in err and '"formatVersion": 1' in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--impl", REFERENCE, "--examples", "0"], "is not a count"),
        (["--impl", REFERENCE, "--impl-cmd", "x"], "not allowed with argument"),
        ([], "one of the arguments --impl --impl-cmd is required"),
        (["--impl", REFERENCE, "--exotic-kinds", "nan,no-such-kind"], "not exotic kinds of the scenario format"),
        (["--impl", REFERENCE, "--exotic-kinds", "bigint"], "the reference cannot express bigint"),
        (["--impl-cmd", " "], "--impl-cmd is empty"),
        (["--impl", REFERENCE, "--timeout", "0"], "is not a number of seconds"),
    ],
)
def test_usage_errors(arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _out, err = fuzz(*arguments)
    assert status == 2
    assert message in err + capsys.readouterr().err


def test_save_and_tmpdir_must_be_folders(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("", encoding="utf-8")
    for option in ("--save", "--tmpdir"):
        status, _out, err = fuzz("--impl", REFERENCE, option, str(file))
        assert status == 2 and f"{option} {file}: not a folder" in err


def test_the_session_logs_go_to_a_scratch_folder_removed_afterwards(tmp_path: Path) -> None:
    seen: list[str] = []

    class Watching(ReferenceImplementation):
        """The reference, noting the temporary folder (where its session logs go) while it runs."""

        def run(self, seq: int, scenario: dict[str, Any]) -> Any:
            seen.append(tempfile.gettempdir())
            return super().run(seq, scenario)

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys.modules[__name__], "watching", Watching, raising=False)
        status, _out, _err = fuzz("--impl", f"{__name__}:watching", "--tmpdir", str(scratch), "--examples", "5")
    assert status == 0  # nothing to shrink: the run is its five scenarios
    assert seen and all(Path(folder).parent == scratch for folder in seen)
    assert list(scratch.iterdir()) == []
    assert tempfile.gettempdir() != seen[0]


# --- what tells failures apart, and the rules they name -------------------------------------------------


def failure(**fields: Any) -> ConformanceFailure:
    return ConformanceFailure("reason", {"formatVersion": 1, "id": "generated", "steps": []}, **fields)


def test_a_failure_is_known_by_where_and_how_it_differs_not_by_step_ids_or_indices() -> None:
    logged = Difference(("steps", "s3", "events", 1, "data", "value"), "unexpected", None, "null")
    same = Difference(("steps", "s7", "events", 4, "data", "value"), "unexpected", None, "{}")
    deep = Difference(("steps", "c", "result", "value", "keep", "x"), "value", "1", "2")
    assert signature_of(failure(difference=logged)) == "differs: unexpected at $.steps.*.events[*].data.value"
    assert signature_of(failure(difference=logged)) == signature_of(failure(difference=same))
    assert signature_of(failure(difference=deep)) == "differs: value at $.steps.*.result.value"
    broken = failure(violations=["$.steps.s2.frozen: the data at value ['a'] of 's0' can be mutated"])
    assert signature_of(broken) == "invariant: the data at value ['a'] of 's0' can be mutated"
    assert signature_of(failure(kind="errored", context={"kind": "crashed"})) == "errored: crashed"
    raised = failure(kind="errored", context={"kind": "raised", "message": "KeyError: 'x'"})
    assert signature_of(raised) == "errored: raised KeyError"
    assert rules_of(failure(difference=logged)) == ("R-LOG-3",)
    assert rules_of(failure(difference=Difference(("steps", "c", "result", "meta"), "missing", "null", None))) == (
        "R-NORM-5",
    )
    assert rules_of(broken) == ("R-SNAP-6",)
    unprefixed = Difference(("steps", "c", "nested", 0, "result", "content", 0, "text"), "value", '"Error: x"', '"x"')
    assert rules_of(failure(difference=unprefixed)) == ("R-NORM-8",)
    assert rules_of(failure(kind="errored", context={"kind": "crashed"})) == ()


class Hanging(Broken):
    """Hangs on every scenario that persists a call (it never answers the others wrongly)."""

    def run(self, seq: int, scenario: dict[str, Any]) -> Any:
        if any("persist" in step for step in scenario["steps"]):
            time.sleep(60)
        return super().run(seq, scenario)


def hanging() -> Hanging:
    return Hanging(BUG["persists-the-value"])


def test_an_in_process_hang_is_stopped_at_its_deadline() -> None:
    began = time.monotonic()
    status, out, _err = fuzz("--impl", f"{__name__}:hanging", "--timeout", "0.5", "--examples", "50", "--seed", "1")
    assert status == 1
    assert "Failure 1 (errored: timed-out), not shrunk (it hangs)" in out and "within 0.5 s" in out
    assert time.monotonic() - began < 30


class Interrupted(Broken):
    """Persists the value, and is interrupted (Ctrl-C) at its tenth scenario."""

    runs = 0

    def run(self, seq: int, scenario: dict[str, Any]) -> Any:
        Interrupted.runs += 1
        if Interrupted.runs == 10:
            raise KeyboardInterrupt
        return super().run(seq, scenario)


def interrupted() -> Interrupted:
    Interrupted.runs = 0
    return Interrupted(BUG["persists-the-value"])


def test_an_interrupted_run_reports_what_it_found_so_far() -> None:
    status, out, err = fuzz("--impl", f"{__name__}:interrupted", "--examples", "500", "--seed", "3")
    assert status == 130
    assert "toolcanon fuzz: interrupted after " in err
    assert "Traceback" not in out + err


# --- a time budget, and Ctrl-C -------------------------------------------------------------------------


def test_a_time_budget_ends_the_drawing_and_the_run_reports_what_ran() -> None:
    began = time.monotonic()
    status, out, err = fuzz("--impl", REFERENCE, "--seconds", "1", "--seed", "1")
    assert status == 0, out + err
    assert time.monotonic() - began < 30
    assert err.startswith("toolcanon fuzz: scenarios for 1 s, seed 1, ")
    lines = out.splitlines()
    assert lines[0] == "Stopped at the time budget: no scenario drawn after 1 s (--seconds)."
    assert re.fullmatch(r"no failure in [1-9]\d* scenarios? \(1\.\d s, .*; seed 1: repeat with --seed 1", lines[1])


def test_the_count_ends_a_run_with_a_time_budget_left() -> None:
    status, out, _err = fuzz("--impl", REFERENCE, "--seconds", "600", "--examples", "5", "--seed", "1", "--quiet")
    assert status == 0
    assert "time budget" not in out and out.startswith("no failure in 5 scenarios (")


def test_a_run_asked_to_stop_ends_before_its_next_scenario() -> None:
    asked: list[bool] = []

    def interrupted() -> bool:
        asked.append(True)
        return len(asked) > 8

    run = run_fuzz(ImplementationPair(InProcess(REFERENCE)), examples=10_000, seed_value=1, interrupted=interrupted)
    assert run.interrupted and run.interrupted_shrinking is None
    assert 0 < run.examples < 10


SIGINT_CHILD = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "  # as from a shell's foreground
    "from toolcanon_conformance.cli import main; sys.exit(main())"
)
PROGRESS = re.compile(r"\d+/\d+ scenarios, \d+/s, \d+ failures?")


@pytest.mark.parametrize("wait", [0.0, 0.7])
def test_ctrl_c_ends_a_run_promptly_with_one_line(wait: float) -> None:
    command = [sys.executable, "-c", SIGINT_CHILD, "fuzz", "--impl", REFERENCE, "--examples", "1000000", "--seed", "2"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None and child.stdout is not None
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:  # readline has no timeout: a thread reads, the test waits on the queue, bounded
        for line in child.stderr or ():
            lines.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        opening = lines.get(timeout=60)
        assert opening.startswith("toolcanon fuzz: 1000000 scenarios, seed 2, "), opening
        first = lines.get(timeout=60)  # after the first scenario: the run is under way
        assert PROGRESS.fullmatch(first.rstrip("\n")), first
        time.sleep(wait)
        child.send_signal(signal.SIGINT)
        sent = time.monotonic()
        status = child.wait(timeout=30)
        waited = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    reader.join(timeout=10)
    out = child.stdout.read()
    err = "".join(lines.get_nowait() for _ in range(lines.qsize()))
    assert waited < 10
    assert status == 130, err
    assert out == ""
    assert "Traceback" not in err and "Exception ignored" not in err, err
    rest = [line for line in err.splitlines() if not PROGRESS.fullmatch(line)]
    assert len(rest) == 1 and re.fullmatch(r"toolcanon fuzz: interrupted after \d+ scenarios", rest[0]), err


class InterruptedInGarbageCollection(ReferenceImplementation):
    """The reference, which at its fifth scenario gets Ctrl-C while the garbage collector runs its callbacks:
    a ``KeyboardInterrupt`` raised there is printed and dropped, and the run would go on."""

    runs = 0

    def run(self, seq: int, scenario: dict[str, Any]) -> Any:
        InterruptedInGarbageCollection.runs += 1
        if InterruptedInGarbageCollection.runs == 5:

            def interrupt(phase: str, info: dict[str, int]) -> None:
                gc.callbacks.remove(interrupt)
                os.kill(os.getpid(), signal.SIGINT)

            gc.callbacks.append(interrupt)
            gc.collect()
        return super().run(seq, scenario)


def interrupted_in_gc() -> InterruptedInGarbageCollection:
    return InterruptedInGarbageCollection()


def test_ctrl_c_during_a_garbage_collection_still_ends_the_run() -> None:
    target = f"{__name__}:interrupted_in_gc"
    command = [
        sys.executable,
        "-c",
        SIGINT_CHILD,
        "fuzz",
        "--impl",
        target,
        "--examples",
        "200",
        "--seed",
        "1",
        "--quiet",
    ]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, env=environment)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "toolcanon fuzz: interrupted after 5 scenarios\n")
