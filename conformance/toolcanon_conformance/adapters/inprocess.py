"""``InProcess``: an implementation under test that is a Python object in the kit's own process."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import signal
import sys
import threading
import traceback
from pathlib import Path
from types import ModuleType
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

    ``module`` is a dotted module name, or a Python file (``./adapter.py``, ``adapter.py``, any name ending in
    ``.py`` or holding a ``/``), imported as ``python FILE`` would run it: its folder first on the import path.
    The attribute is either an implementation (an object with ``start``, ``run`` and ``stop``) or a callable
    taking no argument that returns one (a class, a factory). Raises :class:`CannotStart` naming what is wrong,
    in one line (an exception raised by the implementation's own code, with where it was raised).
    """
    module_name, colon, attr_path = target.rpartition(":")
    if not colon or not module_name or not attr_path:
        raise CannotStart(f"{target!r} is not of the form module:attr ({_FORMS})")
    found: Any = _import(module_name, attr_path)
    for attr in attr_path.split("."):
        try:
            found = getattr(found, attr)
        except AttributeError:
            raise CannotStart(f"{module_name!r} has no attribute {attr_path!r}") from None
    called = isinstance(found, type) or (not isinstance(found, Implementation) and callable(found))
    if called:
        try:
            found = found()
        except Exception as error:
            raise CannotStart(f"calling {attr_path!r} of {module_name!r} raised {_raised(error)}") from error
    if not isinstance(found, Implementation):
        kind = type(found).__name__
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        what = "returned" if called else "is"
        raise CannotStart(
            f"{attr_path!r} of {module_name!r} {what} {article} {kind}, not an implementation "
            "(an object with start, run and stop, or a class or factory returning one)"
        )
    return found


_FORMS: Final = "a dotted module name, pkg.adapter:implementation, or a Python file, ./adapter.py:implementation"


def _is_file(module_name: str) -> bool:
    return module_name.endswith(".py") or "/" in module_name or os.sep in module_name


def _import(module_name: str, attr_path: str) -> ModuleType:
    """The module of a target: imported by name, or from its file."""
    if _is_file(module_name):
        return _import_file(module_name)
    if not all(part.isidentifier() for part in module_name.split(".")):
        raise CannotStart(f"{module_name!r} is not a module name: MODULE:ATTR takes {_FORMS}")
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name
        if missing is None or not (module_name == missing or module_name.startswith(missing + ".")):
            raise CannotStart(f"cannot import {module_name!r}: {_raised(error)}") from error
        # The module itself is not there: importlib's traceback would say nothing more.
        raise CannotStart(
            f"cannot import {module_name!r}: No module named {missing!r}{_beside(missing, attr_path)}"
        ) from None
    except Exception as error:
        raise CannotStart(f"cannot import {module_name!r}: {_raised(error)}") from error


def _beside(missing: str, attr_path: str) -> str:
    """A hint when the missing module is a file or folder of the current folder, which is not importable."""
    here = os.getcwd()
    if missing != missing.partition(".")[0] or any(os.path.abspath(entry or ".") == here for entry in sys.path):
        return ""
    if os.path.isfile(f"{missing}.py"):
        return (
            f" ({missing}.py is in the current folder, which is not on the import path: give the file, "
            f"./{missing}.py:{attr_path}, or set PYTHONPATH=.)"
        )
    if os.path.isdir(missing):
        return f" (the folder {missing} is in the current folder, which is not on the import path: set PYTHONPATH=.)"
    return ""


def _import_file(file: str) -> ModuleType:
    """The module of a Python file, under the file's name: its folder first on ``sys.path`` (as ``python FILE``
    has it, so that the modules beside it import), loaded once."""
    path = Path(file)
    if not path.is_file():
        problem = "that is a folder" if path.is_dir() else "no such file"
        raise CannotStart(f"cannot import {file!r}: {problem} (MODULE:ATTR takes {_FORMS})")
    resolved = path.resolve()
    name = resolved.stem
    if not name.isidentifier():
        raise CannotStart(f"cannot import {file!r}: {name!r} is not a module name: rename the file")
    loaded = sys.modules.get(name)
    if loaded is not None:
        where = getattr(loaded, "__file__", None)
        if where is not None and Path(where).resolve() == resolved:
            return loaded
        other = f"from {where}" if where else "built in"
        raise CannotStart(f"cannot import {file!r}: the module {name!r} is imported already ({other}): rename the file")
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise CannotStart(f"cannot import {file!r}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs: dataclasses and the like look their module up there
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise CannotStart(f"cannot import {file!r}: {_raised(error)}") from error
    return module


def _raised(error: BaseException) -> str:
    """``TypeError: message (at FILE:LINE)``: the exception, and where in code other than the kit's and
    importlib's it was raised (a syntax error names its place itself)."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith("<frozen") and frame.filename != __file__
    ]
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames and not isinstance(error, SyntaxError) else ""
    return f"{type(error).__name__}: {error}{where}"


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
