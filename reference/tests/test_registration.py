"""Registration checks in order, the disposer, define_tool, and schemas() (digest 1.4-1.14, 12.4, 12.5)."""

from __future__ import annotations

import math
from dataclasses import fields
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import call, echo_tool, raw_tool, text_render
from toolcanon import DispatchToken, JsonSchemaError, Output, Registry, ToolDefinition, define_tool
from toolcanon.errors import DuplicateToolError, ReservedToolNameError, contract_error_name

DECLARATION = 'tool "t" must declare output { schema, render, presentationMeta? }'


@pytest.mark.parametrize(
    "output",
    [
        None,
        "not a declaration",
        Output({}, "not callable"),  # type: ignore[arg-type]
        Output({}, text_render(), presentation_meta="not callable"),  # type: ignore[arg-type]
        {"schema": {}},
        {"schema": {}, "render": text_render(), "presentationMeta": 1},
    ],
    ids=[
        "missing",
        "not-an-object",
        "render-not-callable",
        "meta-not-callable",
        "mapping-no-render",
        "mapping-bad-meta",
    ],
)
def test_output_declaration_is_checked_first(output: Any) -> None:
    """digest 1.4: TypeError with the exact message, before the schema, timeout and name checks."""
    definition = ToolDefinition("t", "t", {"type": "object"}, output, lambda a, r: 1, timeout_ms=-1)
    with pytest.raises(TypeError) as caught:
        Registry().register(definition)
    assert str(caught.value) == DECLARATION
    assert contract_error_name(caught.value) == "TypeError"


def test_missing_schema_fails_at_the_schema_check() -> None:
    """digest 1.4/1.5: a declaration without schema passes 1.4 and fails 1.5."""
    definition = ToolDefinition("t", "t", {}, {"render": text_render()}, lambda a, r: 1)
    with pytest.raises(JsonSchemaError) as caught:
        Registry().register(definition)
    assert str(caught.value) == "unsupported JSON schema: schema must be a schema object"
    assert (caught.value.name, caught.value.code) == ("JsonSchemaError", "UNSUPPORTED_SCHEMA")


def test_unsupported_schema_reports_every_violation() -> None:
    """digest 1.5: all violations of the raw subset, joined by '; '."""
    schema = {"type": "string", "pattern": "x", "minLength": 1}
    with pytest.raises(JsonSchemaError) as caught:
        Registry().register(raw_tool("t", lambda a, r: "x", schema=schema, timeout_ms=0))
    assert str(caught.value) == (
        "unsupported JSON schema: "
        "schema.pattern is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties"
        "/items/enum/const + annotations); "
        "schema.minLength is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties"
        "/items/enum/const + annotations)"
    )


@pytest.mark.parametrize("timeout", [0, -1, math.inf, math.nan, "5", True])
def test_bad_timeout_is_rejected_after_the_schema(timeout: Any) -> None:
    """digest 1.6."""
    with pytest.raises(TypeError) as caught:
        Registry().register(raw_tool("t", lambda a, r: 1, timeout_ms=timeout))
    assert str(caught.value) == 'tool "t" timeoutMs must be a positive finite number'


def test_positive_timeout_registers() -> None:
    Registry().register(raw_tool("t", lambda a, r: 1, timeout_ms=0.5))


def test_run_code_is_reserved() -> None:
    """digest 1.7: unconditional, after the timeout check."""
    registry = Registry()
    with pytest.raises(ReservedToolNameError) as caught:
        registry.register(raw_tool("run_code", lambda a, r: 1))
    assert str(caught.value) == (
        'tool name "run_code" is reserved for the Code Mode presentation transport and cannot be registered or shadowed'
    )
    assert contract_error_name(caught.value) == "Error"
    with pytest.raises(TypeError):
        registry.register(raw_tool("run_code", lambda a, r: 1, timeout_ms=0))


