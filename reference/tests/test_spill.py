"""The generic spill policy's ordering and skip rules (digest 12.1), and finalizeContent totality around it (12.2)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from conftest import echo_tool, plain, raw_tool
from toolcanon import (
    ABSENT,
    AbortController,
    Accept,
    Block,
    Call,
    DispatchToken,
    Output,
    Registry,
    ToolExecution,
    ToolFailure,
    ToolResult,
)
from toolcanon.nested import CodeMode, Tools
from toolcanon.result import ToolError
from toolcanon.spill import (
    bound_content,
    directory_store,
    install_dispatch_log_spill,
    install_spill,
    tool_owned_spill_applies,
)

BIG = "0123456789" * 100
PREVIEW = (
    "012345678901234567890123456789012345678901234567891234567890123456789012345678901234567890123456789\n\n"
    "(Omitted 901 bytes. Full formatted result stored at: /spill/c1.txt. Use the read tool to view it.)"
)
"""spill-policy index.ts: a 99-byte notice priced at 1000 bytes and `\\n\\n` leave a 99-byte budget, 50 bytes of
head and 49 of tail joined with nothing between them."""


class Store:
    """Keeps spilled texts in memory; the locator is `/spill/<call id>.txt`."""

    def __init__(self) -> None:
        self.kept: dict[str, str] = {}

    def __call__(self, call_id: str, text: str) -> str:
        self.kept[call_id] = text
        return f"/spill/{call_id}.txt"


def big_tool(name: str = "big", **overrides: Any) -> Any:
    return raw_tool(
        name, lambda args, run: BIG, output=Output({}, lambda a, v: [{"type": "text", "text": v}]), **overrides
    )


def execute(registry: Registry, name: str = "big", call_id: str = "c1", **fields: Any) -> ToolResult:
    """One call; it has an agent (whose session a spilled text belongs to) unless ``agent=None`` is given."""
    fields.setdefault("agent", "agent")
    return asyncio.run(registry.execute(Call(call_id, name, fields.pop("arguments", {}), **fields)))


def text_of(result: ToolResult) -> str:
    return str(result.content[0]["text"])


# --- 12.1 ------------------------------------------------------------------------------------------------


def test_oversized_text_is_replaced_by_a_head_tail_preview_and_stored() -> None:
    """digest 12.1 / renderers.md A.2: a head/tail preview, `\\n\\n`, and `(Omitted <n> bytes. Full formatted
    result stored at: <locator>. <hint>)`, within the byte bound; the value is untouched."""
    store = Store()
    registry = Registry()
    registry.register(big_tool())
    install_spill(registry, max_bytes=200, store=store)
    result = execute(registry)
    assert text_of(result) == PREVIEW and len(PREVIEW.encode()) <= 200
    assert store.kept == {"c1": BIG}
    assert result.value == BIG  # type: ignore[union-attr]


def test_a_call_without_an_agent_owns_no_session_and_is_not_spilled() -> None:
    """spill-policy index.ts `ownerSessionId`: no session owner keeps the inline content (and stores nothing)."""
    store = Store()
    registry = Registry()
    registry.register(big_tool())
    install_spill(registry, max_bytes=200, store=store)
    assert text_of(execute(registry, agent=None)) == BIG
    assert store.kept == {}


def test_content_within_the_bound_is_left_alone() -> None:
    registry = Registry()
    registry.register(big_tool())
    install_spill(registry, max_bytes=1000, store=Store())
    assert text_of(execute(registry)) == BIG


def test_tool_owned_projection_completes_before_the_bound_whatever_the_order() -> None:
    """digest 12.1: spill is prepended (outermost) and awaits next() first, so a tool-owned content projection
    registered before or after it is bounded."""

    async def tool_owned(run: ToolExecution, result: Any, nxt: Any) -> Any:
        await nxt()
        return Accept(content=[{"type": "text", "text": BIG}])

    for spill_first in (True, False):
        registry = Registry()
        registry.register(echo_tool())
        if spill_first:
            install_spill(registry, max_bytes=200, store=Store())
            registry.on_post_execute(tool_owned)
        else:
            registry.on_post_execute(tool_owned)
            install_spill(registry, max_bytes=200, store=Store())
        assert text_of(execute(registry, "echo")) == PREVIEW


def test_spill_keeps_the_decisions_contexts_and_bounds_failures_too() -> None:
    """digest 12.1: the bounded content is `decision.content ?? result.content`; contexts are kept."""

    def fail(args: Any, run: ToolExecution) -> Any:
        raise RuntimeError(BIG)

    registry = Registry()
    registry.register(raw_tool("fail", fail))
    install_spill(registry, max_bytes=200, store=Store())
    registry.on_post_execute(lambda run, result, nxt: Accept(additional_contexts=[{"id": "ctx"}]))
    result = execute(registry, "fail")
    assert result.is_error and text_of(result).endswith(
        "(Omitted 908 bytes. Full formatted result stored at: /spill/c1.txt. Use the read tool to view it.)"
    )
    assert text_of(result).startswith("Error: 0123")
    assert plain(result.additional_contexts) == [{"id": "ctx"}]


@pytest.mark.parametrize("case", ["block", "value", "nested", "forged", "read"])
def test_spill_returns_the_decision_unchanged(case: str) -> None:
    """digest 12.1: not an accept, a value replacement, `exec.parent` set (real or forged, 0.5), or `read`."""
    registry = Registry()
    registry.register(big_tool())
    registry.register(big_tool("read"))
    install_spill(registry, max_bytes=200, store=Store())
    name, fields = "big", dict[str, Any]()
    if case == "block":
        registry.on_post_execute(lambda run, result, nxt: Block([{"type": "text", "text": BIG}]))
    elif case == "value":
        registry.on_post_execute(lambda run, result, nxt: Accept(value=BIG + "!"))
    elif case in ("nested", "forged"):
        fields = {"parent": DispatchToken()}
    else:
        name = "read"
    if case == "nested":

        async def program(tools: Tools) -> Any:
            await tools.big({})

        mode = CodeMode(registry)
        seen: list[ToolResult] = []
        registry.on_result(lambda run, result: seen.append(result) if run.parent else None)

        async def body(args: Any, run: ToolExecution) -> Any:
            await mode.run(run, program)
            return 0

        registry.register(raw_tool("prog", body))
        execute(registry, "prog")
        result = seen[0]
    else:
        result = execute(registry, name, **fields)
    assert text_of(result).startswith(BIG)


@pytest.mark.parametrize(
    ("case", "applies"),
    [("direct", True), ("nested", False), ("failed", False), ("replaced-tool", False), ("inner-content", False)],
)
def test_tool_owned_spill_runs_only_for_untouched_direct_successes(case: str, applies: bool) -> None:
    """digest 12.1: the tool-owned spill runs only for a direct, successful call still owned by the same
    definition, with no downstream content or value replacement."""
    registry = Registry()
    definition = echo_tool()
    dispose = registry.register(definition)
    seen: list[bool] = []

    async def tool_owned(run: ToolExecution, result: Any, nxt: Any) -> Any:
        decision = await nxt()
        seen.append(tool_owned_spill_applies(registry, definition, run, result, decision))
        return decision

    async def inner(run: ToolExecution, result: Any, nxt: Any) -> Any:
        if case == "inner-content":
            return Accept(content=[{"type": "text", "text": "other"}])
        if case == "replaced-tool":
            dispose()
            registry.register(echo_tool())
        return await nxt()

    registry.on_post_execute(tool_owned)
    registry.on_post_execute(inner)
    if case == "failed":
        registry.on_execute(lambda run, nxt: ToolFailure(ToolError("authored failure"), []))
    fields: dict[str, Any] = {"parent": DispatchToken()} if case == "nested" else {}
    execute(registry, "echo", arguments={"text": "x"}, **fields)
    assert seen == [applies]


def test_notice_that_cannot_fit_and_a_failed_store_keep_the_content() -> None:
    """renderers.md A.2: the content is kept unchanged when the notice alone would not fit (or nothing was kept)."""
    registry = Registry()
    registry.register(big_tool())
    install_spill(registry, max_bytes=20, store=Store())
    assert text_of(execute(registry)) == BIG
    failing = Registry()
    failing.register(big_tool())
    install_spill(failing, max_bytes=200, store=lambda call_id, text: None)
    assert text_of(execute(failing)) == BIG


def test_notice_alone_when_the_budget_leaves_no_preview() -> None:
    """spill-policy index.ts: a budget of zero bytes replaces the text by the notice alone, while it fits."""
    notice = "(Omitted 1000 bytes. Full formatted result stored at: /spill/c1.txt. Use the read tool to view it.)"
    for max_bytes in (101, 100, 99):
        bounded = asyncio.run(bound_content([{"type": "text", "text": BIG}], "c1", max_bytes=max_bytes, store=Store()))
        assert bounded == [{"type": "text", "text": notice}]
    content = [{"type": "text", "text": BIG}]
    assert asyncio.run(bound_content(content, "c1", max_bytes=98, store=Store())) is content


def test_only_plain_text_is_bounded_and_its_blocks_join_with_nothing_between() -> None:
    """spill-policy index.ts `flattenPlainText`: any non-text block leaves the content alone; text blocks are
    concatenated, and the replacement is one text block."""
    mixed = [{"type": "text", "text": BIG}, {"type": "image", "attachment": {}}]
    assert asyncio.run(bound_content(mixed, "c", max_bytes=200, store=Store())) is mixed
    assert asyncio.run(bound_content(["loose", {"type": "text", "text": BIG}], "c", max_bytes=1, store=Store())) == [
        "loose",
        {"type": "text", "text": BIG},
    ]
    store = Store()
    two = [{"type": "text", "text": "a" * 300}, {"type": "text", "text": "b" * 300}, {"type": "text"}]
    bounded = asyncio.run(bound_content(two, "c", max_bytes=200, store=store))
    assert store.kept == {"c": "a" * 300 + "b" * 300 + "undefined"}
    assert bounded == [
        {
            "type": "text",
            "text": "a" * 51 + "b" * 41 + "undefined\n\n"
            "(Omitted 508 bytes. Full formatted result stored at: /spill/c.txt. Use the read tool to view it.)",
        }
    ]


def test_preview_cuts_at_character_boundaries() -> None:
    content = [{"type": "text", "text": "é" * 300}]
    bounded = asyncio.run(bound_content(content, "c", max_bytes=200, store=lambda c, t: "/s"))
    assert "\ufffd" not in bounded[0]["text"] and len(bounded[0]["text"].encode()) <= 200
    assert bounded == [
        {
            "type": "text",
            "text": "é" * 55
            + "\n\n(Omitted 490 bytes. Full formatted result stored at: /s. Use the read tool to view it.)",
        }
    ]


def test_bytes_are_counted_as_text_encoder_counts_them(tmp_path: Path) -> None:
    """renderers.md 0.6 / A.2: a lone surrogate is U+FFFD, three bytes, in the count, the preview and the file."""
    content = [{"type": "text", "text": "\ud800" * 100}]
    bounded = asyncio.run(bound_content(content, "c", max_bytes=200, store=lambda c, t: "/s"))
    preview, _, notice = bounded[0]["text"].partition("\n\n")
    assert set(preview) == {"\ufffd"} and len(bounded[0]["text"].encode()) <= 200
    omitted = 300 - 3 * len(preview)
    assert notice == f"(Omitted {omitted} bytes. Full formatted result stored at: /s. Use the read tool to view it.)"
    directory_store(tmp_path)("c", "\ud800")
    assert (tmp_path / "c.txt").read_text("utf-8") == "\ufffd"


def test_max_bytes_must_be_a_non_negative_integer() -> None:
    """0 is a bound, as the original's ``maxInlineBytes`` takes it: no notice fits, so no text is replaced."""
    with pytest.raises(ValueError, match=r"^max_bytes must be a non-negative integer$"):
        install_spill(Registry(), max_bytes=-1, store=Store())
    with pytest.raises(ValueError, match=r"^max_bytes must be a non-negative integer$"):
        install_dispatch_log_spill(CodeMode(Registry()), max_bytes=1.5, store=Store())  # type: ignore[arg-type]
    install_spill(Registry(), max_bytes=0, store=Store())
    install_dispatch_log_spill(CodeMode(Registry()), max_bytes=0, store=Store())


