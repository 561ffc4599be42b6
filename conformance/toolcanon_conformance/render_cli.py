"""``toolcanon render FAMILY VALUE.json [--args ARGS.json]``: print a first-party family's Native text."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from toolcanon.errors import ToolOutputError
from toolcanon.jsonvalue import NotLosslessJson, canonical_json, snapshot_json
from toolcanon.renderers import FAMILIES, render_native, violations_of
from toolcanon_conformance.renderer_toolkit import load_json_text

__all__ = ["EXIT_INVALID", "EXIT_RENDER_FAILED", "render_command"]

EXIT_INVALID = 2
"""Unknown family, unreadable or non-JSON file, or a value the family's schema rejects."""
EXIT_RENDER_FAILED = 1
"""The renderer itself failed (its ``INVALID_TOOL_OUTPUT`` message is printed)."""


class _UsageError(Exception):
    """A problem with the command's inputs; the message is printed as it is."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolcanon render",
        description=(
            "Render a value with a first-party renderer and print its Native content: each text block's "
            "text, other blocks as canonical JSON, one block per line."
        ),
    )
    parser.add_argument("family", help="family name, for example read, grep, terminal_read, job_output")
    parser.add_argument("value", type=Path, help="JSON file holding the value")
    parser.add_argument("--args", type=Path, dest="args_file", help="JSON file holding the call's arguments")
    parser.add_argument(
        "--config",
        metavar="JSON|FILE",
        help='the family\'s options, a JSON object: inline when the value starts with "{" '
        "(--config '{\"max_results\": 2}'), otherwise the path of a JSON file holding it",
    )
    parser.add_argument("--finalize", action="store_true", help="also apply the family's finalize_content")
    return parser


def _read_json(path: Path, what: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise _UsageError(f"cannot read {what} file {str(path)!r}: {error}") from error
    try:
        return load_json_text(text)
    except ValueError as error:
        raise _UsageError(f"{what} file {str(path)!r} is not JSON: {error}") from error


def _config(text: str | None) -> dict[str, Any]:
    """``--config``: a JSON object given inline (the value starts with ``{``) or in a file (any other value)."""
    if text is None:
        return {}
    if text.lstrip().startswith("{"):
        try:
            config = load_json_text(text)
        except ValueError as error:
            raise _UsageError(f"--config {text}: not a JSON object: {error}") from error
    else:
        if not text.strip():
            raise _UsageError('--config is empty: give a JSON object ({"max_results": 2}) or a file holding one')
        config = _read_json(Path(text), "config")
    if not isinstance(config, dict):
        raise _UsageError(f"config file {text!r} holds no JSON object: --config wants one, inline or in a file")
    return config


def _snapshot(data: Any, what: str) -> Any:
    try:
        return snapshot_json(data)
    except NotLosslessJson as error:
        raise _UsageError(f"the {what} is not lossless JSON: {error}") from error


def _inputs(options: argparse.Namespace) -> tuple[Any, Any, dict[str, Any]]:
    if options.family not in FAMILIES:
        known = ", ".join(sorted(FAMILIES))
        raise _UsageError(f"unknown family {options.family!r}; known families: {known}")
    value = _snapshot(_read_json(options.value, "value"), "value")
    args = _snapshot(_read_json(options.args_file, "args"), "args") if options.args_file else {}
    config = _config(options.config)
    violations = violations_of(options.family, value)
    if violations:
        listed = "\n".join(f"  - {violation}" for violation in violations)
        raise _UsageError(f"the {options.family} schema rejects the value:\n{listed}")
    return value, args, config


def _native_text(content: list[Any]) -> str:
    lines = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            lines.append(block["text"])
        else:
            lines.append(canonical_json(block))
    return "\n".join(lines) + "\n"


def _write(stream: TextIO, text: str) -> None:
    # A lone surrogate cannot be written as UTF-8: show it as its JSON escape (\udxxx).
    data = text.encode("utf-8", "backslashreplace")
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        stream.flush()
        buffer.write(data)
        buffer.flush()
    else:
        stream.write(data.decode("utf-8"))


def render_command(argv: list[str], *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run ``toolcanon render`` with ``argv`` (the arguments after ``render``); return the exit code."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    parser = _parser()
    try:
        options = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else EXIT_INVALID
    try:
        value, args, config = _inputs(options)
        content = render_native(options.family, value, args, config=config, finalize=options.finalize)
    except _UsageError as error:
        _write(err, f"toolcanon render: {error}\n")
        return EXIT_INVALID
    except (TypeError, ValueError) as error:
        _write(err, f"toolcanon render: bad config for {options.family}: {error}\n")
        return EXIT_INVALID
    except ToolOutputError as error:
        _write(err, f"toolcanon render: {error.message}\n")
        return EXIT_RENDER_FAILED
    _write(out, _native_text(content))
    return 0
