"""A short tour: register a tool, execute model calls, print value, content and failures, and keep a log.

Run ``python -m toolcanon.demo [LOG]``; the session log (JSON Lines) is written to ``LOG``
(default ``toolcanon-demo.jsonl``) and can be replayed with ``toolcanon replay LOG``, the command of the
conformance kit (``toolcanon-conformance``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from toolcanon import Output, Registry, ToolResult, canonical_json, define_tool
from toolcanon.session import ModelToolCall, SessionLog, run_tool_calls

DEFAULT_LOG = "toolcanon-demo.jsonl"


def describe(label: str, result: ToolResult) -> str:
    """A few lines showing what a caller and the model each get from one result."""
    lines = [f"{label}:"]
    if result.is_error:
        info = result.error.info
        lines.append(f"  error.message = {result.error.message}")
        lines.append(f"  error.info    = {f'{info.name} / {info.code}' if info else None}")
    else:
        lines.append(f"  value         = {canonical_json(result.value)}")
    lines.append(f"  content       = {canonical_json(result.content)}")
    return "\n".join(lines)


def word_count_registry() -> Registry:
    """A registry with one tool whose value (a record) and rendering (a sentence) differ."""
    registry = Registry()
    registry.register(
        define_tool(
            name="word_count",
            description="Count the words of a text.",
            parameters={"text": {"type": "string", "required": True}},
            output=Output(
                schema={
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "words": {"type": "integer", "required": True},
                        "longest": {"type": "string", "required": True},
                    },
                },
                render=lambda args, value: [
                    {"type": "text", "text": f"{value['words']} words; longest: {value['longest']}"}
                ],
            ),
            execute=lambda args, run: {
                "words": len(args["text"].split()),
                "longest": max(args["text"].split(), key=len, default=""),
            },
        )
    )
    return registry


def replay_hint(log_path: Path) -> str:
    """How to replay the log from a shell: the kit's ``toolcanon`` command installed beside this interpreter,
    by its path (true whether or not its environment is activated), or else how to install it."""
    script = Path(sys.executable).with_name("toolcanon.exe" if os.name == "nt" else "toolcanon")
    if script.is_file():
        return f"replay it with: {script} replay {log_path}"
    return f"replay it with the conformance kit (pip install toolcanon-conformance): toolcanon replay {log_path}"


async def tour(log_path: Path) -> str:
    """Run the tour, writing the session log to ``log_path``, and return its printout."""
    registry = word_count_registry()
    calls = [
        ModelToolCall("c1", "word_count", '{"text": "lossless values render natively"}'),
        ModelToolCall("c2", "word_count", '{"text": 42}'),
        ModelToolCall("c3", "nope", ""),
    ]
    log_path.unlink(missing_ok=True)
    with SessionLog.open(log_path) as log:
        outcome = await run_tool_calls(registry, log, calls, turn=1, step=1)
    ok, bad_args, unknown = outcome.results
    return "\n".join(
        [
            describe("a success", ok),
            describe("invalid arguments", bad_args),
            describe("an unknown tool", unknown),
            f"session log (content only, never the value): {log_path}",
            replay_hint(log_path),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    """Print the tour."""
    arguments = sys.argv[1:] if argv is None else argv
    print(asyncio.run(tour(Path(arguments[0] if arguments else DEFAULT_LOG))))


if __name__ == "__main__":
    main()
