"""InProcess: a Python object as the implementation under test; what it raises is errored, never passed."""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest

from toolcanon_conformance.adapters.inprocess import BUNDLED_REFERENCE, InProcess, default_timeout, resolve
from toolcanon_conformance.exceptions import CannotStart
from toolcanon_conformance.implementation import Errored, ImplementationInfo, Outcome, Ran

INFO = ImplementationInfo("fake", "python", "1")
RELEASE = threading.Event()


class Behaving:
    def start(self) -> ImplementationInfo:
        return INFO

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        mode = scenario.get("mode")
        if mode == "raise":
            raise KeyError("steps")
        if mode == "nonsense":
            return None  # type: ignore[return-value]
        if mode == "bytes":
            return Ran(b"{}")  # type: ignore[arg-type]
        if mode == "hang":
            RELEASE.wait(10)
        return Ran("{}")

    def stop(self) -> None:
        pass


class FailsToStart(Behaving):
    def start(self) -> ImplementationInfo:
        raise OSError("no registry")


instance = Behaving()
not_an_implementation = 42


def factory() -> Behaving:
    return Behaving()


def started(target: Any, **options: Any) -> InProcess:
    implementation = InProcess(target, **options)
    assert implementation.start() == INFO
    return implementation


def test_resolve_accepts_an_object_a_class_or_a_factory() -> None:
    assert resolve(f"{__name__}:instance") is instance
    assert isinstance(resolve(f"{__name__}:Behaving"), Behaving)
    assert isinstance(resolve(f"{__name__}:factory"), Behaving)


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("no_colon", "not of the form module:attr"),
        ("nonexistent_module_xyz:thing", "cannot import 'nonexistent_module_xyz'"),
        (f"{__name__}:missing", "has no attribute 'missing'"),
        (f"{__name__}:not_an_implementation", "is an int, not an implementation"),
    ],
)
def test_resolve_names_what_is_wrong(target: str, words: str) -> None:
    with pytest.raises(CannotStart, match=words):
        resolve(target)


def test_a_failing_start_is_cannot_start() -> None:
    with pytest.raises(CannotStart, match="start raised OSError: no registry"):
        InProcess(FailsToStart()).start()


@pytest.mark.parametrize(
    ("mode", "words"),
    [("raise", "KeyError: 'steps'"), ("nonsense", "run returned NoneType"), ("bytes", "not a str")],
)
def test_what_the_object_gets_wrong_is_errored(mode: str, words: str) -> None:
    outcome = started(f"{__name__}:instance").run(0, {"id": "s", "mode": mode})
    assert isinstance(outcome, Errored)
    assert words in outcome.context["message"]
    if mode == "raise":
        assert "Traceback" in outcome.context["traceback"]


def test_run_before_start_is_errored() -> None:
    assert isinstance(InProcess(Behaving()).run(0, {"id": "s"}), Errored)


def test_a_hang_is_errored_after_the_timeout_and_the_next_scenario_runs() -> None:
    implementation = started(Behaving(), timeout=0.2)
    try:
        outcome = implementation.run(0, {"id": "s", "mode": "hang"})
        assert isinstance(outcome, Errored) and outcome.context["kind"] == "timed-out"
        assert implementation.run(1, {"id": "t"}) == Ran("{}")
    finally:
        RELEASE.set()
    implementation.stop()
    implementation.stop()


# --- how the deadline is kept ------------------------------------------------------------------------------


class Watched:
    """Runs each scenario's ``mode``, noting the thread it ran in."""

    def __init__(self) -> None:
        self.threads: list[str] = []
        self.never = threading.Event()

    def start(self) -> ImplementationInfo:
        return INFO

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        self.threads.append(threading.current_thread().name)
        mode = scenario.get("mode")
        if mode == "wait":
            self.never.wait(10)
        if mode == "spin":
            while not self.never.is_set():
                pass
        if mode in ("swallow", "swallow-and-wait"):
            try:
                self.never.wait(10)
            except BaseException:
                if mode == "swallow-and-wait":
                    self.never.wait(10)
        return Ran("{}")

    def stop(self) -> None:
        self.never.set()


def _kind(outcome: Outcome) -> str | None:
    return outcome.context.get("kind") if isinstance(outcome, Errored) else None


@pytest.fixture
def alarm_free() -> None:
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        pytest.skip("needs signal.setitimer and the main thread: the alarm keeps the deadline only there")
    if signal.getsignal(signal.SIGALRM) != signal.SIG_DFL:
        pytest.skip("needs SIGALRM free: another handler (pytest-timeout's signal method?) holds it")


@pytest.mark.usefixtures("alarm_free")
@pytest.mark.parametrize("mode", ["wait", "spin", "swallow", "swallow-and-wait"])
def test_the_alarm_stops_a_run_in_its_own_thread_however_it_hangs(mode: str) -> None:
    watched = Watched()
    implementation = started(watched, timeout=0.1)
    try:
        outcome = implementation.run(0, {"id": "s", "mode": mode})
        assert _kind(outcome) == "timed-out"
        assert outcome.context["message"] == "no answer to run seq 0 within 0.1 s"  # type: ignore[union-attr]
        assert implementation.run(1, {"id": "t"}) == Ran("{}")
    finally:
        implementation.stop()
    assert watched.threads == [threading.main_thread().name] * 2
    # nothing is left armed or installed
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL


@pytest.mark.usefixtures("alarm_free")
def test_a_run_that_answers_in_time_leaves_no_alarm_behind() -> None:
    watched = Watched()
    implementation = started(watched, timeout=0.1)
    assert implementation.run(0, {"id": "s"}) == Ran("{}")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
    implementation.stop()


@pytest.mark.usefixtures("alarm_free")
def test_a_sigalrm_held_by_another_handler_is_left_alone_and_a_worker_thread_keeps_the_deadline() -> None:
    caught: list[int] = []

    def another(signum: int, frame: object) -> None:
        caught.append(signum)

    signal.signal(signal.SIGALRM, another)
    watched = Watched()
    try:
        implementation = started(watched, timeout=0.1)
        assert _kind(implementation.run(0, {"id": "s", "mode": "wait"})) == "timed-out"
        assert watched.threads == ["toolcanon-scenario-0"]
        assert signal.getsignal(signal.SIGALRM) is another
        assert caught == []
    finally:
        watched.never.set()
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def test_a_named_implementation_has_an_adapter_process_s_default_deadline_and_the_bundled_reference_none() -> None:
    from toolcanon_conformance.cli import DEFAULT_IMPLEMENTATION
    from toolcanon_conformance.fuzz_cli import REFERENCE_TARGET
    from toolcanon_conformance.plugin import _DEFAULT_IMPLEMENTATION

    assert default_timeout(f"{__name__}:instance") == 30.0
    assert default_timeout(BUNDLED_REFERENCE) is None
    assert DEFAULT_IMPLEMENTATION == REFERENCE_TARGET == _DEFAULT_IMPLEMENTATION == BUNDLED_REFERENCE
