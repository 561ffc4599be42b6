"""Hostile inputs are contained: each becomes a typed failure result, never an exception out of execute."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import call, echo_tool, plain, raw_tool
from toolcontract import Accept, Block, Output, Registry, ToolExecution, ToolFailure, ToolSuccess
from toolcontract.result import ErrorInfo, ToolError


class Explosive:
    """Every protocol method raises."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__")

    def __hash__(self) -> int:
        raise RuntimeError("__hash__")

    def __iter__(self) -> Any:
        raise RuntimeError("__iter__")

    def __len__(self) -> int:
        raise RuntimeError("__len__")

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("__getattr__")

    def __str__(self) -> str:
        raise RuntimeError("__str__")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__")


class LyingDict(dict):  # type: ignore[type-arg]
    """Claims to hold one thing while holding another."""

    def items(self) -> Any:
        return [("a", 1)]

    def keys(self) -> Any:
        return ["a"]

    def __iter__(self) -> Any:
        return iter(["a"])

    def __len__(self) -> int:
        return 1


class LyingList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        raise RuntimeError("iterated")

    def __len__(self) -> int:
        return 0


class ClassLiar:
    """Claims to be a dict through ``__class__`` (``isinstance`` believes it; ``type()`` does not)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return dict


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    @property
    def args(self) -> Any:  # type: ignore[override]
        raise RuntimeError("no args")


# factories: pytest itself must not touch the hostile objects while collecting
HOSTILE_VALUES = [
    lambda: Explosive(),
    lambda: LyingDict({"a": float("nan")}),
    lambda: LyingList([1]),
    lambda: {"k": Explosive()},
    lambda: [Explosive()],
    lambda: {"ok": [1, {"deep": Explosive()}]},
    lambda: ClassLiar(),
]
HOSTILE_IDS = [
    "explosive",
    "lying-dict",
    "lying-list",
    "explosive-value",
    "explosive-item",
    "deep",
    "class-liar",
]


@pytest.mark.parametrize("hostile", HOSTILE_VALUES, ids=HOSTILE_IDS)
def test_hostile_body_values(hostile: Any) -> None:
    """digest 3.5: only exact dict/list types are read, so no user code (getters, lying subclasses) runs."""
    registry = Registry()
    registry.register(raw_tool("t", lambda args, run: hostile()))
    result = call(registry, "t")
    assert isinstance(result, ToolFailure)
    assert result.error.message == 'tool "t" returned invalid output: value is not lossless JSON'


@pytest.mark.parametrize("hostile", HOSTILE_VALUES, ids=HOSTILE_IDS)
def test_hostile_arguments(hostile: Any) -> None:
    registry = Registry()
    registry.register(echo_tool())
    result = call(registry, "echo", {"x": hostile()})
    assert result.error == ToolError("tool execution arguments must be losslessly JSON-serializable")  # type: ignore[union-attr]


def test_hostile_exception_is_contained() -> None:
    """digest 5.5: a thrown value whose inspection raises gives ``<unprintable thrown value>``."""

    def body(args: Any, run: ToolExecution) -> Any:
        raise Unprintable()

    registry = Registry()
    registry.register(raw_tool("t", body))
    result = call(registry, "t")
    assert result.error == ToolError("<unprintable thrown value>")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "render_output",
    [lambda: Explosive(), lambda: [Explosive()], lambda: LyingList(), lambda: [{"text": float("inf")}]],
    ids=["object", "list", "lying-list", "infinity"],
)
def test_renderers_returning_non_json(render_output: Any) -> None:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, output=Output({}, lambda a, v: render_output())))
    result = call(registry, "t")
    assert result.error.message == 'tool "t" returned invalid output: output.render returned non-lossless JSON'  # type: ignore[union-attr]


def test_renderer_raising_a_hostile_exception() -> None:
    def render(args: Any, value: Any) -> Any:
        raise Unprintable()

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, output=Output({}, render)))
    result = call(registry, "t")
    assert result.error.message == (  # type: ignore[union-attr]
        'tool "t" returned invalid output: output.render failed: <unprintable thrown value>'
    )


def test_renderer_mutating_its_input_is_refused() -> None:
    """Renderers receive frozen data: a renderer that tries to mutate fails as a render failure."""

    def render(args: Any, value: Any) -> Any:
        value.append(1)
        return []

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: [0], output=Output({}, render)))
    result = call(registry, "t")
    assert result.error.message == (  # type: ignore[union-attr]
        'tool "t" returned invalid output: output.render failed: FrozenList is frozen and cannot be modified'
    )


NOT_JSON = "tool result must be losslessly JSON-serializable"


@pytest.mark.parametrize(
    ("returned", "message", "info"),
    [
        (lambda: Explosive(), "tools/execute returned Explosive, not a tool result", None),
        (
            lambda: ToolSuccess(Explosive(), []),
            'tool "t" returned invalid output: value is not lossless JSON',
            ErrorInfo("ToolOutputError", "INVALID_TOOL_OUTPUT"),
        ),
        (lambda: ToolFailure(ToolError("x"), [Explosive()]), NOT_JSON, None),
        (lambda: ToolFailure("not an error", []), NOT_JSON, None),  # type: ignore[arg-type]
        (lambda: ToolFailure(ToolError(Explosive()), []), NOT_JSON, None),  # type: ignore[arg-type]
    ],
    ids=["object", "success-bad-value", "failure-bad-content", "failure-bad-error", "failure-bad-message"],
)
def test_wrappers_returning_foreign_or_broken_results(returned: Any, message: str, info: ErrorInfo | None) -> None:
    """digest 7.3 / 7.4 / 5.3: a foreign success is re-normalized, a foreign failure is materialized; either
    failing is a typed failure with the boundary's exact message."""
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_execute(lambda run, nxt: returned())
    result = call(registry, "t")
    assert isinstance(result, ToolFailure)
    assert result.error == ToolError(message, info)
    assert plain(result.content) == [{"type": "text", "text": "Error: " + message}]


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (lambda: Accept(content=[Explosive()]), NOT_JSON),
        (lambda: Accept(value=Explosive()), 'tool "t" returned invalid output: value is not lossless JSON'),
        (lambda: Block(Explosive()), "tools/post-execute block feedback must be a list of content blocks"),
        (lambda: Block([Explosive()]), NOT_JSON),
    ],
    ids=["content", "value", "block-object", "block-list"],
)
def test_hostile_post_decisions(decision: Any, message: str) -> None:
    """digest 6.8 / 6.9: each becomes a failure with the message of the step that refused it."""
    made = decision()
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_post_execute(lambda run, result, nxt: made)
    result = call(registry, "t")
    assert isinstance(result, ToolFailure)
    assert result.error.message == message


def test_a_post_decision_of_no_known_kind_is_a_plain_accept() -> None:
    """digest 6.8 step 1 ("any other kind falls through to accept"): even a hostile object."""
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_post_execute(lambda run, result, nxt: Explosive())
    result = call(registry, "t")
    assert isinstance(result, ToolSuccess) and result.value == 1


def test_hostile_hook_objects() -> None:
    """Hooks that are not callable or return awaitables that raise are contained."""

    async def failing_guard(run: ToolExecution) -> Any:
        raise RuntimeError("async guard")

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.add_guard(failing_guard)
    result = call(registry, "t")
    assert result.error == ToolError("async guard")  # type: ignore[union-attr]


def test_finalizer_returning_hostile_content() -> None:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, finalize_content=lambda run, result: Explosive()))
    result = call(registry, "t")
    assert result.error == ToolError("tool result must be losslessly JSON-serializable")  # type: ignore[union-attr]
