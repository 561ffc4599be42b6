"""The MCP bridge: an MCP server's tools as registry tools whose value is ``{content, structuredContent?}``."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from toolcanon.definition import Output, ToolDefinition
from toolcanon.errors import JsonSchemaError, error_message, is_interrupt
from toolcanon.frozen import FrozenDict
from toolcanon.jsonvalue import JsonValue, NotLosslessJson, canonical_json, is_lossless_json, snapshot_json, thaw
from toolcanon.registry import is_awaitable, settle
from toolcanon.renderers._ecma import js_string, utf8
from toolcanon.result import DispatchToken, ToolResult, ToolSuccess
from toolcanon.schema import assert_supported_schema

if TYPE_CHECKING:
    from toolcanon.execution import ToolExecution
    from toolcanon.registry import Registry

__all__ = [
    "IMAGE_MEDIA_TYPES",
    "AttachmentStore",
    "ImageAdmissionError",
    "ImageUpload",
    "McpServer",
    "McpToolError",
    "extract_text",
    "mcp_output_schema",
    "mcp_tool",
    "public_tool_name",
    "register_mcp_tools",
]

McpServer: TypeAlias = Callable[[str, JsonValue], Awaitable[Any]]
"""``server(raw_name, arguments) -> CallToolResult``: stands for the MCP server; returns the raw result object.

A tool is given as plain data: ``name``, ``inputSchema``, and optionally ``outputSchema``, ``description`` and
``execution``."""

IMAGE_MEDIA_TYPES: Final = ("image/png", "image/jpeg", "image/webp", "image/gif")
"""The media types an MCP image block may carry to reach the model."""

_MAX_PUBLIC_NAME_LENGTH: Final = 64
_VALID_NAME: Final = re.compile(r"[A-Za-z0-9_-]*")
_HASH_LENGTH: Final = 12
_CANONICAL_BASE64: Final = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_NOT_ADMITTED: Final = "this result was not admitted to durable model context"
_NO_STORE: Final = "no attachment store is mounted"
_NO_ROUTE: Final = "the current model route could not be resolved"
_CANCELED: Final = "the tool call was canceled before image storage"
_ANOTHER_INVALID: Final = "another image in the same result was invalid"
_UNKNOWN_MEDIA: Final = "unknown media type"
_ABSENT_KEY: Final[Any] = object()

_ImageProjector: TypeAlias = Callable[[Mapping[str, Any], int], dict[str, Any]]
"""``image(block, index) -> content block``: what an image block of the protocol content becomes."""


class McpToolError(Exception):
    """A failure the bridge raises for a tool (``isError``, task-only tools); it carries no ``info``."""


@dataclass(frozen=True, slots=True)
class ImageUpload:
    """One decoded image of a tool result that the bridge hands an attachment store to keep."""

    media_type: str
    data: bytes


class ImageAdmissionError(Exception):
    """An attachment store's refusal of an image batch that the content could avoid (too many images, too large,
    not the declared type, ...); any other failure of the store is a storage failure."""


AttachmentStore: TypeAlias = Callable[[list[ImageUpload]], Any]
"""``store(images) -> references`` (plain or ``async``): keeps one result's images durably, in order, and answers
one JSON reference per image (the ``attachment`` of its image block), or raises.

Handing a store to the bridge admits images: it stands for the contract's mounted attachment store together
with a model route to a model that declares image input, the route being the call's agent."""


def public_tool_name(server_name: str, raw_name: str) -> str:
    """The registered, model-facing name of the server's tool ``raw_name``: ``mcp__<server>__<raw>``.

    The name is kept to 64 characters of ``[A-Za-z0-9_-]``: when that changes it, each other UTF-16 code unit
    becomes ``_`` and the name is cut to 51 characters and given ``_`` plus 12 hex digits of the SHA-256 of
    ``<server>\\0<raw>`` (UTF-8), so that two tools never share a name.
    """
    joined = f"mcp__{server_name}__{raw_name}"
    if _VALID_NAME.fullmatch(joined) is not None and len(joined) <= _MAX_PUBLIC_NAME_LENGTH:
        return joined
    normalized = "".join(
        char if _VALID_NAME.fullmatch(char) else "__" if ord(char) > 0xFFFF else "_" for char in joined
    )
    digest = hashlib.sha256(utf8(f"{server_name}\0{raw_name}")).hexdigest()[:_HASH_LENGTH]
    return f"{normalized[: _MAX_PUBLIC_NAME_LENGTH - _HASH_LENGTH - 1]}_{digest}"


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


def _lossless_blocks(content: list[Any]) -> list[JsonValue]:
    """Frozen copies of the protocol blocks; a block that is not lossless JSON counts as absent (protocol data
    is always JSON there, and a foreign object's code is never run)."""
    blocks: list[JsonValue] = []
    for raw in list.__iter__(content):
        try:
            blocks.append(snapshot_json(raw))
        except NotLosslessJson:
            continue
    return blocks