def test_directory_store(tmp_path: Path) -> None:
    store = directory_store(tmp_path / "spill")
    locator = store("c1:code:2/x", "full text é")
    assert Path(locator) == tmp_path / "spill" / "c1_code_2_x.txt"
    assert Path(locator).read_text("utf-8") == "full text é"


def test_code_dispatch_log_copy_is_bounded_separately() -> None:
    """digest 12.1 / 9.6: the log copy of a sub-call's content is bounded through the dispatch-log waterfall; the
    sub-call's own result (and what the program receives) is not spilled."""
    events: list[Any] = []
    received: list[Any] = []
    results: list[ToolResult] = []

    async def program(tools: Tools) -> Any:
        received.append(await tools.big({}))

    registry = Registry()
    registry.register(big_tool())
    mode = CodeMode(registry, events=lambda event_type, data: events.append(plain(data)))
    install_dispatch_log_spill(mode, max_bytes=200, store=Store())
    install_spill(registry, max_bytes=10_000, store=Store())

    async def body(args: Any, run: ToolExecution) -> Any:
        await mode.run(run, program)
        return 0

    registry.register(raw_tool("prog", body))
    registry.on_result(lambda run, result: results.append(result) if run.parent else None)
    execute(registry, "prog", call_id="c1", agent="agent")
    expected = asyncio.run(bound_content([{"type": "text", "text": BIG}], "c1:code:1", max_bytes=200, store=Store()))
    assert events[1]["content"] == expected
    assert expected[0]["text"].endswith(
        "(Omitted 908 bytes. Full formatted result stored at: /spill/c1:code:1.txt. Use the read tool to view it.)"
    )
    assert received == [BIG] and text_of(results[0]) == BIG


