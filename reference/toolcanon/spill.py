"""The generic spill policy: bound a direct call's final text content to a byte size, storing the full text."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from toolcanon.decisions import Accept, as_post_execute_decision
from toolcanon.errors import error_message, is_interrupt
from toolcanon.jsonvalue import JsonValue, is_lossless_json, plain_str
from toolcanon.registry import Registry, settle
from toolcanon.renderers._ecma import js_string, retain_text_head, retain_text_tail, utf8, utf8_length
from toolcanon.result import ABSENT, ToolResult

if TYPE_CHECKING:
    from toolcanon.definition import ToolDefinition
    from toolcanon.execution import ToolExecution
    from toolcanon.nested import CodeMode, SubCall

__all__ = [
    "DEFAULT_HINT",
    "SpillStore",
    "bound_content",
    "directory_store",
    "install_dispatch_log_spill",
    "install_spill",
    "tool_owned_spill_applies",
]

SpillStore: TypeAlias = Callable[[str, str], Any]
"""``store(call_id, text) -> locator | None`` (plain or ``async``): keeps the full text; ``None`` if it could not."""

logger = logging.getLogger("toolcanon")

DEFAULT_HINT: Final = "Use the read tool to view it."
READ_TOOL: Final = "read"


def directory_store(directory: str | Path) -> SpillStore:
    """A store writing each spilled text to ``<directory>/<call id>.txt`` in UTF-8 (a lone surrogate as U+FFFD, as
    ``TextEncoder`` writes it); the locator is that path."""
    root = Path(directory)

    def store(call_id: str, text: str) -> str:
        root.mkdir(parents=True, exist_ok=True)
        target = root / (re.sub(r"[^A-Za-z0-9._-]", "_", call_id) + ".txt")
        target.write_bytes(utf8(text))
        return str(target)

    return store


def _plain_text(content: Any) -> str | None:
    """All-text content as one string, its blocks' texts joined with nothing between them; ``None`` when a
    block is not a text block (the policy bounds plain-text results only).

    A text block's ``text`` is read as string concatenation reads it (``String()``; a missing one is
    ``undefined``), so the policy is total over the contract's unchecked block shapes.
    """
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "text" or type(block.get("type")) is not str:
            return None
        texts.append(js_string(block["text"]) if "text" in block else "undefined")
    return "".join(texts)


_MISSING: Final = object()


def _unchecked_text(value: Any) -> str | None:
    """A text block's ``text`` of content that is not lossless JSON, as string concatenation prints it, or
    ``None`` when only the registry may judge it (a value other than lossless JSON or a non-finite number)."""
    if is_lossless_json(value):
        return js_string(value)
    if type(value) is float:
        if value != value:
            return "NaN"
        return "Infinity" if value > 0 else "-Infinity" if value < 0 else "0"
    return None


def _unchecked_plain_text(content: Any) -> str | None:
    """:func:`_plain_text` of content that is not lossless JSON, read without running foreign code.

    The original's policy reads only each block's ``type`` and ``text`` (``flattenPlainText``), so content whose
    blocks are all text blocks is bounded whatever else they hold, and the bounded replacement is lossless.
    Only an exact list of exact dicts is read, each dict's members by iteration (which runs no code of theirs)
    and only under exact string keys; anything else is left to the registry, which refuses it.
    """
    if type(content) is not list:
        return None
    texts: list[str] = []
    for block in content:
        if type(block) is not dict:
            return None
        kind: Any = _MISSING
        text: Any = _MISSING
        for key, member in block.items():
            if type(key) is str:
                if key == "type":
                    kind = member
                elif key == "text":
                    text = member
        if type(kind) is not str or kind != "text":
            return None
        read = "undefined" if text is _MISSING else _unchecked_text(text)
        if read is None:
            return None
        texts.append(read)
    return "".join(texts)


def _notice(omitted: int, locator: str, hint: str) -> str:
    return f"(Omitted {omitted} bytes. Full formatted result stored at: {locator}. {hint})"


async def bound_content(
    content: Any, call_id: str, *, max_bytes: int, store: SpillStore, hint: str = DEFAULT_HINT
) -> Any:
    """``content`` bounded to ``max_bytes`` UTF-8 bytes, or ``content`` itself when it fits or is not plain text.

    Bytes are counted as ``TextEncoder`` counts them (a lone surrogate is U+FFFD, three bytes), and the head and
    tail are cut back to whole characters, as the output-retention primitives do.

    An oversized plain text is stored whole, then replaced by one text block: a head/tail preview (the two ends
    joined with nothing between them, the budget split ceil/floor between them), ``\\n\\n`` and the notice
    ``(Omitted <n> bytes. Full formatted result stored at: <locator>. <hint>)``, or the notice alone when the
    budget leaves no preview. The budget is ``max_bytes`` less the notice priced at the whole size and the two
    joining bytes. The content is kept unchanged when the store failed or could not keep the text, or when the
    replacement would not fit.
    """
    text = _plain_text(content) if is_lossless_json(content) else _unchecked_plain_text(content)
    if text is None:
        return content
    size = utf8_length(text)
    if size <= max_bytes:
        return content
    try:
        locator = plain_str(await settle(store(call_id, text)))
    except BaseException as thrown:  # a spill is best-effort: a failing store never fails the call
        if is_interrupt(thrown):
            raise
        logger.warning("spill store failed for %s: %s; keeping the inline content", call_id, error_message(thrown))
        return content
    if locator is None:
        return content
    budget = max(0, max_bytes - utf8_length(_notice(size, locator, hint)) - 2)
    head = retain_text_head(text, (budget + 1) // 2).text
    tail = retain_text_tail(text, budget // 2).text
    preview = head + tail
    notice = _notice(size - utf8_length(head) - utf8_length(tail), locator, hint)
    replaced = f"{preview}\n\n{notice}" if preview else notice
    if utf8_length(replaced) > max_bytes:
        return content
    return [{"type": "text", "text": replaced}]


def tool_owned_spill_applies(
    registry: Registry, definition: ToolDefinition, run: ToolExecution, result: ToolResult, decision: Any
) -> bool:
    """Whether a tool's own spill (a post-execute content projection) may run on this call.

    Only for a direct, successful call that ``definition`` still owns (the registry resolves the name to it) and
    whose inner post-execute listeners replaced neither content nor value (``decision`` is what ``next()``
    returned).
    """
    accepted = as_post_execute_decision(decision)
    return (
        run.parent is None
        and not result.is_error
        and registry.definition(run.name) is definition
        and type(accepted) is Accept
        and accepted.content is ABSENT
        and accepted.value is ABSENT
    )


def install_spill(
    registry: Registry, *, max_bytes: int, store: SpillStore, hint: str = DEFAULT_HINT
) -> Callable[[], None]:
    """Install the generic spill post-execute listener; returns its disposer.

    It is registered outermost (``prepend``) and delegates first, so every other post-execute projection (a
    tool-owned content replacement included) completes before the bound, whatever the registration order. It
    leaves the decision unchanged for nested calls, value replacements, decisions that are not an accept, the
    ``read`` tool (whose output is how a spilled result is read back), and a call without an agent: a spilled
    text belongs to the calling agent's session, and a call with an agent is one whose agent owns a session.
    """
    if type(max_bytes) is not int or max_bytes < 0:
        raise ValueError("max_bytes must be a non-negative integer")

    async def spill(run: ToolExecution, result: ToolResult, next: Callable[[], Awaitable[Any]]) -> Any:
        decision = await next()
        accepted = as_post_execute_decision(decision)  # the kind as the registry will read it
        if type(accepted) is not Accept or accepted.value is not ABSENT:
            return decision
        if run.parent is not None or run.name == READ_TOOL or run.agent is None:
            return decision
        current = accepted.content if accepted.content is not ABSENT else result.content
        bounded = await bound_content(current, run.call_id, max_bytes=max_bytes, store=store, hint=hint)
        if bounded is current:
            return decision
        return Accept(content=bounded, additional_contexts=accepted.additional_contexts)

    return registry.on_post_execute(spill, prepend=True)


def install_dispatch_log_spill(
    code_mode: CodeMode, *, max_bytes: int, store: SpillStore, hint: str = DEFAULT_HINT
) -> Callable[[], None]:
    """Bound the ``tool/code-dispatch`` log copy of each sub-call's content the same way; returns a disposer.

    The copy exists only for an outer call with an agent, whose session the spilled text then belongs to.
    """
    if type(max_bytes) is not int or max_bytes < 0:
        raise ValueError("max_bytes must be a non-negative integer")

    async def bound_log_copy(sub: SubCall, next: Callable[[], Awaitable[JsonValue]]) -> Any:
        content = await next()
        return await bound_content(content, sub.sub_call_id, max_bytes=max_bytes, store=store, hint=hint)

    return code_mode.on_dispatch_log(bound_log_copy, prepend=True)