def _error_text(content: Any, fields: Mapping[str, Any], raw_name: str) -> str:
    """The message of a failed call (digest 11.4): the whole text projection of its blocks, image diagnostics
    included; for a legacy result its ``toolResult`` as JSON, or ``(no output)``."""
    if _is_array(content):
        return extract_text(_lossless_blocks(content), raw_name)
    return _legacy_text(fields)


def _legacy_text(fields: Mapping[str, Any]) -> str:
    if "toolResult" in fields:
        try:
            return canonical_json(snapshot_json(fields["toolResult"]))
        except NotLosslessJson:
            pass
    return "(no output)"


def _is_record(value: object) -> bool:
    return type(value) is dict or type(value) is FrozenDict


def _is_image(value: object) -> bool:
    """``isRecord(value) && value.type === 'image'``."""
    if not _is_record(value):
        return False
    kind = value.get("type")  # type: ignore[attr-defined]
    return type(kind) is str and kind == "image"


def _media_type(block: Mapping[str, Any]) -> str:
    """``block.mimeType ?? 'unknown media type'`` as a template literal prints it."""
    mime = block.get("mimeType")
    return _UNKNOWN_MEDIA if mime is None else js_string(mime)


def _joined(value: Any) -> str:
    """One item as ``Array.prototype.join`` prints it (``null`` prints nothing)."""
    return "" if value is None else js_string(value)


def _image_diagnostic(block: Mapping[str, Any], reason: str) -> str:
    return (
        f"[image unavailable: {_media_type(block)}; {reason}; raw image data remains available to programmatic callers]"
    )


def _diagnostic_projector(reason: str) -> _ImageProjector:
    return lambda block, index: {"type": "text", "text": _image_diagnostic(block, reason)}


def _decode_problem(block: Mapping[str, Any]) -> str | None:
    """Why an image block cannot be decoded for admission (PNG, JPEG, WebP or GIF in canonical base64), or
    ``None``."""
    mime = block.get("mimeType")
    if type(mime) is not str or mime not in IMAGE_MEDIA_TYPES:
        return "the declared media type is not PNG, JPEG, WebP, or GIF"
    data = block.get("data")
    if type(data) is not str or _CANONICAL_BASE64.fullmatch(data) is None:
        return "the image data is not canonical base64"
    try:
        decoded = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "the image data is not canonical base64"
    if base64.b64encode(decoded).decode("ascii") != data:  # the unused bits of the last character are not zero
        return "the image data is not canonical base64"
    return None


def _project(content: Iterable[Any], raw_name: str, image: _ImageProjector | None = None) -> list[dict[str, Any]]:
    """Protocol blocks as content blocks (digest 11.6): runs of text-like blocks coalesced with newlines, each
    image block one block of its own (``image`` decides it; by default a diagnostic that it was not admitted)."""
    projected: list[dict[str, Any]] = []
    text: list[str] = []

    def flush() -> None:
        if text:
            projected.append({"type": "text", "text": "\n".join(text)})
            text.clear()

    for index, block in enumerate(content):
        if not _is_record(block):
            text.append("[unsupported MCP content block: expected an object]")
            continue
        kind = block.get("type", _ABSENT_KEY)
        case = kind if type(kind) is str else None
        if case == "text":
            if "text" in block:
                text.append(_joined(block["text"]))
        elif case == "image":
            flush()
            projected.append(
                image(block, index) if image is not None else _diagnostic_projector(_NOT_ADMITTED)(block, index)
            )
        elif case == "resource_link":
            if "name" not in block or "uri" not in block:
                text.append("[resource link unavailable: the MCP block is missing its name or URI]")
            else:
                text.append(f"Resource link: {js_string(block['name'])} ({js_string(block['uri'])})")
        elif case == "audio":
            text.append(
                f"[audio result unsupported: {_media_type(block)}; "
                "raw audio data remains available to programmatic callers]"
            )
        elif case == "resource":
            text.append("[embedded resource unsupported; raw resource data remains available to programmatic callers]")
        else:
            shown = "undefined" if kind is _ABSENT_KEY else js_string(kind)
            text.append(f"[unsupported MCP content type: {shown}]")
    flush()
    return projected or [{"type": "text", "text": f"({raw_name} returned no model-visible content)"}]


def extract_text(content: Any, raw_name: str) -> str:
    """The Native text of protocol blocks (digest 11.6): the projection's texts joined by newlines, every image
    a diagnostic that it was not admitted to durable model context."""
    blocks = content if isinstance(content, list) else ()
    return "\n".join(block["text"] for block in _project(blocks, raw_name))


