"""``toolcanon replay LOG``: print the model messages derived from a session log, one canonical JSON line each."""

from __future__ import annotations

import argparse
import os
import sys

from toolcanon.jsonvalue import canonical_json
from toolcanon.session import MalformedLogError, replay

__all__ = ["replay_command"]

_PROG = "toolcanon replay"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Derive the model messages from a session log alone and print them, one per line.",
        epilog="Exit status: 0 the messages printed, 1 a malformed log, 2 usage error (a log that does not exist, "
        "is a folder or cannot be read).",
    )
    parser.add_argument("log", metavar="LOG", help="path of a session log (JSON Lines)")
    return parser


def _error(text: str) -> None:
    print(f"{_PROG}: error: {text}", file=sys.stderr)


def replay_command(argv: list[str]) -> int:
    """Run ``toolcanon replay`` with ``argv`` (the arguments after ``replay``); return the exit status.

    0 on success (a torn last line is reported on standard error and skipped), 1 for a malformed log, 2 for a
    usage error: no log named, or one that does not exist, is a folder or cannot be read.
    """
    try:
        arguments = _parser().parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    path: str = arguments.log
    try:
        replayed = replay(path)
    except FileNotFoundError:
        _error(f"{path}: no such file")
        return 2
    except IsADirectoryError:
        _error(f"{path}: is a directory, not a session log")
        return 2
    except MalformedLogError as malformed:
        _error(f"malformed session log: {malformed}")
        return 1
    except OSError as failure:
        _error(f"{path}: cannot read: {failure.strerror or failure}")
        return 2
    if replayed.torn is not None:
        print(f"{_PROG}: {path}: {replayed.torn}; skipped", file=sys.stderr)
    text = "".join(canonical_json(message) + "\n" for message in replayed.messages)
    try:
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is not None:
            sys.stdout.flush()
            buffer.write(text.encode("utf-8"))
            buffer.flush()
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    except BrokenPipeError:
        # the reader went away (e.g. `| head`); silence the interpreter's own flush at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0