def test_duplicates_are_rejected_and_the_disposer_unregisters() -> None:
    """digest 1.8-1.9."""
    registry = Registry()
    dispose = registry.register(echo_tool())
    with pytest.raises(DuplicateToolError) as caught:
        registry.register(echo_tool())
    assert str(caught.value) == (
        'tool "echo" is already registered '
        "(for a per-agent variant, register through that agent's `agent.ctx` instead)"
    )
    assert contract_error_name(caught.value) == "Error"
    dispose()
    assert not registry.has("echo")
    assert call(registry, "echo", {"text": "x"}).is_error
    registry.register(echo_tool())
    dispose()  # a stale disposer does not remove the new registration
    assert registry.has("echo")


def test_change_listener_failure_rolls_the_registration_back() -> None:
    """digest 1.9."""
    registry = Registry()
    seen: list[str] = []

    def listener(name: str) -> None:
        seen.append(name)
        if len(seen) == 1:
            raise RuntimeError("listener refused")

    registry.on_change(listener)
    with pytest.raises(RuntimeError):
        registry.register(echo_tool())
    assert not registry.has("echo")
    assert seen == ["echo", "echo"]  # the registration, then its rollback
    registry.register(echo_tool())
    assert registry.has("echo")
    assert seen == ["echo", "echo", "echo"]


def test_a_listener_failing_on_the_rollback_raises_that_error_instead() -> None:
    """As the original's rollback: the rollback is told as a disposal is, and a raise there is what propagates."""
    registry = Registry()
    heard: list[str] = []

    def refusing(name: str) -> None:
        heard.append(name)
        raise RuntimeError(f"listener refused {len(heard)}")

    registry.on_change(refusing)
    with pytest.raises(RuntimeError, match="refused 2") as raised:
        registry.register(echo_tool())
    assert str(raised.value.__context__) == "listener refused 1"
    assert not registry.has("echo")
    assert heard == ["echo", "echo"]


def test_change_listener_failure_on_disposal_propagates_after_the_tool_goes() -> None:
    """As the original's disposer: the tool is removed, then the listener's error reaches the disposer's caller,
    and the listeners after it are not told."""
    registry = Registry()
    dispose = registry.register(echo_tool())
    heard: list[str] = []

    def listener(name: str) -> None:
        raise RuntimeError("listener refused")

    registry.on_change(listener)
    registry.on_change(heard.append)
    with pytest.raises(RuntimeError, match="listener refused"):
        dispose()
    assert not registry.has("echo")
    assert heard == []
    dispose()  # disposing again changes nothing and tells no one
    assert heard == []


def test_not_checked_at_registration() -> None:
    """digest 1.10: name format, description, parameters and execute are not checked."""
    registry = Registry()
    registry.register(ToolDefinition("", 5, {"default": math.nan}, Output({}, text_render()), None))  # type: ignore[arg-type]
    assert registry.has("")


def test_schemas_projects_name_description_parameters_only() -> None:
    """digest 12.4: a fresh lossless copy; callbacks, timeout and output never exposed."""
    registry = Registry()
    registry.register(echo_tool(timeout_ms=100))
    schemas = registry.schemas()
    assert schemas == [
        {
            "name": "echo",
            "description": "Echo text.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        }
    ]
    schemas[0]["parameters"]["properties"]["text"]["type"] = "number"
    assert registry.schemas()[0]["parameters"]["properties"]["text"]["type"] == "string"


def test_schemas_rejects_non_lossless_parameters() -> None:
    """digest 1.10 / 12.4: registration accepts it, only the projection fails."""
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, parameters={"type": "object", "default": math.nan}))
    with pytest.raises(ValueError) as caught:
        registry.schemas()
    assert str(caught.value) == 'tool "t" parameters must be lossless JSON before schema projection'


def test_define_tool_checks_timeout_before_compiling() -> None:
    """digest 1.11."""
    with pytest.raises(ValueError) as caught:
        echo_tool(timeout_ms=0, parameters={"x": {"type": "nope"}})
    assert str(caught.value) == "defineTool(echo): timeoutMs must be a positive finite number"
    assert contract_error_name(caught.value) == "Error"


