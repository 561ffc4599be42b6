"""Fuzz target ``session-log``: reading, replaying and reopening a session log (``toolcanon.session``).

The input is the log file's bytes. ``replay`` must return the events or raise
:class:`~toolcanon.session.MalformedLogError`; ``SessionLog.open`` must agree with it (refusing the same
logs, cutting off exactly the torn last line ``replay`` reported, then appending after the last event), and
``parse_model_arguments`` must never raise on the same bytes read as text.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from fuzz import seeds
from fuzz.mutation import JSON_TOKENS
from fuzz.target import ACCEPTED, PropertyViolation, Target, rejected
from toolcanon.jsonvalue import canonical_json
from toolcanon.session import MalformedLogError, Replay, SessionLog, parse_model_arguments, replay

__all__ = ["TARGET", "check"]

# A log is fsynced on close: on a memory file system that costs nothing.
_SCRATCH: Final = "/dev/shm" if Path("/dev/shm").is_dir() else None


def _summary(events: Replay) -> list[tuple[int, str, str]]:
    # compared as text: == on the event data recurses, and a line may nest past the recursion limit
    return [(event.seq, event.type, canonical_json(event.data)) for event in events.events]


def _check_replayed(path: Path, data: bytes, replayed: Replay) -> None:
    if [event.seq for event in replayed.events] != list(range(1, len(replayed.events) + 1)):
        raise PropertyViolation("replayed events are not numbered 1, 2, …")
    torn = replayed.torn
    if (torn is None) != (data == b"" or data.endswith(b"\n")):
        raise PropertyViolation(f"torn line {torn} for a log ending in {data[-1:]!r}")
    if torn is not None and (torn.offset + torn.length != len(data) or b"\n" in data[torn.offset :]):
        raise PropertyViolation(f"{torn} does not describe the log's last line")
    with SessionLog.open(path) as log:
        if log.repaired != torn:
            raise PropertyViolation(f"SessionLog.open repaired {log.repaired}, replay reported {torn}")
        log.append("session/title", {"after": len(replayed.events)})
    kept = data if torn is None else data[: torn.offset]
    written = path.read_bytes()
    if not written.startswith(kept):
        raise PropertyViolation("reopening the log changed its complete lines")
    again = replay(path)
    expected = [
        *_summary(replayed),
        (len(replayed.events) + 1, "session/title", canonical_json({"after": len(replayed.events)})),
    ]
    if _summary(again) != expected or again.torn is not None:
        raise PropertyViolation("the reopened log does not replay as its events plus the appended one")


def check(data: bytes) -> str:
    """Replay a log made of ``data``, reopen it for appending, and parse ``data`` as model arguments."""
    parse_model_arguments(data.decode("utf-8", "surrogateescape"))  # undecodable bytes become lone surrogates
    with tempfile.TemporaryDirectory(prefix="toolcanon-fuzz-", dir=_SCRATCH) as folder:
        path = Path(folder) / "session.jsonl"
        path.write_bytes(data)
        try:
            replayed = replay(path)
        except MalformedLogError as error:
            try:
                SessionLog.open(path).close()
            except MalformedLogError:
                pass
            else:
                raise PropertyViolation(f"SessionLog.open accepts a log replay refuses ({error})") from None
            if path.read_bytes() != data:
                raise PropertyViolation("SessionLog.open changed a log it refused") from None
            return rejected(error)
        _check_replayed(path, data, replayed)
    return ACCEPTED


def _seeds() -> Iterator[bytes]:
    for events in seeds.logged_events():
        lines = [
            canonical_json({"seq": seq, "type": event["type"], "data": event["data"]}).encode("utf-8", "surrogatepass")
            + b"\n"
            for seq, event in enumerate(events, 1)
        ]
        if not lines:
            continue
        log = b"".join(lines)
        yield log
        yield log + lines[-1][: len(lines[-1]) // 2]  # a torn last line


TARGET = Target(
    name="session-log",
    summary="toolcanon.session.replay and SessionLog.open on a log file of fuzz bytes",
    check=check,
    seeds=_seeds,
    tokens=JSON_TOKENS,
)