def test_no_log_copy_is_bounded_for_an_outer_call_without_an_agent() -> None:
    """code-mode.ts `settle`: without an agent there is no dispatch event, so its log listeners never run and
    nothing is stored."""
    store = Store()

    async def program(tools: Tools) -> Any:
        return await tools.big({})

    registry = Registry()
    registry.register(big_tool())
    mode = CodeMode(registry, events=lambda event_type, data: None)
    install_dispatch_log_spill(mode, max_bytes=200, store=store)

    async def body(args: Any, run: ToolExecution) -> Any:
        return (await mode.run(run, program)).result

    registry.register(raw_tool("prog", body))
    assert execute(registry, "prog", agent=None).value == BIG  # type: ignore[union-attr]
    assert store.kept == {}


# --- 12.2 around the spill (the core finalizeContent rules are pinned in test_pipeline) ---------------------


def test_finalize_content_runs_once_after_the_spill_and_replaces_only_content() -> None:
    """digest 12.2: called exactly once, after post-execute (it sees the bounded content); its return replaces
    only content (value and meta are kept)."""
    seen: list[str] = []

    def finalize(run: ToolExecution, result: ToolResult) -> Any:
        seen.append(text_of(result))
        return [{"type": "text", "text": "final"}]

    registry = Registry()
    registry.register(
        raw_tool(
            "big",
            lambda args, run: BIG,
            output=Output({}, lambda a, v: [{"type": "text", "text": v}], lambda a, v: {"len": len(v)}),
            finalize_content=finalize,
        )
    )
    install_spill(registry, max_bytes=200, store=Store())
    result = execute(registry)
    assert seen == [PREVIEW]
    assert plain(result.content) == [{"type": "text", "text": "final"}]
    assert result.value == BIG and plain(result.meta) == {"len": 1000}  # type: ignore[union-attr]


