"""The MCP bridge: value, output schema, arguments, errors, legacy shapes, Native text, images (digest 11.1-11.7)."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest

from conftest import plain
from toolcanon import ABSENT, Accept, Call, Registry, ToolResult, canonical_json
from toolcanon.mcp import (
    ImageAdmissionError,
    ImageUpload,
    extract_text,
    mcp_output_schema,
    mcp_tool,
    public_tool_name,
    register_mcp_tools,
)
from toolcanon.result import ToolError

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


class Server:
    """A fake MCP server: returns canned results per tool and records the calls."""

    def __init__(self, **results: Any) -> None:
        self.results = results
        self.calls: list[tuple[str, Any]] = []

    async def __call__(self, name: str, arguments: Any) -> Any:
        self.calls.append((name, arguments))
        return self.results[name]


def bridge(spec: dict[str, Any], result: Any, *, server_name: str = "srv", **options: Any) -> tuple[Registry, Server]:
    """A registry holding one tool of the server ``srv`` (registered as ``mcp__srv__<raw name>``)."""
    server = Server(**{spec["name"]: result})
    registry = Registry()
    registry.register(mcp_tool(spec, server, server_name=server_name, **options))
    return registry, server


def execute(registry: Registry, raw_name: str, arguments: Any = None, **fields: Any) -> ToolResult:
    """Call the tool of the server ``srv`` whose raw name is ``raw_name``."""
    call = Call("c1", f"mcp__srv__{raw_name}", {} if arguments is None else arguments, **fields)
    return asyncio.run(registry.execute(call))


def text_of(result: ToolResult) -> str:
    assert len(result.content) == 1
    return str(result.content[0]["text"])


# --- 11.1 / 11.5: the value ------------------------------------------------------------------------------


def test_protocol_blocks_are_kept_exactly_as_received() -> None:
    """digest 11.1: value is {content, structuredContent?}; blocks are kept even when they are not objects."""
    blocks = [{"type": "text", "text": "hi", "annotations": {"x": 1}}, "loose", 5, None, [1]]
    registry, _ = bridge({"name": "t", "inputSchema": {"type": "object"}}, {"content": blocks})
    result = execute(registry, "t")
    assert plain(result.value) == {"content": blocks}  # type: ignore[union-attr]
    with_structured, _ = bridge({"name": "s"}, {"content": [], "structuredContent": None})
    assert plain(execute(with_structured, "s").value) == {"content": [], "structuredContent": None}  # type: ignore[union-attr]


def test_legacy_results() -> None:
    """digest 11.5: a non-array `content` becomes [{type:'text', text}], text = JSON of toolResult or
    `(no output)`; structuredContent is kept."""
    registry, _ = bridge({"name": "old"}, {"toolResult": {"b": 1, "a": [2]}, "structuredContent": {"k": 1}})
    assert plain(execute(registry, "old").value) == {  # type: ignore[union-attr]
        "content": [{"type": "text", "text": '{"b":1,"a":[2]}'}],
        "structuredContent": {"k": 1},
    }
    empty, _ = bridge({"name": "empty"}, {"content": "not an array"})
    result = execute(empty, "empty")
    assert plain(result.value) == {"content": [{"type": "text", "text": "(no output)"}]}  # type: ignore[union-attr]
    assert text_of(result) == "(no output)"


# --- 11.2: the output schema -------------------------------------------------------------------------------


ANSWER = {
    "type": "object",
    "properties": {"answer": {"type": "number"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def test_output_schema_with_a_supported_advertised_schema() -> None:
    """digest 11.2: the advertised schema is used as is and structuredContent becomes required."""
    assert canonical_json(mcp_output_schema(ANSWER)) == (
        '{"type":"object","properties":{"content":{"type":"array","items":{}},"structuredContent":'
        '{"type":"object","properties":{"answer":{"type":"number"}},"required":["answer"],"additionalProperties":false}},'
        '"required":["content","structuredContent"],"additionalProperties":false}'
    )


@pytest.mark.parametrize("advertised", [None, {"type": "object", "patternProperties": {"^x": {}}}, {"anyOf": []}])
def test_output_schema_falls_back_to_any_json(advertised: Any) -> None:
    """digest 11.2: an absent or unsupported schema falls back to any JSON and the field stays optional."""
    assert canonical_json(mcp_output_schema(advertised)) == (
        '{"type":"object","properties":{"content":{"type":"array","items":{}},"structuredContent":{}},'
        '"required":["content"],"additionalProperties":false}'
    )


def test_missing_structured_content_is_invalid_output() -> None:
    """digest 11.2: with a supported advertised schema a response without structuredContent fails."""
    registry, _ = bridge({"name": "calc", "outputSchema": ANSWER}, {"content": []})
    result = execute(registry, "calc")
    assert result.error == ToolError(  # type: ignore[union-attr]
        'tool "mcp__srv__calc" returned invalid output: missing required property "value.structuredContent"',
        result.error.info,  # type: ignore[union-attr]
    )
    assert result.error.info.code == "INVALID_TOOL_OUTPUT"  # type: ignore[union-attr]
    assert not hasattr(result, "value")


def test_structured_content_mismatch_is_invalid_output() -> None:
    """digest 11.2: a mismatch names the path, e.g. `value.structuredContent.answer`."""
    registry, _ = bridge(
        {"name": "calc", "outputSchema": ANSWER}, {"content": [], "structuredContent": {"answer": "x"}}
    )
    assert execute(registry, "calc").error.message == (  # type: ignore[union-attr]
        'tool "mcp__srv__calc" returned invalid output: "value.structuredContent.answer" must be a number'
    )
    good, _ = bridge({"name": "calc", "outputSchema": ANSWER}, {"content": [], "structuredContent": {"answer": 4}})
    assert plain(execute(good, "calc").value) == {"content": [], "structuredContent": {"answer": 4}}  # type: ignore[union-attr]


def test_unsupported_schema_accepts_anything_and_stays_optional() -> None:
    """digest 11.2: outside the subset (patternProperties) structuredContent is any JSON and optional."""
    spec = {"name": "loose", "outputSchema": {"type": "object", "patternProperties": {"^x": {"type": "string"}}}}
    registry, _ = bridge(spec, {"content": [], "structuredContent": {"x": 1}})
    assert not execute(registry, "loose").is_error
    absent, _ = bridge(spec, {"content": []})
    assert not execute(absent, "loose").is_error


def test_advertised_schema_is_not_checked_for_object_rootedness() -> None:
    """digest 11.2: a scalar-rooted advertised schema is used (and enforced) as is."""
    registry, _ = bridge({"name": "n", "outputSchema": {"type": "string"}}, {"content": [], "structuredContent": 3})
    assert execute(registry, "n").error.message == (  # type: ignore[union-attr]
        'tool "mcp__srv__n" returned invalid output: "value.structuredContent" must be a string'
    )


# --- 11.3: arguments ---------------------------------------------------------------------------------------


def test_input_schema_becomes_parameters_unvalidated() -> None:
    """digest 11.3: inputSchema is the raw parameters; the registry does not validate arguments against it."""
    schema = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}
    registry, server = bridge({"name": "t", "inputSchema": schema, "description": "d"}, {"content": []})
    assert registry.schemas() == [{"name": "mcp__srv__t", "description": "d", "parameters": schema}]
    assert not execute(registry, "t", {"n": "not a number"}).is_error
    assert server.calls == [("t", {"n": "not a number"})]


@pytest.mark.parametrize("arguments", [[1, 2], "text", 3, None])
def test_non_object_arguments_are_sent_as_an_empty_object(arguments: Any) -> None:
    """digest 11.3: a non-object argument value is sent as {}."""
    registry, server = bridge({"name": "t"}, {"content": []})
    asyncio.run(registry.execute(Call("c1", "mcp__srv__t", arguments)))
    assert server.calls == [("t", {})]


# --- 11.4: errors --------------------------------------------------------------------------------------------


def test_is_error_becomes_a_failure_without_info() -> None:
    """digest 11.4 / tools.ts `createExecutor`: isError throws Error(extractText(content)): the whole text
    projection, image diagnostics included; no info, no value."""
    content = [{"type": "text", "text": "first"}, {"type": "image", "data": PNG}, {"type": "text", "text": "second"}]
    registry, _ = bridge({"name": "t"}, {"content": content, "isError": True})
    result = execute(registry, "t")
    message = (
        "first\n[image unavailable: unknown media type; this result was not admitted to durable model context; "
        "raw image data remains available to programmatic callers]\nsecond"
    )
    assert result.error == ToolError(message)  # type: ignore[union-attr]
    assert plain(result.content) == [{"type": "text", "text": f"Error: {message}"}]
    assert result.is_error and not hasattr(result, "value") and result.meta is ABSENT


def test_an_error_with_nothing_projected_says_so() -> None:
    registry, _ = bridge({"name": "t"}, {"content": [], "isError": True})
    assert execute(registry, "t").error == ToolError("(t returned no model-visible content)")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ({"toolResult": {"why": "bad"}, "isError": True}, '{"why":"bad"}'),
        ({"isError": True}, "(no output)"),
    ],
)
def test_legacy_error_text(response: Any, message: str) -> None:
    """digest 11.4: for legacy results the text is JSON of toolResult, or `(no output)`."""
    registry, _ = bridge({"name": "t"}, response)
    assert execute(registry, "t").error == ToolError(message)  # type: ignore[union-attr]


@pytest.mark.parametrize("flag", [False, 0, "", None, 1, "true", [], {}])
def test_only_a_true_is_error_is_a_failure(flag: Any) -> None:
    """tools.ts `createExecutor`: `result.isError === true`; any other value, truthy or not, is a success."""
    registry, _ = bridge({"name": "t"}, {"content": [], "isError": flag})
    assert not execute(registry, "t").is_error
    legacy, _ = bridge({"name": "t"}, {"toolResult": 1, "isError": flag})
    assert plain(execute(legacy, "t").content) == [{"type": "text", "text": "1"}]


def test_task_only_tools_are_refused_without_calling_the_server() -> None:
    """digest 11.4: `Tool "<raw>" requires task-based execution, which this bridge does not support`."""
    registry, server = bridge({"name": "slow", "execution": {"taskSupport": "required"}}, {"content": []})
    result = execute(registry, "slow")
    assert result.error == ToolError(  # type: ignore[union-attr]
        'Tool "slow" requires task-based execution, which this bridge does not support'
    )
    assert server.calls == []


def test_non_object_response_is_a_failure() -> None:
    registry, _ = bridge({"name": "t"}, "nonsense")
    assert execute(registry, "t").error == ToolError('MCP tool "t" returned a non-object result')  # type: ignore[union-attr]


# --- 11.6: Native text ---------------------------------------------------------------------------------------

NOT_ADMITTED = "this result was not admitted to durable model context"


def unavailable(media_type: str, reason: str) -> str:
    return f"[image unavailable: {media_type}; {reason}; raw image data remains available to programmatic callers]"


def test_native_text_literals() -> None:
    """digest 11.6: every literal of the text projection, joined by newlines; in the Native text every image is
    a diagnostic that it was not admitted (tools.ts `projectContent`, `imageDiagnostic`)."""
    content = [
        {"type": "text", "text": "plain"},
        {"type": "text"},
        "loose",
        {"type": "resource_link", "name": "spec", "uri": "file:///spec.md"},
        {"type": "resource_link", "name": "nameless"},
        {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"},
        {"type": "audio"},
        {"type": "resource", "resource": {"uri": "x"}},
        {"type": "video"},
        {"kind": "no type"},
        {"type": "image", "mimeType": "image/tiff", "data": PNG},
        {"type": "image", "data": PNG},
        {"type": "image", "mimeType": "image/png", "data": "!!not base64!!"},
        {"type": "image", "mimeType": "image/png", "data": PNG},
    ]
    assert extract_text(content, "srv_tool").split("\n") == [
        "plain",
        "[unsupported MCP content block: expected an object]",
        "Resource link: spec (file:///spec.md)",
        "[resource link unavailable: the MCP block is missing its name or URI]",
        "[audio result unsupported: audio/wav; raw audio data remains available to programmatic callers]",
        "[audio result unsupported: unknown media type; raw audio data remains available to programmatic callers]",
        "[embedded resource unsupported; raw resource data remains available to programmatic callers]",
        "[unsupported MCP content type: video]",
        "[unsupported MCP content type: undefined]",
        unavailable("image/tiff", NOT_ADMITTED),
        unavailable("unknown media type", NOT_ADMITTED),
        unavailable("image/png", NOT_ADMITTED),
        unavailable("image/png", NOT_ADMITTED),
    ]


def test_fields_print_as_a_template_literal_does() -> None:
    """tools.ts `projectContent`: fields are only checked for presence and printed with String(); a text item
    that is null prints nothing (Array.prototype.join), a null media type is the unknown one."""
    content = [
        {"type": "text", "text": None},
        {"type": "text", "text": 2.0},
        {"type": "text", "text": ["a", None, [1, 2]]},
        {"type": "resource_link", "name": "", "uri": None},
        {"type": "audio", "mimeType": None},
        {"type": "audio", "mimeType": 7},
        {"type": None},
        {"type": {"k": 1}},
        {"type": ["x", "y"]},
        {"type": "image", "mimeType": False},
    ]
    assert extract_text(content, "t").split("\n") == [
        "",
        "2",
        "a,,1,2",
        "Resource link:  (null)",
        "[audio result unsupported: unknown media type; raw audio data remains available to programmatic callers]",
        "[audio result unsupported: 7; raw audio data remains available to programmatic callers]",
        "[unsupported MCP content type: null]",
        "[unsupported MCP content type: [object Object]]",
        "[unsupported MCP content type: x,y]",
        unavailable("false", NOT_ADMITTED),
    ]


@pytest.mark.parametrize("content", [[], [{"type": "text"}]])
def test_nothing_projected(content: Any) -> None:
    """digest 11.6: `(<rawName> returned no model-visible content)`."""
    assert extract_text(content, "srv_tool") == "(srv_tool returned no model-visible content)"


def test_an_image_alone_is_projected() -> None:
    assert extract_text([{"type": "image", "mimeType": "image/png", "data": PNG}], "t") == unavailable(
        "image/png", NOT_ADMITTED
    )


def test_render_uses_the_raw_name() -> None:
    """digest 11.6: rendering is [{type:'text', text: extractText(value.content, rawName)}]."""
    registry, _ = bridge({"name": "raw"}, {"content": []}, server_name="server")
    assert plain(asyncio.run(registry.execute(Call("c1", "mcp__server__raw", {}))).content) == [
        {"type": "text", "text": "(raw returned no model-visible content)"}
    ]


# --- 11.7: images at finalization ---------------------------------------------------------------------------


IMAGE_RESULT = {
    "content": [{"type": "text", "text": "a chart"}, {"type": "image", "mimeType": "image/png", "data": PNG}]
}
NO_STORE = [
    {"type": "text", "text": "a chart"},
    {"type": "text", "text": unavailable("image/png", "no attachment store is mounted")},
]


def test_an_image_result_ends_its_text_block_before_each_image() -> None:
    """digest 11.7 / tools.ts `prepareImageProjection`: an untouched success gets, in finalizeContent, one block
    per text run and one per image; without an attachment store every image says so."""
    registry, _ = bridge({"name": "chart"}, IMAGE_RESULT)
    result = execute(registry, "chart")
    assert plain(result.content) == NO_STORE
    assert plain(result.value) == IMAGE_RESULT  # type: ignore[union-attr]
    only, _ = bridge({"name": "pic"}, {"content": IMAGE_RESULT["content"][1:]})
    assert plain(execute(only, "pic").content) == NO_STORE[1:]


NOT_AN_IMAGE_TYPE = "the declared media type is not PNG, JPEG, WebP, or GIF"
NOT_CANONICAL = "the image data is not canonical base64"


@pytest.mark.parametrize(
    ("block", "reason"),
    [
        ({"type": "image", "mimeType": "image/bmp", "data": PNG}, NOT_AN_IMAGE_TYPE),
        ({"type": "image", "data": PNG}, NOT_AN_IMAGE_TYPE),
        ({"type": "image", "mimeType": "image/png"}, NOT_CANONICAL),
        ({"type": "image", "mimeType": "image/png", "data": "not base64!"}, NOT_CANONICAL),
        ({"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo"}, NOT_CANONICAL),
        ({"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgp="}, NOT_CANONICAL),
        ({"type": "image", "mimeType": "image/png", "data": "iVBO\nRw0KGgo="}, NOT_CANONICAL),
        ({"type": "image", "mimeType": "image/png", "data": 1234}, NOT_CANONICAL),
    ],
)
def test_an_undecodable_image_makes_every_image_a_diagnostic(block: Any, reason: str) -> None:
    """tools.ts `decodeImage`: the declared media type first, then canonical base64; one invalid image makes
    the others `another image in the same result was invalid`."""
    good = {"type": "image", "mimeType": "image/jpeg", "data": PNG}
    registry, _ = bridge({"name": "pics"}, {"content": [good, {"type": "text", "text": "between"}, block]})
    media = block.get("mimeType", "unknown media type")
    assert plain(execute(registry, "pics").content) == [
        {"type": "text", "text": unavailable("image/jpeg", "another image in the same result was invalid")},
        {"type": "text", "text": "between"},
        {"type": "text", "text": unavailable(media, reason)},
    ]


class Attachments:
    """An attachment store keeping what it is handed; its references are ``{"attachmentId": "a<n>"}``."""

    def __init__(self, fail: BaseException | None = None, answer: Any = None) -> None:
        self.kept: list[ImageUpload] = []
        self.fail = fail
        self.answer = answer

    async def __call__(self, images: list[ImageUpload]) -> Any:
        if self.fail is not None:
            raise self.fail
        self.kept.extend(images)
        return self.answer if self.answer is not None else [{"attachmentId": f"a{n}"} for n in range(len(images))]


def test_an_admitted_image_is_stored_and_its_reference_is_the_block() -> None:
    """tools.ts `prepareImageProjection`: with a store and the call's model route (its agent), the decoded images
    go to the store in order and each block becomes `{type: "image", attachment: <reference>}`."""
    store = Attachments()
    content = [
        *IMAGE_RESULT["content"],
        {"type": "text", "text": "then"},
        {"type": "image", "mimeType": "image/gif", "data": ""},
    ]
    registry, _ = bridge({"name": "chart"}, {"content": content}, attachments=store)
    result = execute(registry, "chart", agent="agent")
    assert plain(result.content) == [
        {"type": "text", "text": "a chart"},
        {"type": "image", "attachment": {"attachmentId": "a0"}},
        {"type": "text", "text": "then"},
        {"type": "image", "attachment": {"attachmentId": "a1"}},
    ]
    assert store.kept == [ImageUpload("image/png", b"\x89PNG\r\n\x1a\n"), ImageUpload("image/gif", b"")]


@pytest.mark.parametrize(
    ("store", "agent", "reason"),
    [
        (Attachments(), None, "the current model route could not be resolved"),
        (
            Attachments(ImageAdmissionError("Image batch exceeds the limit.")),
            "agent",
            "image admission rejected the result: Image batch exceeds the limit.",
        ),
        (Attachments(OSError("disk")), "agent", "durable image storage rejected the result"),
        (Attachments(answer=[]), "agent", "durable image storage rejected the result"),
        (Attachments(answer=[float("nan")]), "agent", "durable image storage rejected the result"),
    ],
    ids=["no-agent", "refused", "failed", "too-few-references", "not-json"],
)
def test_an_image_that_is_not_admitted_says_why(store: Attachments, agent: str | None, reason: str) -> None:
    """tools.ts `resolveImageAdmission` and the store's failures: every image becomes a diagnostic (a call
    without an agent has no model route)."""
    registry, _ = bridge({"name": "chart"}, IMAGE_RESULT, attachments=store)
    assert plain(execute(registry, "chart", agent=agent).content) == [
        {"type": "text", "text": "a chart"},
        {"type": "text", "text": unavailable("image/png", reason)},
    ]


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        (Accept(content=[{"type": "text", "text": "policy"}]), [{"type": "text", "text": "policy"}]),
        (Accept(value={"content": [{"type": "text", "text": "new"}]}), [{"type": "text", "text": "new"}]),
        (Accept(value=IMAGE_RESULT), NO_STORE),
    ],
)
def test_post_execute_replacements_disable_the_image_projection(decision: Accept, expected: Any) -> None:
    """digest 11.7: a content or value replacement disables it (a value replacement that deep-equals the
    produced value keeps it, since only deep equality is checked)."""
    registry, _ = bridge({"name": "chart"}, IMAGE_RESULT)
    registry.on_post_execute(lambda run, result, nxt: decision)
    assert plain(execute(registry, "chart").content) == expected


def test_no_image_projection_for_failures() -> None:
    """digest 11.7: only a final success gets it; a failure keeps its `Error:` text."""
    registry, _ = bridge({"name": "chart"}, IMAGE_RESULT)
    registry.on_execute(lambda run, nxt: _fail_after(nxt))
    result = execute(registry, "chart")
    assert result.is_error and plain(result.content) == [{"type": "text", "text": "Error: wrapped"}]


async def _fail_after(nxt: Any) -> Any:
    await nxt()
    raise RuntimeError("wrapped")


def test_register_mcp_tools_under_public_names_with_one_disposer() -> None:
    """A whole server: every tool registered as `mcp__<server>__<raw>`; one disposer removes them all."""
    server = Server(a={"content": [{"type": "text", "text": "A"}]}, b={"content": []})
    registry = Registry()
    dispose = register_mcp_tools(registry, [{"name": "a"}, {"name": "b"}], server, server_name="srv")
    assert registry.has("mcp__srv__a") and registry.has("mcp__srv__b")
    assert text_of(execute(registry, "a")) == "A"
    assert server.calls == [("a", {})]  # the server is called with the raw name
    dispose()
    assert not registry.has("mcp__srv__a") and not registry.has("mcp__srv__b")


def test_a_tool_listed_twice_invalidates_the_list() -> None:
    """tools.ts `syncTools`: a duplicate is refused before anything is registered."""
    registry = Registry()
    with pytest.raises(ValueError) as caught:
        register_mcp_tools(registry, [{"name": "b"}, {"name": "a"}, {"name": "a"}], Server(), server_name="srv")
    assert str(caught.value) == 'mcp-client(srv): server listed tool "a" more than once — invalid tool list'
    assert not registry.has("mcp__srv__b")


def test_a_registration_failure_rolls_the_others_back() -> None:
    registry = Registry()
    registry.register(mcp_tool({"name": "b"}, Server(), server_name="srv"))
    with pytest.raises(ValueError, match="is already registered"):
        register_mcp_tools(registry, [{"name": "a"}, {"name": "b"}], Server(), server_name="srv")
    assert not registry.has("mcp__srv__a")


@pytest.mark.parametrize(
    ("server_name", "raw_name", "public"),
    [
        ("fixture", "t", "mcp__fixture__t"),
        ("fixture", "x" * 50, "mcp__fixture__" + "x" * 50),
        ("fixture", "read.me", "mcp__fixture__read_me_349c83b79e05"),
        ("fixture", "x" * 51, "mcp__fixture__" + "x" * 37 + "_563ce0d166ec"),
        ("fixture", "x" * 60, "mcp__fixture__" + "x" * 37 + "_5ed4c21731ea"),
        ("srv", "é\U0001f600\ud800z", "mcp__srv______z_6f623a3929b2"),
        ("a b", "c/d", "mcp__a_b__c_d_8abe183a7211"),
    ],
)
def test_public_tool_name(server_name: str, raw_name: str, public: str) -> None:
    """tools.ts `publicToolName` (values recorded from Node): `mcp__<server>__<raw>` when it is at most 64
    characters of [A-Za-z0-9_-]; otherwise each other UTF-16 code unit becomes `_`, and the name is cut to 51
    characters plus `_` and 12 hex digits of SHA-256(`<server>\\0<raw>`)."""
    assert public_tool_name(server_name, raw_name) == public


def test_a_non_json_block_type_is_the_registrys_lossless_failure() -> None:
    """digest 11.1 / 3.7: blocks are kept as received, so a non-JSON one fails the value snapshot, not the bridge."""
    server = Server(calc={"content": [{"type": float("nan"), "data": "x"}]})
    registry = Registry()
    registry.register(mcp_tool({"name": "calc"}, server, server_name="srv"))
    result = execute(registry, "calc")
    assert result.error.message == 'tool "mcp__srv__calc" returned invalid output: value is not lossless JSON'  # type: ignore[union-attr]