def test_define_tool_compiles_parameters_then_output() -> None:
    """digest 1.11: parameters are compiled (path ``parameters``) before the output schema (path ``schema``)."""
    with pytest.raises(JsonSchemaError) as caught:
        echo_tool(parameters={"x": {"type": "nope"}}, output=Output({"type": "nope"}, text_render()))
    assert str(caught.value) == (
        "unsupported JSON schema: parameters.x.type must be string/number/integer/boolean/null/array/object/json, "
        "or use oneOf"
    )
    with pytest.raises(JsonSchemaError) as caught:
        echo_tool(output=Output({"type": "object"}, text_render()))
    assert str(caught.value) == "unsupported JSON schema: schema.additionalProperties must be explicitly true or false"


@pytest.mark.parametrize("render", [None, "not callable"])
def test_define_tool_without_a_render_registers_and_fails_at_render(render: Any) -> None:
    """DSL:554-577: defineTool always wraps render, so a DSL tool declared without one registers and each call
    fails at render with the language's own text for calling what is not a function."""
    registry = Registry()
    registry.register(echo_tool(output=Output({"type": "string"}, render)))
    result = call(registry, "echo", {"text": "hi"})
    message = (
        f"tool \"echo\" returned invalid output: output.render failed: '{type(render).__name__}' object is not callable"
    )
    assert result.error.message == message  # type: ignore[union-attr]
    assert (result.error.info.name, result.error.info.code) == ("ToolOutputError", "INVALID_TOOL_OUTPUT")  # type: ignore[union-attr]
    assert result.content == [{"type": "text", "text": f"Error: {message}"}]


@pytest.mark.parametrize("projector", [5, "not callable", True, {"a": 1}], ids=["int", "str", "bool", "dict"])
def test_define_tool_with_a_projector_that_is_not_callable_registers_and_fails_at_direct_calls(projector: Any) -> None:
    """DSL:556-583: defineTool wraps a presentationMeta other than undefined (here ``None``), so the tool registers,
    each direct call fails at its metadata with the language's own text, and a nested call, which computes no
    metadata, succeeds; a raw definition with one is still refused (R-REG-1)."""
    registry = Registry()
    registry.register(echo_tool(output=Output({"type": "string"}, text_render(), projector)))
    result = call(registry, "echo", {"text": "hi"})
    message = (
        'tool "echo" returned invalid output: output.presentationMeta failed: '
        f"'{type(projector).__name__}' object is not callable"
    )
    assert result.error.message == message  # type: ignore[union-attr]
    assert (result.error.info.name, result.error.info.code) == ("ToolOutputError", "INVALID_TOOL_OUTPUT")  # type: ignore[union-attr]
    assert result.content == [{"type": "text", "text": f"Error: {message}"}]
    nested = call(registry, "echo", {"text": "hi"}, parent=DispatchToken())
    assert nested.value == "hi" and not nested.has_meta  # type: ignore[union-attr]
    raw = ToolDefinition("t", "t", {}, Output({}, text_render(), projector), lambda a, r: 1)
    with pytest.raises(TypeError, match="must declare output"):
        Registry().register(raw)


def test_define_tool_without_a_projector_has_no_metadata() -> None:
    """digest 4.4: ``None`` is no projector (Python's absent), so results have no ``meta`` at all."""
    registry = Registry()
    definition = echo_tool(output=Output({"type": "string"}, text_render(), None))
    assert definition.output.presentation_meta is None
    registry.register(definition)
    assert not call(registry, "echo", {"text": "hi"}).has_meta


def test_define_tool_soft_projections() -> None:
    """digest 1.13: present_call / present_result / is_concurrency_safe never raise on bad arguments."""
    definition = echo_tool(
        parameters={"text": {"type": "string", "required": True}},
        present_call=lambda args: f"echo {args['text']}",
        present_result=lambda args, result: "shown",
        is_concurrency_safe=lambda args: True,
    )
    assert definition.present_call is not None and definition.present_result is not None
    assert definition.is_concurrency_safe is not None
    assert definition.present_call({"text": "hi"}) == "echo hi"
    assert definition.present_call({"text": 1}) is None
    assert definition.present_result({}, None) is None
    assert definition.is_concurrency_safe({"text": "x"}) is True
    assert definition.is_concurrency_safe({}) is False


