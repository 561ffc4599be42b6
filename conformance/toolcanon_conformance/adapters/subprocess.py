"""``Subprocess``: an implementation under test in any language, reached through its adapter process."""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from toolcanon_conformance import protocol
from toolcanon_conformance.exceptions import AdapterError, CannotStart, Crashed, InvalidResponse, TimedOut
from toolcanon_conformance.implementation import Errored, ImplementationInfo, Outcome, Ran, Skipped

__all__ = ["MAX_LINE_BYTES", "Subprocess"]

#: The longest line an adapter may write (a million-key transcript takes about 20 MiB); it bounds the memory
#: an answer can take, and a longer line is an invalid response.
MAX_LINE_BYTES = 32 * 1024 * 1024

_STDERR_KEPT = 256 * 1024  # bytes of an adapter's stderr kept in memory
_STDERR_SHOWN = 8000  # characters of it attached to one scenario: the tail of what it wrote meanwhile
_CHUNK = 1 << 16


class Subprocess:
    """An :class:`Implementation` speaking the adapter protocol over the standard streams of ``command``.

    ``command`` is an argument list, or a string split like a POSIX shell would. The adapter has
    ``startup_timeout`` seconds to answer ``start`` and ``timeout`` seconds per scenario. What it writes on its
    standard error while a scenario runs is attached to that scenario's outcome (the tail of it). A crash, a
    hang, a line that is not a valid answer (not UTF-8, longer than ``max_line_bytes``, nested too deep), an
    answer for another ``seq``, or a line nobody asked for makes that scenario *errored* (never a pass); the
    process is then killed and started again for the next scenario (up to ``max_restarts`` failed restarts in
    a row, after which every remaining scenario is errored at once). With ``validate_protocol`` every message,
    sent and received, is checked against the protocol's JSON Schemas, and an unknown capability is refused.
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
        max_line_bytes: int = MAX_LINE_BYTES,
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
        self.max_line_bytes = max_line_bytes
        #: The metadata of the last successful handshake.
        self.info: ImplementationInfo | None = None
        #: How many times the adapter process was started.
        self.launches = 0
        self._connection: _Connection | None = None
        self._failed_restarts = 0
        self._last_seq: int | None = None

    def __repr__(self) -> str:
        return f"Subprocess({shlex.join(self.argv)!r})"

    def start(self) -> ImplementationInfo:
        """Launch the adapter and do the handshake; raises an :class:`AdapterError` when that fails."""
        if self._connection is not None and self._connection.usable() and self.info is not None:
            return self.info
        self._discard()
        connection = _Connection.launch(self.argv, self.env, self.cwd, self.max_line_bytes)
        self.launches += 1
        try:
            self.info = self._handshake(connection)
        except AdapterError as error:
            error.stderr = connection.kill_and_collect_stderr()
            raise
        self._connection = connection
        self._last_seq = None
        return self.info

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        """Send one scenario and read its answer; every failure is an :class:`Errored` outcome, never raised."""
        try:
            command = protocol.encode(protocol.run_command(seq, scenario))
        except (ValueError, TypeError, RecursionError) as error:
            return Errored({"kind": "invalid-command", "message": f"the scenario cannot be sent as JSON: {error}"})
        if self.validate_protocol:
            problems = protocol.schema_errors("command", protocol.run_command(seq, scenario))
            if problems:
                return Errored({"kind": "invalid-command", "message": "; ".join(problems)})
        if self._connection is not None:
            unasked = self._unasked(self._connection)
            if unasked is not None:
                return unasked
        if self._connection is None:
            restarted = self._restart()
            if isinstance(restarted, Errored):
                return restarted
        connection = self._connection
        assert connection is not None
        mark = connection.stderr_mark()
        try:
            line = connection.exchange(command, f"run seq {seq}", self.timeout)
            outcome = protocol.parse_run_response(
                protocol.decode_line(line), seq, validate=self.validate_protocol, line=line
            )
        except AdapterError as error:
            self._discard()
            error.stderr = connection.stderr_since(mark)
            return Errored(error.context())
        self._last_seq = seq
        return _with_stderr(outcome, connection.stderr_since(mark))

    def stop(self) -> None:
        """Send ``stop`` and let the adapter exit (killing it if it lingers); idempotent."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.stop()

    # --- internals -----------------------------------------------------------------------------------

    def _unasked(self, connection: _Connection) -> Errored | None:
        """What the adapter did on its own since its last answer, as the outcome of the scenario about to run:
        a line nobody asked for, or an exit (which it may as well be making while that scenario is sent)."""
        mark = connection.stderr_mark()
        after = "start" if self._last_seq is None else f"run seq {self._last_seq}"
        try:
            unasked = connection.unasked_line()
            if unasked is not None:
                raise InvalidResponse(f"a line nobody asked for, written after its answer to {after}", line=unasked)
            if not connection.usable():
                raise Crashed(f"the pause after {after}", connection.returncode())
        except AdapterError as error:
            self._discard()
            error.stderr = connection.stderr_since(mark)
            return Errored(error.context())
        return None

    def _handshake(self, connection: _Connection) -> ImplementationInfo:
        try:
            line = connection.exchange(protocol.encode(protocol.start_command()), "start", self.startup_timeout)
        except Crashed as crashed:
            what = "closed its output" if crashed.returncode is None else "exited"
            raise CannotStart(
                f"{shlex.join(self.argv)!r} {what} before answering start"
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

    def _discard(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.kill_and_collect_stderr()


def _with_stderr(outcome: Outcome, stderr: str) -> Outcome:
    """``outcome`` carrying what the adapter wrote on its standard error while it was being produced."""
    if not stderr:
        return outcome
    if isinstance(outcome, Ran | Skipped):
        return replace(outcome, stderr=stderr)
    if "stderr" in outcome.context:
        return outcome
    return Errored({**outcome.context, "stderr": stderr})


class _Connection:
    """One adapter process, driven from the calling thread: no reader threads, so nothing races.

    While waiting for an answer it writes the command, splits standard output into lines and keeps the last
    256 KiB of standard error; once a line has come, what the adapter wrote on standard error before it is
    read too, so each scenario gets exactly its own part.
    """

    def __init__(self, process: subprocess.Popen[bytes], max_line_bytes: int) -> None:
        self.process = process
        self.max_line_bytes = max_line_bytes
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        self._stdin, self._stdout, self._stderr_fd = (
            process.stdin.fileno(),
            process.stdout.fileno(),
            process.stderr.fileno(),
        )
        for descriptor in (self._stdin, self._stdout, self._stderr_fd):
            os.set_blocking(descriptor, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._stdout, selectors.EVENT_READ)
        self._selector.register(self._stderr_fd, selectors.EVENT_READ)
        self._lines: deque[bytes] = deque()
        self._partial: list[bytes] = []
        self._partial_size = 0
        self._overlong: bytes | None = None
        self._stdout_ended = False
        self._stderr = bytearray()
        self._stderr_dropped = 0

    @classmethod
    def launch(
        cls,
        argv: list[str],
        env: dict[str, str] | None,
        cwd: str | os.PathLike[str] | None,
        max_line_bytes: int,
    ) -> _Connection:
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
        return cls(process, max_line_bytes)

    def alive(self) -> bool:
        return self.process.poll() is None

    def usable(self) -> bool:
        """Alive, and its output still open."""
        return not self._stdout_ended and self.alive()

    # --- the exchange of one command and its answer ----------------------------------------------------

    def exchange(self, command: str, phase: str, timeout: float) -> str:
        """Write ``command`` and return the next line; raises :class:`TimedOut`, :class:`Crashed`, ..."""
        pending = memoryview((command + "\n").encode("ascii"))
        writing = True
        self._selector.register(self._stdin, selectors.EVENT_WRITE)
        deadline = time.monotonic() + timeout
        try:
            while not self._lines and self._overlong is None and not self._stdout_ended:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimedOut(phase, timeout)
                for key, _ in self._selector.select(remaining):
                    if key.fd == self._stdin:
                        pending, writing = self._write(pending)
                        if not writing:
                            self._selector.unregister(self._stdin)
                    elif key.fd == self._stdout:
                        self._read_stdout()
                    else:
                        self._read_stderr()
        finally:
            if writing:
                self._selector.unregister(self._stdin)
        self._drain_stderr()
        return self._next_line(phase)

    def unasked_line(self) -> str | None:
        """A line the adapter wrote since its last answer, before being asked anything (or ``None``)."""
        while not self._lines and self._overlong is None and self._readable(self._stdout):
            if not self._read_stdout():
                break
        self._drain_stderr()
        if not self._lines and self._overlong is None:
            return None
        return self._next_line("no command")

    def _write(self, pending: memoryview) -> tuple[memoryview, bool]:
        try:
            written = os.write(self._stdin, pending[:_CHUNK])
        except BlockingIOError:
            return pending, True
        except OSError:
            return pending[len(pending) :], False  # a dead adapter: its output ends, which says it crashed
        rest = pending[written:]
        return rest, len(rest) > 0

    def _read_stdout(self) -> bool:
        """Read what standard output holds; False once it has ended."""
        try:
            chunk = os.read(self._stdout, _CHUNK)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if not chunk:
            if self._partial:
                self._lines.append(b"".join(self._partial))  # a last line without its newline
                self._partial, self._partial_size = [], 0
            self._stdout_ended = True
            self._selector.unregister(self._stdout)
            return False
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._partial.append(chunk[start:end])
            self._lines.append(b"".join(self._partial))
            self._partial, self._partial_size = [], 0
            start = end + 1
        if start < len(chunk):
            self._partial.append(chunk[start:])
            self._partial_size += len(chunk) - start
        if self._partial_size > self.max_line_bytes and self._overlong is None:
            self._overlong = b"".join(self._partial)[:2000]
            self._partial, self._partial_size = [], 0
        return True

    def _next_line(self, phase: str) -> str:
        if self._lines:
            raw = self._lines.popleft()
        elif self._overlong is not None:
            raise InvalidResponse(
                f"a line longer than {self.max_line_bytes} bytes", line=self._overlong.decode("utf-8", "replace")
            )
        else:
            raise Crashed(phase, self.returncode())
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as error:
            shown = raw.decode("utf-8", errors="replace")
            raise InvalidResponse(f"not UTF-8: byte {raw[error.start]:#04x} at {error.start}", line=shown) from None
        if len(raw) > self.max_line_bytes:
            raise InvalidResponse(f"a line longer than {self.max_line_bytes} bytes", line=line[:2000])
        if not line.strip():
            raise InvalidResponse("an empty line", line=line)
        return line

    def returncode(self) -> int | None:
        try:
            return self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return None  # alive, with its output closed

    # --- standard error --------------------------------------------------------------------------------

    def _read_stderr(self) -> bool:
        """Keep what standard error holds; False once it has ended or holds nothing more."""
        try:
            chunk = os.read(self._stderr_fd, _CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(self._stderr_fd)
            return False
        self._stderr += chunk
        excess = len(self._stderr) - _STDERR_KEPT
        if excess > 0:
            del self._stderr[:excess]
            self._stderr_dropped += excess
        return True

    def _drain_stderr(self, limit: int = 64) -> None:
        """Read what is waiting on standard error now (at most ``limit`` chunks: an adapter may never stop)."""
        for _ in range(limit):
            if not self._read_stderr():
                return

    def _readable(self, descriptor: int) -> bool:
        try:
            key = self._selector.get_key(descriptor)
        except (KeyError, ValueError):
            return False
        return any(ready.fd == key.fd for ready, _ in self._selector.select(0))

    def stderr_mark(self) -> int:
        self._drain_stderr()
        return self._stderr_dropped + len(self._stderr)

    def stderr_since(self, mark: int) -> str:
        start = max(0, mark - self._stderr_dropped)
        written = bytes(self._stderr[start:])
        cut = len(written) > _STDERR_SHOWN * 4
        if cut:
            written = written[-_STDERR_SHOWN * 4 :]
        text = written.decode("utf-8", errors="replace")
        if cut or len(text) > _STDERR_SHOWN:
            return "…" + text[-_STDERR_SHOWN:]
        return text

    # --- the end ---------------------------------------------------------------------------------------

    def kill_and_collect_stderr(self) -> str:
        self._kill()
        return self.stderr_since(0)

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._stdin, (protocol.encode(protocol.stop_command()) + "\n").encode("ascii"))
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()  # the end of its input means stop too
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
        self._drain_stderr()
        self._close()

    def _close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._selector.close()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
