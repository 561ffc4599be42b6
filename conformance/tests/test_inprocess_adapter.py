"""InProcess: a Python object as the implementation under test; what it raises is errored, never passed."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from toolcontract_conformance.adapters.inprocess import InProcess, resolve
from toolcontract_conformance.exceptions import CannotStart
from toolcontract_conformance.implementation import Errored, ImplementationInfo, Outcome, Ran

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
        (f"{__name__}:not_an_implementation", "is a int, not an implementation"),
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
