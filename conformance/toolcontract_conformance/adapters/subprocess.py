"""``Subprocess``: an implementation under test in any language, reached through its adapter process."""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any

from toolcontract_conformance import protocol
from toolcontract_conformance.exceptions import AdapterError, CannotStart, Crashed, InvalidResponse, TimedOut
from toolcontract_conformance.implementation import Errored, ImplementationInfo, Outcome

__all__ = ["Subprocess"]

_STDERR_KEPT = 256 * 1024  # bytes of an adapter's stderr kept in memory
_STDERR_SHOWN = 8000  # characters of it attached to one error


class Subprocess:
    """An :class:`Implementation` speaking the adapter protocol over the standard streams of ``command``.

    ``command`` is an argument list, or a string split like a POSIX shell would. The adapter has
    ``startup_timeout`` seconds to answer ``start`` and ``timeout`` seconds per scenario. Its standard error is
    captured and attached to every error. A crash, a hang, a line that is not a valid answer, or an answer
    for another ``seq`` makes that scenario *errored* (never a pass); the process is then killed and started
    again for the next scenario (up to ``max_restarts`` failed restarts in a row, after which every remaining
    scenario is errored at once). With ``validate_protocol`` every message, sent and received, is checked
    against the protocol's JSON Schemas.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float = 30.0,
        startup_timeout: float = 30.0,
        validate_protocol: bool = False,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_restarts: int = 3,
    ) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("empty adapter command")
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.validate_protocol = validate_protocol
        self.env = None if env is None else dict(env)
        self.cwd = cwd
        self.max_restarts = max_restarts
        #: The metadata of the last successful handshake.
        self.info: ImplementationInfo | None = None
        #: How many times the adapter process was started.
        self.launches = 0
        self._connection: _Connection | None = None
        self._failed_restarts = 0

    def __repr__(self) -> str:
        return f"Subprocess({shlex.join(self.argv)!r})"

    def start(self) -> ImplementationInfo:
        """Launch the adapter and do the handshake; raises an :class:`AdapterError` when that fails."""
        if self._connection is not None and self._connection.alive() and self.info is not None:
            return self.info
        self._discard()
        connection = _Connection.launch(self.argv, self.env, self.cwd)
        self.launches += 1
        try:
            self.info = self._handshake(connection)
        except AdapterError as error:
            error.stderr = connection.kill_and_collect_stderr()
            raise
        self._connection = connection
        return self.info

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        """Send one scenario and read its answer; every failure is an :class:`Errored` outcome, never raised."""
        if self._connection is None or not self._connection.alive():
            restarted = self._restart()
            if isinstance(restarted, Errored):
                return restarted
        connection = self._connection
        assert connection is not None
        mark = connection.stderr_mark()
        command = protocol.run_command(seq, scenario)
        if self.validate_protocol:
            problems = protocol.schema_errors("command", command)
            if problems:
                return Errored({"kind": "invalid-command", "message": "; ".join(problems)})
        try:
            line = self._exchange(connection, command, f"run seq {seq}", self.timeout)
            return protocol.parse_run_response(
                protocol.decode_line(line), seq, validate=self.validate_protocol, line=line
            )
        except AdapterError as error:
            self._discard()
            error.stderr = connection.stderr_since(mark)
            return Errored(error.context())

    def stop(self) -> None:
        """Send ``stop`` and let the adapter exit (killing it if it lingers); idempotent."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.stop()

    # --- internals -----------------------------------------------------------------------------------

    def _handshake(self, connection: _Connection) -> ImplementationInfo:
        try:
            line = self._exchange(connection, protocol.start_command(), "start", self.startup_timeout)
        except Crashed as crashed:
            raise CannotStart(
                f"{shlex.join(self.argv)!r} exited before answering start"
                + ("" if crashed.returncode is None else f" (exit code {crashed.returncode})"),
                returncode=crashed.returncode,
            ) from None
        return protocol.parse_start_response(protocol.decode_line(line), validate=self.validate_protocol, line=line)

    def _restart(self) -> Outcome | None:
        if self._failed_restarts >= self.max_restarts:
            return Errored(
                {
                    "kind": "cannot-start",
                    "message": f"gave up restarting the adapter after {self._failed_restarts} failed attempts",
                }
            )
        try:
            self.start()
        except AdapterError as error:
            self._failed_restarts += 1
            context = error.context()
            context["phase"] = "restart"
            return Errored(context)
        self._failed_restarts = 0
        return None

    @staticmethod
    def _exchange(connection: _Connection, command: dict[str, Any], phase: str, timeout: float) -> str:
        connection.send(protocol.encode(command))
        return connection.receive(phase, timeout)

    def _discard(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.kill_and_collect_stderr()


class _Connection:
    """One adapter process: a line queue fed by its stdout, and a bounded record of its stderr."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr = bytearray()
        self._stderr_dropped = 0
        self._stderr_lock = threading.Lock()
        assert process.stdout is not None and process.stderr is not None
        self._stdout_reader = threading.Thread(target=self._read_stdout, args=(process.stdout,), daemon=True)
        self._stderr_reader = threading.Thread(target=self._read_stderr, args=(process.stderr,), daemon=True)
        self._stdout_reader.start()
        self._stderr_reader.start()

    @classmethod
    def launch(cls, argv: list[str], env: dict[str, str] | None, cwd: str | os.PathLike[str] | None) -> _Connection:
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                # Its own process group, so that killing it also kills what a wrapper script started.
                start_new_session=True,
            )
        except OSError as error:
            raise CannotStart(f"cannot launch {shlex.join(argv)!r}: {error}") from error
        return cls(process)

    def _read_stdout(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in iter(stream.readline, b""):
                self._lines.put(line)
        self._lines.put(None)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
                with self._stderr_lock:
                    self._stderr += chunk
                    excess = len(self._stderr) - _STDERR_KEPT
                    if excess > 0:
                        del self._stderr[:excess]
                        self._stderr_dropped += excess

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, line: str) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(line.encode("ascii") + b"\n")
            stdin.flush()
        except (OSError, ValueError):
            pass  # a dead adapter: receive() then sees the end of its output and reports the crash

    def receive(self, phase: str, timeout: float) -> str:
        try:
            raw = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimedOut(phase, timeout) from None
        if raw is None:
            self._lines.put(None)  # the end stays the end for whoever asks next
            try:
                returncode: int | None = self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                returncode = None
            self._stderr_reader.join(timeout=1)
            raise Crashed(phase, returncode)
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if not line.strip():
            raise InvalidResponse("an empty line", line=line)
        return line

    def stderr_mark(self) -> int:
        with self._stderr_lock:
            return self._stderr_dropped + len(self._stderr)

    def stderr_since(self, mark: int) -> str:
        self._stderr_reader.join(timeout=0.2 if self.alive() else 1)
        with self._stderr_lock:
            start = max(0, mark - self._stderr_dropped)
            text = bytes(self._stderr[start:]).decode("utf-8", errors="replace")
        return text if len(text) <= _STDERR_SHOWN else "…" + text[-_STDERR_SHOWN:]

    def kill_and_collect_stderr(self) -> str:
        self._kill()
        return self.stderr_since(0)

    def stop(self) -> None:
        self.send(protocol.encode(protocol.stop_command()))
        stdin = self.process.stdin
        if stdin is not None:
            with contextlib.suppress(OSError):
                stdin.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self._kill()
        self._close()

    def _kill(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
        self._close()

    def _close(self) -> None:
        self._stdout_reader.join(timeout=1)
        self._stderr_reader.join(timeout=1)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