def test_execution_mode() -> None:
    """digest 12.5: parallel only for exactly True; a raise means exclusive."""
    registry = Registry()

    def raising(args: Any) -> bool:
        raise RuntimeError("no")

    registry.register(raw_tool("yes", lambda a, r: 1, is_concurrency_safe=lambda args: True))
    registry.register(raw_tool("truthy", lambda a, r: 1, is_concurrency_safe=lambda args: 1))
    registry.register(raw_tool("raises", lambda a, r: 1, is_concurrency_safe=raising))
    registry.register(raw_tool("none", lambda a, r: 1))
    assert registry.execution_mode("yes", {}) == "parallel"
    assert registry.execution_mode("truthy", {}) == "exclusive"
    assert registry.execution_mode("raises", {}) == "exclusive"
    assert registry.execution_mode("none", {}) == "exclusive"
    assert registry.execution_mode("missing", {}) == "exclusive"


def test_content_fixture_style_tool_value_is_content() -> None:
    """digest 1.14: an identity renderer over ``array of json`` makes the value the content."""
    registry = Registry()
    blocks = [{"type": "text", "text": "done"}]
    registry.register(
        define_tool(
            name="blocks",
            description="",
            parameters={},
            output=Output({"type": "array", "items": {"type": "json"}}, lambda args, value: value),
            execute=lambda args, run: blocks,
        )
    )
    result = call(registry, "blocks")
    assert not result.is_error
    assert result.value == blocks and result.content == blocks


def test_a_definition_without_a_timeout_member_registers_as_one_without_a_timeout() -> None:
    """The registry reads a definition by its members: one that has no ``timeout_ms`` at all has no budget."""
    full = echo_tool()
    duck = SimpleNamespace(**{field.name: getattr(full, field.name) for field in fields(full)})
    del duck.timeout_ms
    registry = Registry()
    registry.register(duck)  # type: ignore[arg-type]
    assert call(registry, "echo", {"text": "hi"}).content == [{"type": "text", "text": "render:hi"}]


def test_a_mapping_output_reads_a_snake_case_presentation_meta() -> None:
    """An output given as a mapping may name its projector ``presentation_meta``, as the Python field is named."""
    output = {"schema": {}, "render": lambda a, v: [], "presentation_meta": lambda a, v: {"k": 1}}
    registry = Registry()
    registry.register(raw_tool("t", lambda a, run: 1, output=output))
    result = call(registry, "t")
    assert result.meta == {"k": 1}


def test_an_interrupt_from_the_concurrency_check_propagates() -> None:
    """digest 1.13: an ordinary error from is_concurrency_safe makes the call exclusive, but KeyboardInterrupt,
    SystemExit and GeneratorExit from it propagate out of execution_mode."""
    for thrown, stops in [
        (ValueError("check"), False),
        (KeyboardInterrupt("stop"), True),
        (SystemExit("stop"), True),
        (GeneratorExit("stop"), True),
    ]:

        def check(args: Any, thrown: BaseException = thrown) -> bool:
            raise thrown

        registry = Registry()
        registry.register(raw_tool("t", lambda a, r: 1, is_concurrency_safe=check))
        if stops:
            with pytest.raises(type(thrown)):
                registry.execution_mode("t", {})
        else:
            assert registry.execution_mode("t", {}) == "exclusive"


def test_a_disposal_tells_the_change_listeners_the_tools_name() -> None:
    """A registration and its disposal are each told to every change listener with the tool's name."""
    registry = Registry()
    heard: list[str] = []
    registry.on_change(heard.append)
    dispose = registry.register(echo_tool())
    dispose()
    assert heard == ["echo", "echo"]
    assert not registry.has("echo")


def test_a_definition_without_an_output_member_is_refused_as_undeclared() -> None:
    """The registry reads a definition by its members: one that has no ``output`` at all declares no output."""
    full = echo_tool()
    duck = SimpleNamespace(**{field.name: getattr(full, field.name) for field in fields(full)})
    del duck.output
    registry = Registry()
    with pytest.raises(TypeError) as raised:
        registry.register(duck)  # type: ignore[arg-type]
    assert str(raised.value) == 'tool "echo" must declare output { schema, render, presentationMeta? }'
    assert not registry.has("echo")
