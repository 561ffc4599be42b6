"""The MCP bridge: an MCP server's tools as registry tools whose value is ``{content, structuredContent?}``."""

from __future__ import annotations

import base64
import binascii
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from toolcontract.definition import Output, ToolDefinition
from toolcontract.errors import JsonSchemaError
from toolcontract.frozen import FrozenDict
from toolcontract.jsonvalue import JsonValue, NotLosslessJson, canonical_json, is_lossless_json, snapshot_json, thaw
from toolcontract.registry import is_awaitable
from toolcontract.result import DispatchToken, ToolResult, ToolSuccess
from toolcontract.schema import assert_supported_schema

if TYPE_CHECKING:
    from toolcontract.execution import ToolExecution
    from toolcontract.registry import Registry

__all__ = [
    "IMAGE_MEDIA_TYPES",
    "McpServer",
    "McpToolError",
    "extract_text",
    "mcp_output_schema",
    "mcp_tool",
    "register_mcp_tools",
]

McpServer: TypeAlias = Callable[[str, JsonValue], Awaitable[Any]]
"""``server(raw_name, arguments) -> CallToolResult``: stands for the MCP server; returns the raw result object.

A tool is given as plain data: ``name``, ``inputSchema``, and optionally ``outputSchema``, ``description`` and
``execution``."""

