"""The tool registry: registration checks and the execution pipeline of the canonical output contract.

A call flows one way: arguments snapshot → pre-execute → guards → around wrappers → body → value
normalization → post-execute → finish (materialize, ``finalize_content``) → result observers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from types import CoroutineType, GeneratorType
from typing import Any, Final, TypeAlias

from toolcanon._fused import FusedNormalization, OutputRejected
from toolcanon.content import error_content, text_of_block
from toolcanon.decisions import (
    Accept,
    Allow,
    ApprovalRequest,
    Ask,
    Block,
    Deny,
    PostExecuteDecision,
    PreExecuteDecision,
    as_post_execute_decision,
    as_pre_execute_decision,
)
from toolcanon.definition import Output, ToolDefinition, is_positive_finite
from toolcanon.errors import (
    ABORTED,
    ABORTED_BEFORE_DISPATCH,
    DuplicateToolError,
    ReservedToolNameError,
    ToolNotFoundError,
    ToolOutputError,
    error_message,
    is_interrupt,
)
from toolcanon.execution import Call, ToolExecution
from toolcanon.frozen import FrozenList
from toolcanon.jsonvalue import (
    JsonValue,
    NotLosslessJson,
    canonical_json,
    is_lossless_json,
    plain_str,
    snapshot_json,
    thaw,
)
from toolcanon.renderers._ecma import js_string
from toolcanon.result import (
    ABSENT,
    DispatchToken,
    ToolError,
    ToolFailure,
    ToolResult,
    ToolSuccess,
    aborted_result,
    failure_fields,
    plain_error,
    success_fields,
    tool_error_result,
)
from toolcanon.schema import Validator, compile_validator, supported_copy
from toolcanon.signal import AbortSignal, _noop, fuse_signals

__all__ = [
    "Disposer",
    "ExecuteWrapper",
    "Guard",
    "PostExecuteListener",
    "PreExecuteListener",
    "Registry",
    "ResultObserver",
    "is_awaitable",
    "settle",
]

logger = logging.getLogger("toolcanon")

Disposer: TypeAlias = Callable[[], None]
PreExecuteListener: TypeAlias = Callable[[ToolExecution, Callable[[], Awaitable[PreExecuteDecision]]], Any]
"""``(run, next) -> decision``: call ``await next()`` to delegate inward; return without it to veto."""
Guard: TypeAlias = Callable[[ToolExecution], Any]
"""``(run) -> reason | None``: the first guard returning a reason denies the call."""
ExecuteWrapper: TypeAlias = Callable[[ToolExecution, Callable[[], Awaitable[ToolResult]]], Any]
"""``(run, next) -> result``: an around wrapper; may replace ``run.signal`` around ``next()``."""
PostExecuteListener: TypeAlias = Callable[
    [ToolExecution, ToolResult, Callable[[], Awaitable[PostExecuteDecision]]], Any
]
"""``(run, result, next) -> decision``: accept (optionally replacing content or value) or block."""
ResultObserver: TypeAlias = Callable[[ToolExecution, ToolResult], Any]
"""``(run, result) -> None``: sees every final result; its failures are logged and contained."""
ApprovalHook: TypeAlias = Callable[[ApprovalRequest], Any]
"""``(request) -> "allowed-once" | "rejected" | "cancelled" | "unavailable"``."""

RESERVED_NAME: Final = "run_code"
_ARGUMENTS_NOT_LOSSLESS: Final = "tool execution arguments must be losslessly JSON-serializable"
_RESULT_NOT_LOSSLESS: Final = "tool result must be losslessly JSON-serializable"
_ALLOW: Final = Allow()
_ACCEPT: Final = Accept()
# read through type's own descriptors: a metaclass may define these names itself
_CLASS_NAME: Final[Any] = type.__dict__["__name__"].__get__
_CLASS_MRO: Final[Any] = type.__dict__["__mro__"].__get__
_CLASS_DICT: Final[Any] = type.__dict__["__dict__"].__get__
_CALL_FIELDS: Final = tuple(
    Call.__dict__[name].__get__ for name in ("call_id", "name", "root_call_id", "parent", "signal", "agent")
)
_SUCCESS_SLOTS: Final = tuple(
    ToolSuccess.__dict__[name].__set__ for name in ("value", "content", "meta", "additional_contexts", "concludes_turn")
)
_new_object: Final = object.__new__


def _success(value: Any, content: Any, meta: Any, concludes_turn: bool) -> ToolSuccess:
    """``ToolSuccess(value, content, meta, ABSENT, concludes_turn)``, its slots set directly.

    The same object the frozen dataclass's ``__init__`` builds (one ``object.__setattr__`` call per field), at
    about half its cost: on a trivial call that is a twentieth of the whole.
    """
    result: ToolSuccess = _new_object(ToolSuccess)
    set_value, set_content, set_meta, set_contexts, set_concludes = _SUCCESS_SLOTS
    set_value(result, value)
    set_content(result, content)
    set_meta(result, meta)
    set_contexts(result, ABSENT)
    set_concludes(result, concludes_turn)
    return result


@dataclass(frozen=True, slots=True)
class _RegisteredTool:
    # the definition's members, read once at registration: the pipeline never reads the definition again
    name: str
    definition: ToolDefinition
    execute: Callable[..., Any]
    finalize_content: Any
    output: Output
    validator: Validator
    # the fused snapshot+validate+freeze walk for this schema, generated once it pays off
    normalization: FusedNormalization


class _CallState:
    """Per-call bookkeeping the pipeline needs beyond the execution object.

    ``owned`` holds the result objects built for this call's token (digest 7.1): only those are trusted as is.
    ``sealed`` holds results whose every part is already a frozen snapshot, so finishing them copies nothing.
    Membership is an identity test (``in`` would ask a foreign object's ``__eq__`` whether it is ours); the
    object asked about is nearly always the last one added, so that one is compared first. Both live only as
    long as the call, and only the registry can reach them.
    """

    __slots__ = ("body_invoked", "caller_signal", "denial", "finalizer", "owned", "sealed")

    def __init__(self, finalizer: Any, caller_signal: Any) -> None:
        self.finalizer = finalizer
        self.caller_signal = caller_signal
        self.body_invoked = False
        # the error of this call's denial, whose message may be any JSON value (only the registry makes one)
        self.denial: ToolError | None = None
        self.owned: list[ToolResult] = []
        self.sealed: list[ToolResult] = []

    def owns(self, result: object) -> bool:
        return _holds(self.owned, result)

    def is_sealed(self, result: object) -> bool:
        return _holds(self.sealed, result)

    @property
    def caller_cancelled(self) -> bool:
        signal = self.caller_signal
        return signal is not None and signal.aborted


def _holds(results: list[ToolResult], result: object) -> bool:
    """Whether ``result`` is one of ``results`` (by identity, the last one first)."""
    if results and results[-1] is result:
        return True
    for held in results:  # noqa: SIM110 - a plain loop: any() over a generator costs more here
        if held is result:
            return True
    return False


async def _waterfall(
    hooks: list[Any], invoke: Callable[[Any, Callable[[], Awaitable[Any]]], Any], innermost: Callable[[], Any]
) -> Any:
    """Compose hooks outermost first: each gets a ``next`` that runs the ones inside it, and ``innermost`` last.

    A hook that returns without calling ``next`` vetoes everything inside it (digest 6.3). The list is copied,
    so a hook that registers or disposes hooks affects later calls only.
    """
    chain = list(hooks)

    async def step(index: int) -> Any:
        if index == len(chain):
            return await settle(innermost())
        return await settle(invoke(chain[index], lambda: step(index + 1)))

    return await step(0)


def is_awaitable(produced: object) -> bool:
    """Whether a hook's or body's return value is to be awaited, decided from its type alone.

    The value is foreign: ``inspect.isawaitable`` asks the object itself (its ``__class__``), whose code may
    raise or lie. Here only the type's own method table is read; a type whose inspection raises is not awaitable.
    """
    kind = type(produced)
    if kind is CoroutineType:
        return True
    if kind is dict or kind is str or kind is list or produced is None or kind is int or kind is bool:
        return False
    if kind is GeneratorType:  # a generator-based coroutine (types.coroutine)
        return bool(produced.gi_code.co_flags & inspect.CO_ITERABLE_COROUTINE)  # type: ignore[attr-defined]
    try:
        return any("__await__" in _CLASS_DICT(base) for base in _CLASS_MRO(kind))
    except BaseException:  # a class dict with a hostile key: not something to await
        return False


async def settle(produced: Any) -> Any:
    """Await ``produced`` when it is awaitable (hooks and bodies may be plain or ``async``)."""
    if is_awaitable(produced):
        return await produced
    return produced


def _class_name(kind: type) -> str:
    name: str = _CLASS_NAME(kind)
    return name


def _call_identity(call: Call) -> tuple[str, str, str, Any, AbortSignal | None, Any]:
    """``(call_id, name, root_call_id, parent, signal, agent)``, each read once; a malformed call is a TypeError.

    The call is the caller's own typed input: a ``Call`` (a subclass is read through its fields), string ids
    (string subclasses copied to ``str``), and an :class:`AbortSignal` or ``None``.
    """
    if type(call) is Call:
        raw_id, raw_name, raw_root = call.call_id, call.name, call.root_call_id
        parent, signal, agent = call.parent, call.signal, call.agent
    elif issubclass(type(call), Call):
        raw_id, raw_name, raw_root, parent, signal, agent = (field(call) for field in _CALL_FIELDS)
    else:
        raise TypeError(f"Registry.execute takes a Call, not {_class_name(type(call))}")
    call_id, name = plain_str(raw_id), plain_str(raw_name)
    root_call_id = call_id if raw_root is None else plain_str(raw_root)
    if call_id is None or name is None or root_call_id is None:
        raise TypeError("a call's call_id, name and root_call_id must be strings")
    if signal is not None and type(signal) is not AbortSignal:
        raise TypeError("a call's signal must be an AbortSignal or None")
    return call_id, name, root_call_id, parent, signal, agent


def _output_declaration(output: object) -> Output | None:
    """The declaration as an :class:`Output`, or ``None`` when it is not one (digest 1.4)."""
    if isinstance(output, Output):
        declared = output
    elif isinstance(output, Mapping):
        projector = output.get("presentation_meta", output.get("presentationMeta"))
        declared = Output(output.get("schema"), output.get("render"), projector)  # type: ignore[arg-type]
    else:
        return None
    if not callable(declared.render):
        return None
    if declared.presentation_meta is not None and not callable(declared.presentation_meta):
        return None
    return declared


def _context_items(contexts: Any) -> Iterable[Any]:
    """The contexts of one side of a concatenation, iterated without running any of their code."""
    if contexts is ABSENT:
        return ()
    kind = type(contexts)
    if kind is list or kind is FrozenList or kind is tuple:
        items: Iterable[Any] = contexts
        return items
    if issubclass(kind, list):
        return list.__iter__(contexts)  # the stored items, whatever the subclass says (it fails at materialization)
    raise TypeError("additional contexts must be a list")


def _concat_contexts(first: Any, second: Any) -> Any:
    if first is ABSENT and second is ABSENT:
        return ABSENT
    return [*_context_items(first), *_context_items(second)]


def _no_contexts(contexts: Any) -> bool:
    """True for an empty list of contexts (a block, an accept and a cancellation set only a non-empty list)."""
    kind = type(contexts)
    if kind is list or kind is FrozenList or kind is tuple:
        return not contexts
    return issubclass(kind, list) and list.__len__(contexts) == 0


def _blocked_message(feedback: FrozenList) -> str:
    """The message derived from (snapshot) block feedback: each block's text or ``[<type> content]``."""
    derived = "\n".join(text_of_block(block) for block in feedback)
    return derived or "tool result blocked by post-execute policy"


def _blocked(decision: Block) -> ToolFailure:
    """The failure a block decision makes: its feedback verbatim and the message derived from it (digest 6.8).

    The feedback is snapshot before its blocks are read, so deriving the message runs none of its code; feedback
    that is not lossless JSON fails as the final materialization would, feedback that is no list or holds a
    ``None`` block as reading its blocks' types would.
    """
    raw = decision.feedback
    try:
        feedback = snapshot_json(raw)
    except NotLosslessJson:
        if issubclass(type(raw), list):
            raise TypeError(_RESULT_NOT_LOSSLESS) from None
        feedback = None
    # The original reads each block's type, so a null block fails as a feedback that is no list does (R-POST-7).
    if type(feedback) is not FrozenList or any(block is None for block in feedback):
        raise TypeError("tools/post-execute block feedback must be a list of content blocks")
    message = _blocked_message(feedback)
    contexts = decision.additional_contexts
    if contexts is not ABSENT and _no_contexts(contexts):
        contexts = ABSENT
    return ToolFailure(ToolError(message), feedback, ABSENT, contexts)


class _Final:
    """A result that skips post-execute (a *final-result*); plain results are *post-results*."""

    __slots__ = ("result",)

    def __init__(self, result: ToolResult) -> None:
        self.result = result


class Registry:
    """A tool registry implementing the canonical tool output contract.

    ``approval`` resolves ``Ask`` decisions; without it they are denied.
    """

    def __init__(self, *, approval: ApprovalHook | None = None) -> None:
        self._tools: dict[str, _RegisteredTool] = {}
        self._approval = approval
        self._pre_execute: list[PreExecuteListener] = []
        self._guards: list[Guard] = []
        self._wrappers: list[ExecuteWrapper] = []
        self._post_execute: list[PostExecuteListener] = []
        self._observers: list[ResultObserver] = []
        self._change_listeners: list[Callable[[str], Any]] = []
        self._pending_observers: set[asyncio.Future[Any]] = set()

    # --- registration ---------------------------------------------------------------------------

    def register(self, definition: ToolDefinition) -> Disposer:
        """Register a tool (checks of digest 1.4-1.8, in order); returns the disposer that unregisters it.

        The definition's members are read once, here: a name that is not a string is a ``TypeError``.
        """
        raw_name = definition.name
        name = plain_str(raw_name)
        if name is None:
            raise TypeError(f"a tool name must be a string, not {_class_name(type(raw_name))}")
        output = _output_declaration(getattr(definition, "output", None))
        if output is None:
            raise TypeError(f'tool "{name}" must declare output {{ schema, render, presentationMeta? }}')
        schema = supported_copy(output.schema)
        timeout_ms = getattr(definition, "timeout_ms", None)
        if timeout_ms is not None and not is_positive_finite(timeout_ms):
            raise TypeError(f'tool "{name}" timeoutMs must be a positive finite number')
        if name == RESERVED_NAME:
            raise ReservedToolNameError(
                f'tool name "{RESERVED_NAME}" is reserved for the Code Mode presentation transport '
                "and cannot be registered or shadowed"
            )
        if name in self._tools:
            raise DuplicateToolError(
                f'tool "{name}" is already registered (for a per-agent variant, register through that '
                "agent's `agent.ctx` instead)"
            )
        entry = _RegisteredTool(
            name,
            definition,
            definition.execute,
            definition.finalize_content,
            Output(schema, output.render, output.presentation_meta),
            compile_validator(schema),
            FusedNormalization(schema),
        )
        self._tools[name] = entry
        try:
            self._notify_change(name)
        except BaseException:
            self._tools.pop(name, None)
            # Undoing the registration is a change too, told as a disposal is; a listener raising then raises
            # that error instead, as the original's rollback does.
            self._notify_change(name)
            raise

        def dispose() -> None:
            if self._tools.get(name) is entry:
                del self._tools[name]
                self._notify_change(name)

        return dispose

    def _notify_change(self, name: str) -> None:
        # As the original emits tools/change: in order, and the first listener to raise stops the others.
        for listener in list(self._change_listeners):
            listener(name)

    def on_change(self, listener: Callable[[str], Any]) -> Disposer:
        """Call ``listener(name)`` on every registration and removal (a disposal, or a registration rolled back
        because a listener raised), in order; the first listener to raise stops the others and its error
        propagates: from ``register``, after rolling the registration back; from a disposer, after the removal."""
        return self._add(self._change_listeners, listener, prepend=False)

    def has(self, name: str) -> bool:
        """True when a tool of that name is registered."""
        return name in self._tools

    def definition(self, name: str) -> ToolDefinition | None:
        """The registered definition of that name, if any."""
        entry = self._tools.get(name)
        return entry.definition if entry else None

    def schemas(self) -> list[dict[str, Any]]:
        """``{name, description, parameters}`` of every tool; fresh lossless copies (digest 12.4)."""
        projected = []
        for name, entry in self._tools.items():
            try:
                parameters = thaw(snapshot_json(entry.definition.parameters))
            except NotLosslessJson:
                raise ValueError(f'tool "{name}" parameters must be lossless JSON before schema projection') from None
            projected.append({"name": name, "description": entry.definition.description, "parameters": parameters})
        return projected

    def execution_mode(self, name: str, arguments: JsonValue) -> str:
        """``"parallel"`` only when the tool's ``is_concurrency_safe(arguments)`` is exactly ``True``."""
        entry = self._tools.get(name)
        check = entry.definition.is_concurrency_safe if entry else None
        if check is None:
            return "exclusive"
        try:
            return "parallel" if check(arguments) is True else "exclusive"
        except BaseException as thrown:
            if is_interrupt(thrown):
                raise
            return "exclusive"

    # --- hooks ---------------------------------------------------------------------------------------

    @staticmethod
    def _add(hooks: list[Any], hook: Any, *, prepend: bool) -> Disposer:
        if prepend:
            hooks.insert(0, hook)
        else:
            hooks.append(hook)

        def dispose() -> None:
            # by identity: ``in`` and ``remove`` would ask the hooks' __eq__, and a hostile one answers yes
            for index, registered in enumerate(hooks):
                if registered is hook:
                    del hooks[index]
                    return

        return dispose

    def on_pre_execute(self, listener: PreExecuteListener, *, prepend: bool = False) -> Disposer:
        """Add a pre-execute listener (outermost first in registration order; ``prepend`` makes it outermost)."""
        return self._add(self._pre_execute, listener, prepend=prepend)

    def add_guard(self, guard: Guard) -> Disposer:
        """Add a guard; guards run in registration order and only after an ``Allow``."""
        return self._add(self._guards, guard, prepend=False)

    def on_execute(self, wrapper: ExecuteWrapper, *, prepend: bool = False) -> Disposer:
        """Add an around wrapper of the body stage."""
        return self._add(self._wrappers, wrapper, prepend=prepend)

    def on_post_execute(self, listener: PostExecuteListener, *, prepend: bool = False) -> Disposer:
        """Add a post-execute listener."""
        return self._add(self._post_execute, listener, prepend=prepend)

    def on_result(self, observer: ResultObserver) -> Disposer:
        """Add a result observer; it sees the same frozen result ``execute`` returns."""
        return self._add(self._observers, observer, prepend=False)

    # --- the pipeline ----------------------------------------------------------------------------

    async def execute(self, call: Call) -> ToolResult:
        """Run one call through the whole pipeline; never raises for anything a tool or hook does.

        What a tool or hook raises becomes a failure, except what stops the process or this task
        (:func:`~toolcanon.errors.is_interrupt`), which propagates. A malformed ``call`` (the caller's own
        input) is a ``TypeError``.
        """
        if type(call) is Call:  # the common case, checked inline: the checked fields read directly
            call_id, name, root, caller_signal = call.call_id, call.name, call.root_call_id, call.signal
            parent, agent = call.parent, call.agent
            if (
                type(call_id) is not str
                or type(name) is not str
                or (root is not None and type(root) is not str)
                or (caller_signal is not None and type(caller_signal) is not AbortSignal)
            ):
                call_id, name, root, parent, caller_signal, agent = _call_identity(call)
            root_call_id = call_id if root is None else root
        else:
            call_id, name, root_call_id, parent, caller_signal, agent = _call_identity(call)
        token = DispatchToken()
        run = ToolExecution(token, call_id, root_call_id, name, agent, parent, caller_signal)
        visible = self._tools.get(name)
        # captured before the argument snapshot, so even an argument failure is finalized (digest 12.2)
        finalizer = visible.finalize_content if visible else None
        outcome: ToolResult | _Final
        try:
            run._arguments = snapshot_json(call.arguments)
        except NotLosslessJson:
            state = _CallState(finalizer, caller_signal)
            outcome = _Final(tool_error_result(TypeError(_ARGUMENTS_NOT_LOSSLESS)))
        else:
            if caller_signal is not None and caller_signal._aborted:  # state.caller_cancelled
                state = _CallState(finalizer, caller_signal)
                outcome = _Final(aborted_result(ABORTED_BEFORE_DISPATCH))
            elif self._pre_execute or self._guards or self._wrappers:
                state = _CallState(finalizer, caller_signal)
                outcome = await self._dispatch(run, state)
            else:
                # The plain path: _dispatch with no pre-execute listener, guard or wrapper (an Allow, then the body
                # stage), and the body stage, run in this frame, step for step; the call's state is made only when
                # a later stage needs it. Their two coroutines cost a fifth of a trivial call.
                # reference/tests/test_plain_dispatch.py holds this path to the hooked one's results.
                built: ToolSuccess | None = None
                made: _CallState | None = None
                body_invoked = False
                try:
                    if caller_signal is None:
                        fused, unlink = AbortSignal(), _noop
                    else:
                        fused, unlink = fuse_signals(caller_signal, caller_signal)
                    try:
                        if fused._aborted:
                            dispatched: ToolResult = aborted_result(ABORTED_BEFORE_DISPATCH)
                        else:
                            run._signal = fused
                            try:
                                entry = self._tools.get(name)
                                if entry is None:
                                    raise ToolNotFoundError(name)
                                body_invoked = True
                                produced = entry.execute(run._arguments, run)
                                kind = type(produced)
                                if kind is CoroutineType or (
                                    kind is not dict and kind is not str and is_awaitable(produced)
                                ):
                                    produced = await produced
                                # _create_success, inline
                                try:
                                    value = entry.normalization.normalize(produced)
                                except OutputRejected as rejected:
                                    raise ToolOutputError(name, rejected.violations) from None
                                output = entry.output
                                arguments = run._arguments
                                try:
                                    rendered = output.render(arguments, value)
                                except BaseException as thrown:
                                    if is_interrupt(thrown):
                                        raise
                                    failed = f"output.render failed: {error_message(thrown)}"
                                    raise ToolOutputError(name, [failed]) from None
                                try:
                                    content = snapshot_json(rendered)
                                except NotLosslessJson:
                                    raise ToolOutputError(name, ["output.render returned non-lossless JSON"]) from None
                                meta: Any = ABSENT
                                if parent is None and output.presentation_meta is not None:
                                    meta = self._project(
                                        name, "presentationMeta", output.presentation_meta, arguments, value
                                    )
                                dispatched = built = _success(value, content, meta, run._concluded)
                                if fused._aborted:
                                    dispatched = aborted_result(ABORTED)
                            except BaseException as thrown:
                                if is_interrupt(thrown):
                                    raise
                                dispatched = tool_error_result(thrown)
                            finally:
                                run._signal = caller_signal
                    finally:
                        unlink()
                    if (
                        built is not None
                        and dispatched is built
                        and not run._deferred
                        and (caller_signal is None or not caller_signal._aborted)
                        and not self._post_execute
                        and finalizer is None
                    ):
                        # the success just built, already frozen: post-execute and finishing leave it as it is
                        run._finished = True
                        if self._observers:
                            self._notify(run, built)
                        return built
                    state = made = _CallState(finalizer, caller_signal)
                    state.body_invoked = body_invoked
                    if built is not None:
                        state.owned.append(built)
                        state.sealed.append(built)
                    dispatched = self._normalize_dispatch_result(run, state, dispatched)
                    deferred = run._deferred
                    if deferred:
                        contexts = _concat_contexts(list(deferred), dispatched.additional_contexts)
                        dispatched = self._bound_copy(state, dispatched, additional_contexts=contexts)
                    if state.caller_cancelled and not dispatched.is_error:
                        outcome = self._cancellation(state, dispatched)
                    else:
                        outcome = dispatched
                except BaseException as thrown:
                    if is_interrupt(thrown):
                        raise
                    if made is None:
                        made = _CallState(finalizer, caller_signal)
                        made.body_invoked = body_invoked
                    state = made
                    outcome = _Final(tool_error_result(thrown))
        # the stages with nothing to await run as plain calls: a coroutine each would cost a tenth of a trivial call
        if isinstance(outcome, _Final):
            candidate = outcome.result
        elif self._post_execute:
            candidate = await self._post(run, state, outcome)
        else:
            candidate = self._post_without_hooks(state, outcome)
        if state.finalizer is None:
            result = self._finish_plain(state, candidate)
        else:
            result = await self._finish(run, state, candidate)
        run._finished = True
        if self._observers:
            self._notify(run, result)
        return result

    async def _dispatch(self, run: ToolExecution, state: _CallState) -> ToolResult | _Final:
        try:
            decision = (
                await _waterfall(self._pre_execute, lambda listener, nxt: listener(run, nxt), lambda: _ALLOW)
                if self._pre_execute
                else _ALLOW
            )
            kind = type(decision)
            chosen = decision if kind is Allow or kind is Deny or kind is Ask else as_pre_execute_decision(decision)
            if chosen is None:
                raise TypeError(f"tools/pre-execute returned {_class_name(type(decision))}, not a decision")
            approval_cancelled = False
            if type(chosen) is Ask:
                chosen, approval_cancelled = await self._resolve_ask(run, state, chosen)
            if approval_cancelled and state.caller_cancelled:
                return aborted_result(ABORTED_BEFORE_DISPATCH)
            if type(chosen) is Deny:
                return self._denial(state, chosen.reason)
            denial = await self._guard_denial(run) if self._guards else None
            if denial is not None:
                return self._denial(state, denial)
            if state.caller_cancelled:
                return aborted_result(ABORTED_BEFORE_DISPATCH)
        except BaseException as thrown:
            if is_interrupt(thrown):
                raise
            return _Final(tool_error_result(thrown))
        try:
            if self._wrappers:
                result = await _waterfall(
                    self._wrappers, lambda wrapper, nxt: wrapper(run, nxt), lambda: self._body_stage(run, state)
                )
            else:
                result = await self._body_stage(run, state)
            result = self._normalize_dispatch_result(run, state, result)
            deferred = run._deferred
            if deferred:
                contexts = _concat_contexts(list(deferred), result.additional_contexts)
                result = self._bound_copy(state, result, additional_contexts=contexts)
            if state.caller_cancelled and not result.is_error:
                return self._cancellation(state, result)
            return result
        except BaseException as thrown:
            if is_interrupt(thrown):
                raise
            return _Final(tool_error_result(thrown))

    async def _resolve_ask(self, run: ToolExecution, state: _CallState, ask: Ask) -> tuple[PreExecuteDecision, bool]:
        name = run.name
        if self._approval is None:
            reason = ask.reason if ask.reason is not None else f'tool "{name}" requires approval (not yet supported)'
            return Deny(reason), False
        if run.agent is None:
            return Deny(f'tool "{name}" requires approval, but the call has no agent to route it through'), False
        request = ApprovalRequest(run.agent, name, run.call_id, ask.reason, state.caller_signal)
        answered = await settle(self._approval(request))
        outcome = plain_str(answered)  # compared as exact strings: a foreign object's __eq__ never decides
        if outcome == "allowed-once":
            return Allow(), False
        if outcome == "rejected":
            return Deny(f'the user rejected tool "{name}"'), False
        if outcome == "cancelled":
            return Deny(f'approval for tool "{name}" was cancelled'), True
        if outcome == "unavailable":
            return Deny(f'tool "{name}" requires approval, but no approval channel is available'), False
        # JSON.stringify's text, or the value's text when it has none (as the contract's String() fallback)
        shown = canonical_json(answered) if is_lossless_json(answered) else error_message(answered)
        raise ValueError(f"unreachable variant in ApprovalOutcome: {shown}")

    async def _guard_denial(self, run: ToolExecution) -> object:
        for guard in list(self._guards):
            reason = await settle(guard(run))
            if reason is not None:
                return reason
        return None

    def _denial(self, state: _CallState, reason: object) -> ToolResult:
        """The failure of a denial: the reason is its message, ``Error: <String(reason)>`` its content (R-PRE-3).

        A reason that is not a string keeps its JSON value as the message; one that is not lossless JSON fails
        as its materialization does (``TypeError``, a final failure), and its own code never runs.
        """
        text = plain_str(reason)
        if text is not None:
            return self._materialize(state, ToolFailure(ToolError(text), error_content(text)))
        try:
            message = snapshot_json(reason)
        except NotLosslessJson:
            raise TypeError(_RESULT_NOT_LOSSLESS) from None
        error = ToolError(message)
        state.denial = error
        return self._materialize(state, ToolFailure(error, error_content(js_string(message))))

    async def _body_stage(self, run: ToolExecution, state: _CallState) -> ToolResult:
        wrapper_signal = run.signal
        fused, unlink = fuse_signals(state.caller_signal, wrapper_signal)
        try:
            if fused.aborted:
                return aborted_result(ABORTED_BEFORE_DISPATCH)
            run._signal = fused
            try:
                entry = self._resolve(run.name)
                state.body_invoked = True
                produced = entry.execute(run._arguments, run)
                kind = type(produced)
                if kind is CoroutineType or (kind is not dict and kind is not str and is_awaitable(produced)):
                    produced = await produced
                result = self._create_success(run, state, entry, produced)
                if fused.aborted:
                    return aborted_result(ABORTED)
                return result
            except BaseException as thrown:
                if is_interrupt(thrown):
                    raise
                return tool_error_result(thrown)
            finally:
                run._signal = wrapper_signal
        finally:
            unlink()

    def _resolve(self, name: str) -> _RegisteredTool:
        """The tool as registered now: a tool disposed during policy is gone (digest 2.7)."""
        entry = self._tools.get(name)
        if entry is None:
            raise ToolNotFoundError(name)
        return entry

    def _create_success(
        self, run: ToolExecution, state: _CallState, entry: _RegisteredTool, candidate: Any
    ) -> ToolSuccess:
        """Normalize a candidate value into a bound, frozen success (digest 4.1); raises ToolOutputError."""
        name = entry.name
        value = self._normalized_value(entry, candidate)
        arguments = run.arguments
        output = entry.output
        content = self._project(name, "render", output.render, arguments, value)
        meta: Any = ABSENT
        if run.parent is None and output.presentation_meta is not None:
            meta = self._project(name, "presentationMeta", output.presentation_meta, arguments, value)
        result = ToolSuccess(value, content, meta, ABSENT, run._concluded)
        state.owned.append(result)
        state.sealed.append(result)
        return result

    @staticmethod
    def _normalized_value(entry: _RegisteredTool, candidate: Any) -> Any:
        """Snapshot, validate and freeze a candidate value (digest 4.1 steps 1-3); raises ToolOutputError.

        The fused walk does all three at once for a valid value; for anything else the validator alone produces
        the contract's messages (see :meth:`FusedNormalization.normalize`).
        """
        try:
            return entry.normalization.normalize(candidate)
        except OutputRejected as rejected:
            raise ToolOutputError(entry.name, rejected.violations) from None

    @staticmethod
    def _project(name: str, projector: str, function: Callable[..., Any], arguments: Any, value: Any) -> Any:
        try:
            produced = function(arguments, value)
        except BaseException as thrown:
            if is_interrupt(thrown):
                raise
            raise ToolOutputError(name, [f"output.{projector} failed: {error_message(thrown)}"]) from None
        try:
            return snapshot_json(produced)
        except NotLosslessJson:
            raise ToolOutputError(name, [f"output.{projector} returned non-lossless JSON"]) from None

    def _normalize_dispatch_result(self, run: ToolExecution, state: _CallState, result: Any) -> ToolResult:
        """Trust only this call's own result object; copy foreign failures, re-normalize foreign successes.

        Trust is identity with an object this call built, and the kind of a result is its type (a subclass is
        foreign and is read through the result class's own fields): nothing the object says of itself decides.
        """
        kind = type(result)
        owned = state.owned
        if (kind is ToolSuccess or kind is ToolFailure) and ((owned and owned[-1] is result) or state.owns(result)):
            trusted: ToolResult = result
            return trusted
        if issubclass(kind, ToolFailure):
            copied = ToolFailure(*failure_fields(result))
            state.owned.append(copied)
            return copied
        if issubclass(kind, ToolSuccess):
            value, contexts = success_fields(result)
            entry = self._resolve(run.name)
            renormalized: ToolResult = self._create_success(run, state, entry, value)
            if contexts is not ABSENT:
                renormalized = self._bound_copy(state, renormalized, additional_contexts=contexts)
            return renormalized
        raise TypeError(f"tools/execute returned {_class_name(kind)}, not a tool result")

    @staticmethod
    def _bound_copy(state: _CallState, result: ToolResult, **changes: Any) -> ToolResult:
        """A copy of ``result`` with some fields replaced, built for (and so trusted by) this call."""
        copied = dataclasses.replace(result, **changes)
        state.owned.append(copied)
        return copied

    def _cancellation(self, state: _CallState, result: ToolResult) -> ToolFailure:
        """The cancellation failure replacing a success: its contexts kept, an empty list of them dropped."""
        code = ABORTED if state.body_invoked else ABORTED_BEFORE_DISPATCH
        contexts = result.additional_contexts
        return aborted_result(code, ABSENT if _no_contexts(contexts) else contexts)

    def _post_without_hooks(self, state: _CallState, result: ToolResult) -> ToolResult:
        """The post-execute stage when no listener is registered: only a cancellation replaces the result."""
        try:
            return self._cancellation(state, result) if state.caller_cancelled and not result.is_error else result
        except BaseException as thrown:
            if is_interrupt(thrown):
                raise
            return tool_error_result(thrown)

    async def _post(self, run: ToolExecution, state: _CallState, result: ToolResult) -> ToolResult:
        try:
            if not self._post_execute:
                return self._post_without_hooks(state, result)
            decision = await _waterfall(
                self._post_execute, lambda listener, nxt: listener(run, result, nxt), lambda: _ACCEPT
            )
            kind = type(decision)
            chosen = decision if kind is Accept or kind is Block else as_post_execute_decision(decision)
            updated: ToolResult
            if type(chosen) is Block:
                updated = _blocked(chosen)
            elif type(chosen) is Accept:
                replaces_content = chosen.content is not ABSENT
                replaces_value = chosen.value is not ABSENT
                if replaces_content and replaces_value:
                    raise TypeError("tools/post-execute accept decision cannot replace both value and content")
                contexts = _concat_contexts(result.additional_contexts, chosen.additional_contexts)
                # As in the original, an accept sets the contexts only when there are some: an empty concatenation
                # leaves a value replacement without them and any other accept with the result's own.
                adds_contexts = contexts is not ABSENT and not _no_contexts(contexts)
                if replaces_value:
                    if result.is_error:
                        raise TypeError("tools/post-execute cannot replace the value of a failed result")
                    entry = self._resolve(run.name)
                    updated = self._create_success(run, state, entry, chosen.value)
                    if adds_contexts:
                        updated = self._bound_copy(state, updated, additional_contexts=contexts)
                elif replaces_content or adds_contexts:
                    content = chosen.content if replaces_content else result.content
                    kept = contexts if adds_contexts else result.additional_contexts
                    updated = self._bound_copy(state, result, content=content, additional_contexts=kept)
                else:
                    updated = result
            else:
                updated = result  # an unknown decision (of no decision type) falls through to a plain accept
            if state.caller_cancelled and not updated.is_error:
                return self._cancellation(state, updated)
            return updated
        except BaseException as thrown:
            if is_interrupt(thrown):
                raise
            return tool_error_result(thrown)

    def _finish_plain(self, state: _CallState, candidate: ToolResult) -> ToolResult:
        """Finish without a finalizer: materialize, or materialize the error that materializing raised."""
        try:
            return self._materialize(state, candidate)
        except BaseException as thrown:
            if is_interrupt(thrown):
                raise
            return self._materialize(state, tool_error_result(thrown))

    async def _finish(self, run: ToolExecution, state: _CallState, candidate: ToolResult) -> ToolResult:
        """Materialize, then apply the captured ``finalize_content`` exactly once (digest 6.9, 12.2)."""
        result = self._finish_plain(state, candidate)
        finalizer = state.finalizer
        if finalizer is None:
            return result
        try:
            replacement = await settle(finalizer(run, result))
            if replacement is not None:
                result = self._materialize(state, dataclasses.replace(result, content=replacement))
        except BaseException as thrown:
            if is_interrupt(thrown):
                raise
            result = self._materialize(state, tool_error_result(thrown))
        return result

    def _materialize(self, state: _CallState, candidate: ToolResult) -> ToolResult:
        """The final, deep-frozen form of a result (digest 5.3); raises TypeError for non-JSON parts.

        Candidates are always of the exact result types (foreign ones were copied on entry); a failure's error
        becomes the registry's own :class:`ToolError` of a ``str`` message and an info of ``str`` fields, or the
        result is not materializable at all.
        """
        sealed = state.sealed
        if (sealed and sealed[-1] is candidate) or state.is_sealed(candidate):
            return candidate
        try:
            content = snapshot_json(candidate.content)
            meta = candidate.meta if candidate.meta is ABSENT else snapshot_json(candidate.meta)
            contexts = candidate.additional_contexts
            if contexts is not ABSENT:
                contexts = snapshot_json(contexts)
            if isinstance(candidate, ToolSuccess):  # the registry's own object: asking it is safe
                materialized: ToolResult = ToolSuccess(
                    candidate.value, content, meta, contexts, candidate.concludes_turn is True
                )
            else:
                error = candidate.error if candidate.error is state.denial else plain_error(candidate.error)
                if error is None:
                    raise TypeError(_RESULT_NOT_LOSSLESS)
                materialized = ToolFailure(error, content, meta, contexts)
        except NotLosslessJson:
            raise TypeError(_RESULT_NOT_LOSSLESS) from None
        state.sealed.append(materialized)
        return materialized

    def _notify(self, run: ToolExecution, result: ToolResult) -> None:
        for observer in list(self._observers):
            try:
                produced = observer(run, result)
                if is_awaitable(produced):
                    future = asyncio.ensure_future(produced)
                    self._pending_observers.add(future)
                    future.add_done_callback(lambda done, run=run: self._observer_settled(run, done))
            except BaseException as thrown:
                if is_interrupt(thrown):
                    raise
                self._observer_failed(run, thrown)

    def _observer_settled(self, run: ToolExecution, future: asyncio.Future[Any]) -> None:
        self._pending_observers.discard(future)
        if not future.cancelled() and future.exception() is not None:
            self._observer_failed(run, future.exception())

    @staticmethod
    def _observer_failed(run: ToolExecution, thrown: object) -> None:
        logger.warning('tool "%s" (%s): tools/result observer failed: %s', run.name, run.call_id, error_message(thrown))
