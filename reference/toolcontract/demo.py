"""A short tour: register a tool, execute it, and print its value, its content and a failure."""

from __future__ import annotations

import asyncio

from toolcontract import Call, Output, Registry, ToolResult, canonical_json, define_tool


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


async def tour() -> str:
    """Run the tour and return its printout."""
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
    ok = await registry.execute(
        Call(call_id="c1", name="word_count", arguments={"text": "lossless values render natively"})
    )
    bad_args = await registry.execute(Call(call_id="c2", name="word_count", arguments={"text": 42}))
    unknown = await registry.execute(Call(call_id="c3", name="nope", arguments={}))
    return "\n".join(
        [
            describe("a success", ok),
            describe("invalid arguments", bad_args),
            describe("an unknown tool", unknown),
        ]
    )


def main() -> None:
    """Print the tour."""
    print(asyncio.run(tour()))


if __name__ == "__main__":
    main()
