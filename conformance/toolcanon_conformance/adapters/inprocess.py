"""``InProcess``: an implementation under test that is a Python object in the kit's own process."""

from __future__ import annotations

import contextlib
import importlib
import signal
import threading
import traceback
from typing import Any, Final

from toolcanon_conformance.exceptions import CannotStart, TimedOut
from toolcanon_conformance.implementation import (
    Errored,
    Implementation,
    ImplementationInfo,
    Outcome,
    checked_outcome,
)

__all__ = ["BUNDLED_REFERENCE", "InProcess", "default_timeout", "resolve"]

BUNDLED_REFERENCE: Final = "toolcanon_conformance.adapters.reference:implementation"
"""The kit's bundled reference, as ``module:attr``."""


def default_timeout(target: str) -> float | None:
    """Seconds per scenario when none is given: 30, as for an adapter process, since a named implementation may
    hang as one may; none for the bundled reference, which never hangs on a scenario (a deadline costs it)."""
    return None if target == BUNDLED_REFERENCE else 30.0


def resolve(target: str) -> Implementation:
    """The implementation named ``module:attr`` (``attr`` may be dotted).

    The attribute is either an implementation (an object with ``start``, ``run`` and ``stop``) or a callable
    taking no argument that returns one (a class, a factory). Raises :class:`CannotStart` naming what is wrong.
    """
    module_name, colon, attr_path = target.partition(":")
    if not colon or not module_name or not attr_path:
        raise CannotStart(f"{target!r} is not of the form module:attr")
    try:
        found: Any = importlib.import_module(module_name)
    except Exception as error:
        raise CannotStart(
            f"cannot import {module_name!r} for {target!r}: {type(error).__name__}: {error}",
            stderr=traceback.format_exc(),
        ) from error
    for attr in attr_path.split("."):
        try:
            found = getattr(found, attr)
        except AttributeError:
            raise CannotStart(f"{target!r}: {module_name!r} has no attribute {attr_path!r}") from None
    if isinstance(found, type) or (not isinstance(found, Implementation) and callable(found)):
        try:
            found = found()
        except Exception as error:
            raise CannotStart(
                f"{target!r}: calling it raised {type(error).__name__}: {error}",
                stderr=traceback.format_exc(),
            ) from error
    if not isinstance(found, Implementation):
        raise CannotStart(f"{target!r} is a {type(found).__name__}, not an implementation (start, run, stop)")
    return found


class InProcess:
    """An :class:`Implementation` wrapping a Python object, named ``module:attr`` or given directly.

    Whatever the wrapped object raises while running a scenario, or any answer that is not an outcome,
    becomes an :class:`Errored` outcome with the traceback as context: it is never a pass. With ``timeout``
    (seconds) a scenario that has not answered in time is *errored* ``timed-out``, so a hang costs one
    scenario, not the whole run. The deadline is kept by an alarm signal when the run is in the main thread
    and nothing else holds ``SIGALRM`` (pytest-timeout's signal method does): the alarm interrupts the run
    where it is, in the thread it runs in, and repeats each ``timeout`` for a run that swallows it. Otherwise
    the scenario runs in a worker thread, abandoned at the deadline (Python cannot stop a thread).
    """

    def __init__(self, target: str | Implementation, *, timeout: float | None = None) -> None:
        self.target = target
        self.timeout = timeout
        self._resolved: Implementation | None = None
        self._implementation: Implementation | None = None

    def __repr__(self) -> str:
        return f"InProcess({self.target!r})"

    def resolve(self) -> Implementation:
        """The object the next :meth:`start` starts: a named target is imported (a factory called) now, so
        that a target that cannot be imported is known before anything runs; raises :class:`CannotStart`."""
        if self._resolved is None:
            self._resolved = resolve(self.target) if isinstance(self.target, str) else self.target
        return self._resolved

    def start(self) -> ImplementationInfo:
        """Resolve the target and start it; anything it raises becomes :class:`CannotStart`."""
        implementation = self.resolve()
        self._resolved = None  # each start resolves afresh, as a factory target expects
        try:
            info = implementation.start()
        except Exception as error:
            raise CannotStart(
                f"{self.target!r}: start raised {type(error).__name__}: {error}",
                stderr=traceback.format_exc(),
            ) from error
        if not isinstance(info, ImplementationInfo):
            raise CannotStart(f"{self.target!r}: start returned {type(info).__name__}, not ImplementationInfo")
        self._implementation = implementation
        return info

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        """Run one scenario in the wrapped object; never raises."""
        implementation = self._implementation
        if implementation is None:
            return Errored({"kind": "not-started", "message": "run before start"})
        if self.timeout is None:
            try:
                return checked_outcome(implementation.run(seq, scenario))
            except Exception as error:
                return Errored.raised(error)
        return self._run_with_timeout(implementation, seq, scenario, self.timeout)

    def stop(self) -> None:
        """Stop the wrapped object (once); what it raises on the way out is ignored."""
        implementation, self._implementation = self._implementation, None
        if implementation is not None:
            # A failing stop must not hide the results of the run.
            with contextlib.suppress(Exception):
                implementation.stop()

    @staticmethod
    def _run_with_timeout(
        implementation: Implementation, seq: int, scenario: dict[str, Any], timeout: float
    ) -> Outcome:
        if _alarm_is_free():
            return _run_under_alarm(implementation, seq, scenario, timeout)
        return _run_on_worker(implementation, seq, scenario, timeout)


class _Expired(BaseException):
    """Raised by the alarm into a run past its deadline: not an ``Exception``, so that the implementation's own
    handlers let it through."""


def _alarm_is_free() -> bool:
    """Whether this run can keep its deadline with ``SIGALRM``: the main thread, and no handler of another."""
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
    )


def _timed_out(seq: int, timeout: float) -> Errored:
    return Errored(TimedOut(f"run seq {seq}", timeout).context())


def _run_under_alarm(implementation: Implementation, seq: int, scenario: dict[str, Any], timeout: float) -> Outcome:
    """Run in this thread; the alarm raises :class:`_Expired` into a run still going at the deadline."""
    running = True
    expired = False

    def expire(signum: int, frame: object) -> None:
        nonlocal expired
        if running:
            expired = True
            raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout, timeout)
            outcome = checked_outcome(implementation.run(seq, scenario))
        except Exception as error:
            outcome = Errored.raised(error)
        finally:
            running = False
    except _Expired:
        outcome = _timed_out(seq, timeout)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # a run that caught the alarm's exception and answered after its deadline timed out all the same
    return _timed_out(seq, timeout) if expired else outcome


def _run_on_worker(implementation: Implementation, seq: int, scenario: dict[str, Any], timeout: float) -> Outcome:
    """Run in a worker thread, abandoned when it has not answered at the deadline."""
    answers: list[Outcome] = []

    def work() -> None:
        try:
            answers.append(checked_outcome(implementation.run(seq, scenario)))
        except Exception as error:
            answers.append(Errored.raised(error))

    worker = threading.Thread(target=work, name=f"toolcanon-scenario-{seq}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive() or not answers:
        return _timed_out(seq, timeout)
    return answers[0]