IMAGE_MEDIA_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The media types an MCP image block may carry to reach the model."""


class McpToolError(Exception):
    """A failure the bridge raises for a tool (``isError``, task-only tools); it carries no ``info``."""


def mcp_output_schema(advertised: Any = None) -> dict[str, Any]:
    """The output schema installed for an MCP tool (digest 11.2).

    An advertised schema inside the supported subset is used as is and ``structuredContent`` becomes required;
    an absent one, or one outside the subset, falls back to any JSON and the field stays optional.
    """
    structured: Any = {}
    required = ["content"]
    if advertised is not None:
        try:
            assert_supported_schema(advertised)
            structured = snapshot_json(advertised)
            required.append("structuredContent")
        except (JsonSchemaError, NotLosslessJson):
            structured = {}
    return {
        "type": "object",
        "properties": {"content": {"type": "array", "items": {}}, "structuredContent": structured},
        "required": required,
        "additionalProperties": False,
    }


_RESPONSE_FIELDS: Final = frozenset({"content", "isError", "structuredContent", "toolResult"})


def _response_fields(result: object) -> dict[str, Any] | None:
    """The protocol fields of a server's response, or ``None`` when it is not a JSON object.

    The response is foreign data: only an exact ``dict`` counts as an object, and its fields are read by
    iterating it once (no lookups that could reach a key's own ``__eq__``).
    """
    if type(result) is not dict and type(result) is not FrozenDict:
        return None
    return {key: item for key, item in dict.items(result) if type(key) is str and key in _RESPONSE_FIELDS}


def _is_array(value: object) -> bool:
    return issubclass(type(value), list)


def _lossless(value: Any) -> JsonValue | None:
    """A frozen copy of ``value``, or ``None`` when it is not lossless JSON."""
    try:
        return snapshot_json(value)
    except NotLosslessJson:
        return None


def _js_truthy(value: Any) -> bool:
    """ECMAScript truthiness of protocol data, from the value's type alone ([] and {} are truthy there)."""
    kind = type(value)
    if value is None or kind is bool:
        return value is True
    if kind is str:
        return bool(value != "")
    if kind is int or kind is float:
        return bool(value == value and value != 0)  # NaN is falsy
    return True


def _error_text(content: Any, fields: Mapping[str, Any]) -> str:
    """The text of a failed call: the text blocks joined by newlines; for a legacy result its ``toolResult``.

    Parts of the response that are not lossless JSON count as absent (protocol data is always JSON there).
    """
    if _is_array(content):
        texts = []
        for raw in list.__iter__(content):
            block = _lossless(raw)
            if type(block) is FrozenDict and block.get("type") == "text" and type(block.get("text")) is str:
                texts.append(block["text"])
        return "\n".join(texts)
    if "toolResult" in fields:
        try:
            return canonical_json(snapshot_json(fields["toolResult"]))
        except NotLosslessJson:
            pass
    return "(no output)"


def _image_problem(block: Mapping[str, Any]) -> str | None:
    """Why an image block cannot reach the model, or ``None`` when it can."""
    data = block.get("data")
    if not isinstance(data, str) or not data:
        return "the MCP block is missing its image data"
    if block.get("mimeType") not in IMAGE_MEDIA_TYPES:
        return "unsupported media type"
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "the image data is not valid base64"
    return None


def _media_type(block: Mapping[str, Any]) -> str:
    mime = block.get("mimeType")
    return mime if isinstance(mime, str) and mime else "unknown media type"


def _project(content: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """The model-visible text parts of protocol blocks, and the image blocks that can reach the model."""
    parts: list[str] = []
    images: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            parts.append("[unsupported MCP content block: expected an object]")
            continue
        kind = block.get("type")
        if kind == "text":
            if isinstance(block.get("text"), str):
                parts.append(block["text"])
        elif kind == "image":
            problem = _image_problem(block)
            if problem is None:
                images.append({"type": "image", "attachment": {"mediaType": block["mimeType"], "data": block["data"]}})
            else:
                parts.append(
                    f"[image unavailable: {_media_type(block)}; {problem}; "
                    "raw image data remains available to programmatic callers]"
                )
        elif kind == "resource_link":
            name, uri = block.get("name"), block.get("uri")
            if isinstance(name, str) and name and isinstance(uri, str) and uri:
                parts.append(f"Resource link: {name} ({uri})")
            else:
                parts.append("[resource link unavailable: the MCP block is missing its name or URI]")
        elif kind == "audio":
            parts.append(
                f"[audio result unsupported: {_media_type(block)}; "
                "raw audio data remains available to programmatic callers]"
            )
        elif kind == "resource":
            parts.append("[embedded resource unsupported; raw resource data remains available to programmatic callers]")
        else:
            shown = kind if isinstance(kind, str) else canonical_json(kind) if kind is not None else "undefined"
            parts.append(f"[unsupported MCP content type: {shown}]")
    return parts, images


def extract_text(content: Any, raw_name: str) -> str:
    """The Native text of protocol blocks (digest 11.6); images that can reach the model add no text."""
    parts, _ = _project(content)
    return "\n".join(parts) if parts else f"({raw_name} returned no model-visible content)"


@dataclass(frozen=True, slots=True)
class _Prepared:
    value_text: str
    content: list[dict[str, Any]]


def mcp_tool(spec: Mapping[str, Any], server: McpServer, *, name: str | None = None) -> ToolDefinition:
    """A raw tool definition for one MCP tool; ``name`` overrides the registered name (default: the raw name)."""
    raw_name = spec["name"]
    if not isinstance(raw_name, str):
        raise TypeError("an MCP tool needs a string name")
    execution = spec.get("execution")
    task_only = isinstance(execution, Mapping) and execution.get("taskSupport") == "required"
    # the enriched projection prepared in execute, for finalize_content (keyed by the call's token)
    prepared: weakref.WeakKeyDictionary[DispatchToken, _Prepared] = weakref.WeakKeyDictionary()

    def render(args: JsonValue, value: JsonValue) -> list[dict[str, Any]]:
        return [{"type": "text", "text": extract_text(value["content"], raw_name)}]

    async def execute(args: JsonValue, run: ToolExecution) -> dict[str, Any]:
        if task_only:
            raise McpToolError(f'Tool "{raw_name}" requires task-based execution, which this bridge does not support')
        arguments = thaw(args) if isinstance(args, dict) else {}
        produced = server(raw_name, arguments)
        result = await produced if is_awaitable(produced) else produced
        fields = _response_fields(result)
        if fields is None:
            raise McpToolError(f'MCP tool "{raw_name}" returned a non-object result')
        content = fields.get("content")
        if _js_truthy(fields.get("isError")):
            raise McpToolError(_error_text(content, fields))
        if not _is_array(content):
            content = [{"type": "text", "text": _error_text(content, fields)}]
        value: dict[str, Any] = {"content": content}
        if "structuredContent" in fields:
            value["structuredContent"] = fields["structuredContent"]
        _prepare(run, value)
        return value

    def _prepare(run: ToolExecution, value: dict[str, Any]) -> None:
        if not is_lossless_json(value["content"]):
            return  # the registry rejects this value; nothing to enrich (and foreign blocks are never read)
        try:
            parts, images = _project(value["content"])
            if not images:
                return  # nothing to enrich: no copy of the value is kept
            value_text = canonical_json(snapshot_json(value))
        except NotLosslessJson:
            return  # the registry rejects this value; nothing to enrich
        blocks = [{"type": "text", "text": "\n".join(parts)}] if parts else []
        prepared[run.token] = _Prepared(value_text, blocks + images)

    def finalize_content(run: ToolExecution, result: ToolResult) -> Any:
        ready = prepared.pop(run.token, None)
        if ready is None or not isinstance(result, ToolSuccess):
            return None
        if canonical_json(result.value) != ready.value_text:
            return None
        if canonical_json(result.content) != canonical_json(render(run.arguments, result.value)):
            return None
        return ready.content

    return ToolDefinition(
        name=name if name is not None else raw_name,
        description=spec.get("description", ""),
        parameters=spec.get("inputSchema", {"type": "object"}),
        output=Output(mcp_output_schema(spec.get("outputSchema")), render),
        execute=execute,
        finalize_content=finalize_content,
    )


def register_mcp_tools(
    registry: Registry, specs: Iterable[Mapping[str, Any]], server: McpServer, *, prefix: str = ""
) -> Callable[[], None]:
    """Register every tool of a server (named ``prefix + raw name``); returns one disposer for all of them."""
    disposers: list[Callable[[], None]] = []
    try:
        for spec in specs:
            disposers.append(registry.register(mcp_tool(spec, server, name=prefix + spec["name"])))
    except BaseException:
        for dispose in reversed(disposers):
            dispose()
        raise

    def dispose_all() -> None:
        for dispose in reversed(disposers):
            dispose()

    return dispose_all