def test_finalize_content_is_captured_at_creation_and_called_on_every_path() -> None:
    """digest 12.2: captured before the snapshot (a tool disposed mid-call still finalizes), and called once for
    aborts, post-execute bypasses and disposed tools."""
    calls: list[str] = []

    def finalize(run: ToolExecution, result: ToolResult) -> Any:
        calls.append(run.call_id)
        return None

    registry = Registry()
    dispose = registry.register(echo_tool(finalize_content=finalize))

    async def pre(run: ToolExecution, nxt: Any) -> Any:
        if run.call_id == "disposed":
            dispose()
        return await nxt()

    async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        if run.call_id == "bypass":
            raise RuntimeError("post failed")
        return await nxt()

    registry.on_pre_execute(pre)
    registry.on_post_execute(post)
    controller = AbortController()
    controller.abort()
    aborted = execute(registry, "echo", "aborted", signal=controller.signal)
    bypassed = execute(registry, "echo", "bypass")
    gone = execute(registry, "echo", "disposed")
    assert calls == ["aborted", "bypass", "disposed"]
    assert aborted.error.info.code == "ABORTED_BEFORE_DISPATCH"  # type: ignore[union-attr]
    assert bypassed.error.message == "post failed"  # type: ignore[union-attr]
    assert gone.error.message == 'unknown tool "echo"'  # type: ignore[union-attr]
    assert gone.meta is ABSENT
