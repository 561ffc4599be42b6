"""``InProcess``: an implementation under test that is a Python object in the kit's own process."""

from __future__ import annotations

import contextlib
import importlib
import threading
import traceback
from typing import Any

from toolcontract_conformance.exceptions import CannotStart, TimedOut
from toolcontract_conformance.implementation import (
    Errored,
    Implementation,
    ImplementationInfo,
    Outcome,
    checked_outcome,
)

__all__ = ["InProcess", "resolve"]


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
    (seconds) each scenario runs in a worker thread; one that has not answered in time is *errored* and its
    thread is abandoned (Python cannot kill a thread), so a hang costs one scenario, not the whole run.
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
        answers: list[Outcome] = []

        def work() -> None:
            try:
                answers.append(checked_outcome(implementation.run(seq, scenario)))
            except Exception as error:
                answers.append(Errored.raised(error))

        worker = threading.Thread(target=work, name=f"toolcontract-scenario-{seq}", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive() or not answers:
            return Errored(TimedOut(f"run seq {seq}", timeout).context())
        return answers[0]