async def _image_projection(
    content: list[JsonValue], raw_name: str, run: ToolExecution, store: AttachmentStore | None
) -> list[dict[str, Any]]:
    """The content an image-bearing result gets at finalization (tools.ts `prepareImageProjection`).

    An image that cannot be decoded makes every image a diagnostic (its own reason, or that another one was
    invalid); then admission needs a store and the call's agent (its model route), and the call not aborted;
    then the store keeps the images, each becoming ``{type: "image", attachment: <its reference>}``, unless it
    refuses them (``image admission rejected the result: <message>``) or fails
    (``durable image storage rejected the result``).
    """
    problems: dict[int, str] = {}
    for index, block in enumerate(content):
        if _is_image(block):
            problem = _decode_problem(block)
            if problem is not None:
                problems[index] = problem
    if problems:
        return _project(
            content,
            raw_name,
            lambda block, index: {
                "type": "text",
                "text": _image_diagnostic(block, problems.get(index, _ANOTHER_INVALID)),
            },
        )
    if store is None:
        return _project(content, raw_name, _diagnostic_projector(_NO_STORE))
    if run.agent is None:
        return _project(content, raw_name, _diagnostic_projector(_NO_ROUTE))
    if run.signal is not None and run.signal.aborted:
        return _project(content, raw_name, _diagnostic_projector(_CANCELED))
    indexes = [index for index, block in enumerate(content) if _is_image(block)]
    uploads = [ImageUpload(content[index]["mimeType"], base64.b64decode(content[index]["data"])) for index in indexes]
    try:
        references = await settle(store(uploads))
        kept = [snapshot_json(reference) for reference in references]
        if len(kept) != len(uploads):
            raise ValueError(f"the store answered {len(kept)} references for {len(uploads)} images")
    except ImageAdmissionError as refused:
        reason = f"image admission rejected the result: {error_message(refused)}"
        return _project(content, raw_name, _diagnostic_projector(reason))
    except BaseException as thrown:
        if is_interrupt(thrown):
            raise
        return _project(content, raw_name, _diagnostic_projector("durable image storage rejected the result"))
    by_index = dict(zip(indexes, kept, strict=True))
    return _project(content, raw_name, lambda block, index: {"type": "image", "attachment": by_index[index]})


@dataclass(frozen=True, slots=True)
class _Prepared:
    value_text: str
    content: list[dict[str, Any]]


def mcp_tool(
    spec: Mapping[str, Any], server: McpServer, *, server_name: str, attachments: AttachmentStore | None = None
) -> ToolDefinition:
    """A raw tool definition for one MCP tool of the server ``server_name``, named
    :func:`public_tool_name` of the two; the server is called with the raw name. With ``attachments`` the
    images of a result are admitted for calls that have an agent."""
    raw_name = spec["name"]
    if not isinstance(raw_name, str):
        raise TypeError("an MCP tool needs a string name")
    execution = spec.get("execution")
    task_only = isinstance(execution, Mapping) and execution.get("taskSupport") == "required"
    # the image projection prepared in execute, for finalize_content (keyed by the call's token)
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
        if fields.get("isError") is True:  # `isError === true`: any other value is a success
            raise McpToolError(_error_text(content, fields, raw_name))
        if not _is_array(content):
            content = [{"type": "text", "text": _legacy_text(fields)}]
        value: dict[str, Any] = {"content": content}
        if "structuredContent" in fields:
            value["structuredContent"] = fields["structuredContent"]
        await _prepare(run, value)
        return value

    async def _prepare(run: ToolExecution, value: dict[str, Any]) -> None:
        if not is_lossless_json(value["content"]):
            return  # the registry rejects this value; nothing to project (and foreign blocks are never read)
        try:
            content = snapshot_json(value["content"])
            if not any(_is_image(block) for block in content):
                return  # no image: the render is the final content, and no copy of the value is kept
            value_text = canonical_json(snapshot_json(value))
        except NotLosslessJson:
            return  # the registry rejects this value; nothing to project
        projected = await _image_projection(content, raw_name, run, attachments)
        prepared[run.token] = _Prepared(value_text, projected)

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
        name=public_tool_name(server_name, raw_name),
        description=spec.get("description", ""),
        parameters=spec.get("inputSchema", {"type": "object"}),
        output=Output(mcp_output_schema(spec.get("outputSchema")), render),
        execute=execute,
        finalize_content=finalize_content,
    )


def register_mcp_tools(
    registry: Registry,
    specs: Iterable[Mapping[str, Any]],
    server: McpServer,
    *,
    server_name: str,
    attachments: AttachmentStore | None = None,
) -> Callable[[], None]:
    """Register every tool of the server ``server_name`` under its public name; returns one disposer for all.

    A tool listed twice makes the whole list invalid, before anything is registered; a registration that fails
    rolls the others back.
    """
    definitions: dict[str, ToolDefinition] = {}
    for spec in specs:
        definition = mcp_tool(spec, server, server_name=server_name, attachments=attachments)
        if definition.name in definitions:
            raise ValueError(
                f'mcp-client({server_name}): server listed tool "{spec["name"]}" more than once — invalid tool list'
            )
        definitions[definition.name] = definition
    disposers: list[Callable[[], None]] = []
    try:
        for definition in definitions.values():
            disposers.append(registry.register(definition))
    except BaseException:
        for dispose in reversed(disposers):
            dispose()
        raise

    def dispose_all() -> None:
        for dispose in reversed(disposers):
            dispose()

    return dispose_all
