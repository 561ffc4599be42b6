"""Deliberately broken implementations of the contract, one bug each, that the kit must catch.

Each is the reference implementation (through its in-process adapter) with exactly one behaviour of the
registry replaced, while a scenario runs, by a plausible mistake. :data:`BUGS` pairs each with the contract
rule it violates, and, where a scenario written by one of the principles of ``CONTRIBUTING.md`` ("The checklist
for a new scenario") is what catches it, with that principle; ``test_broken_implementations.py`` asserts that the
kit fails every one of them on a scenario of that rule, and that every principle has a bug of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

from toolcanon import (
    ABSENT,
    ErrorInfo,
    FrozenDict,
    FrozenList,
    ToolError,
    ToolFailure,
    ToolResult,
    ToolSuccess,
    _fused,
    _schema_deep,
)
from toolcanon import jsonvalue as jsonvalue_module
from toolcanon import registry as registry_module
from toolcanon import result as result_module
from toolcanon import session as session_module
from toolcanon import spill as spill_module
from toolcanon._text_cache import TextKeyedCache
from toolcanon.jsonvalue import NotLosslessJson, Rejection, freeze, is_lossless_json, snapshot_json, thaw
from toolcanon.renderers._ecma import utf8_length
from toolcanon_conformance.adapters import reference as reference_adapter
from toolcanon_conformance.adapters.reference import ReferenceImplementation
from toolcanon_conformance.implementation import ImplementationInfo, Outcome

Registry = registry_module.Registry


@dataclass(frozen=True)
class Bug:
    """One mistake: its name, the rule it violates, how to make the reference commit it, and the checklist
    principle (1-11) whose scenarios catch it, if one does."""

    name: str
    rule: str
    inject: Callable[[], contextlib.AbstractContextManager[Any]]
    principle: int | None = None


class Broken:
    """The reference implementation with one bug injected while each scenario runs."""

    def __init__(self, bug: Bug) -> None:
        self.bug = bug
        self.reference = ReferenceImplementation()

    def start(self) -> ImplementationInfo:
        info = self.reference.start()
        return ImplementationInfo(f"broken:{self.bug.name}", info.language, info.version, info.capabilities)

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        with self.bug.inject():
            return self.reference.run(seq, scenario)

    def stop(self) -> None:
        self.reference.stop()


# --- helpers -------------------------------------------------------------------------------------------


def _owned(state: Any, result: Any) -> Any:
    state.owned.append(result)
    state.sealed.append(result)
    return result


def _success(result: ToolSuccess, **changes: Any) -> ToolSuccess:
    parts = {
        "value": result.value,
        "content": result.content,
        "meta": result.meta,
        "contexts": result.additional_contexts,
        "concludes": result.concludes_turn,
    }
    parts.update(changes)
    return ToolSuccess(parts["value"], parts["content"], parts["meta"], parts["contexts"], parts["concludes"])


def _replace_leaves(value: Any, change: Callable[[Any], Any]) -> Any:
    if isinstance(value, dict):
        return {key: _replace_leaves(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_leaves(item, change) for item in value]
    return change(value)


def _wrap_create_success(after: Callable[[Any, Any, Any, ToolSuccess], ToolSuccess]) -> Callable[[], Any]:
    original = Registry._create_success

    def create_success(self: Any, run: Any, state: Any, entry: Any, candidate: Any) -> ToolSuccess:
        result = original(self, run, state, entry, candidate)
        changed = after(run, state, entry, result)
        return result if changed is result else _owned(state, changed)

    return lambda: mock.patch.object(Registry, "_create_success", create_success)


def _wrap_normalized_value(before: Callable[[Any], Any]) -> Callable[[], Any]:
    original = Registry._normalized_value

    def normalized_value(entry: Any, candidate: Any) -> Any:
        return original(entry, before(candidate))

    return lambda: mock.patch.object(Registry, "_normalized_value", staticmethod(normalized_value))


def _wrap_post(after: Callable[[ToolResult, ToolResult], ToolResult]) -> Callable[[], Any]:
    original = Registry._post

    async def post(self: Any, run: Any, state: Any, result: Any) -> Any:
        updated = await original(self, run, state, result)
        changed = after(result, updated)
        if changed is not updated:
            state.owned.append(changed)
        return changed

    return lambda: mock.patch.object(Registry, "_post", post)


def _wrap_module_function(
    module: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]
) -> Callable[[], Any]:
    original = getattr(module, name)
    return lambda: mock.patch.object(module, name, make(original))


def _content_only_replacement(before: ToolResult, after: ToolResult) -> bool:
    return (
        isinstance(before, ToolSuccess)
        and isinstance(after, ToolSuccess)
        and after is not before
        and after.value is before.value
        and after.content is not before.content
    )


def _value_replacement(before: ToolResult, after: ToolResult) -> bool:
    return isinstance(before, ToolSuccess) and isinstance(after, ToolSuccess) and after.value is not before.value


# --- the bugs ------------------------------------------------------------------------------------------


def _persists_the_value(original: Callable[..., Any]) -> Callable[..., Any]:
    def tool_result_data(turn: int, step: int, call_id: str, result: Any, message_id: str) -> Any:
        data = original(turn, step, call_id, result, message_id)
        if isinstance(result, ToolSuccess):
            data["value"] = result.value
        return data

    return tool_result_data


def _meta_for_nested_calls(run: Any, state: Any, entry: Any, result: ToolSuccess) -> ToolSuccess:
    projector = entry.output.presentation_meta
    if run.parent is None or projector is None:
        return result
    meta = Registry._project(entry.definition.name, "presentationMeta", projector, run.arguments, result.value)
    return _success(result, meta=meta)


def _trusts_wrapper_successes() -> contextlib.AbstractContextManager[Any]:
    original = Registry._normalize_dispatch_result

    def normalize(self: Any, run: Any, state: Any, result: Any) -> Any:
        if isinstance(result, ToolSuccess) and not state.owns(result):
            state.owned.append(result)
            return result
        return original(self, run, state, result)

    return mock.patch.object(Registry, "_normalize_dispatch_result", normalize)


def _shallow_freeze(run: Any, state: Any, entry: Any, result: ToolSuccess) -> ToolSuccess:
    value = result.value
    if isinstance(value, dict):
        return _success(result, value=FrozenDict({key: thaw(item) for key, item in value.items()}))
    if isinstance(value, list):
        return _success(result, value=FrozenList([thaw(item) for item in value]))
    return result


def _nan_to_null(candidate: Any) -> Any:
    # What JSON.stringify does to NaN: an implementation that "serializes" instead of rejecting.
    return _replace_leaves(candidate, lambda leaf: None if isinstance(leaf, float) and math.isnan(leaf) else leaf)


def _round_unsafe_integers(candidate: Any) -> Any:
    def rounded(leaf: Any) -> Any:
        unsafe = isinstance(leaf, int) and not isinstance(leaf, bool) and abs(leaf) > 2**53 - 1
        return float(leaf) if unsafe else leaf

    return _replace_leaves(candidate, rounded)


def _drops_the_value_on_content_replacement(before: ToolResult, after: ToolResult) -> ToolResult:
    if _content_only_replacement(before, after):
        assert isinstance(after, ToolSuccess)
        return _success(after, value=None)
    return after


def _keeps_stale_content_on_value_replacement(before: ToolResult, after: ToolResult) -> ToolResult:
    if _value_replacement(before, after):
        assert isinstance(after, ToolSuccess) and isinstance(before, ToolSuccess)
        return _success(after, content=before.content, meta=before.meta)
    return after


def _drops_null_meta(run: Any, state: Any, entry: Any, result: ToolSuccess) -> ToolSuccess:
    return _success(result, meta=ABSENT) if result.meta is None else result


def _unprefixed_failure_content(original: Callable[..., Any]) -> Callable[..., Any]:
    def tool_error_result(thrown: object) -> ToolFailure:
        failure: ToolFailure = original(thrown)
        content = freeze(snapshot_json([{"type": "text", "text": failure.error.message}]))
        return ToolFailure(failure.error, content)

    return tool_error_result


def _info_on_plain_errors(original: Callable[..., Any]) -> Callable[..., Any]:
    def tool_error_result(thrown: object) -> ToolFailure:
        failure: ToolFailure = original(thrown)
        if failure.error.info is not None:
            return failure
        return ToolFailure(ToolError(failure.error.message, ErrorInfo("Error", "INTERNAL")), failure.content)

    return tool_error_result


def _always_aborted(original: Callable[..., Any]) -> Callable[..., Any]:
    def aborted_result(code: str, contexts: Any = ABSENT) -> ToolFailure:
        result: ToolFailure = original(registry_module.ABORTED, contexts)
        return result

    return aborted_result


def _contexts_prepended(original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda first, second: original(second, first)


def _block_message_joined_by_spaces(original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda feedback: str(original(feedback)).replace("\n", " ")


def _foreign_failure_loses_meta_and_contexts() -> contextlib.AbstractContextManager[Any]:
    original = Registry._normalize_dispatch_result

    def normalize(self: Any, run: Any, state: Any, result: Any) -> Any:
        if isinstance(result, ToolFailure) and not state.owns(result):
            copied = ToolFailure(result.error, result.content)
            state.owned.append(copied)
            return copied
        return original(self, run, state, result)

    return mock.patch.object(Registry, "_normalize_dispatch_result", normalize)


def _observers_notified_twice() -> contextlib.AbstractContextManager[Any]:
    original = Registry._notify

    def notify(self: Any, run: Any, result: Any) -> None:
        original(self, run, result)
        original(self, run, result)

    return mock.patch.object(Registry, "_notify", notify)


def _replays_calls_too(original: Callable[..., Any]) -> Callable[..., Any]:
    def derive_messages(events: Any) -> list[Any]:
        events = list(events)
        calls = [{"role": "assistant", "toolCall": event.data} for event in events if event.type == "tool/call"]
        return [*calls, *original(events)]

    return derive_messages


def _content_replacement_unconcludes(before: ToolResult, after: ToolResult) -> ToolResult:
    if _content_only_replacement(before, after):
        assert isinstance(after, ToolSuccess)
        return _success(after, concludes=False)
    return after


def _renders_an_unfrozen_value() -> contextlib.AbstractContextManager[Any]:
    # the value is frozen only after render: the renderer is handed a mutable copy
    original = Registry._project

    def project(name: str, projector: str, function: Callable[..., Any], arguments: Any, value: Any) -> Any:
        return original(name, projector, function, arguments, thaw(value) if projector == "render" else value)

    return mock.patch.object(Registry, "_project", staticmethod(project))


def _snapshot_keeps_insertion_order() -> contextlib.AbstractContextManager[Any]:
    # array-index keys stay where they were inserted; the canonical writer still writes them first
    return mock.patch.object(jsonvalue_module, "_reordered", lambda mapping: FrozenDict(mapping))


@contextlib.contextmanager
def _provenance_by_call_id() -> Iterator[None]:
    # trusts any result the registry built for a call of the same call id, not only this call's own
    built: list[tuple[str, ToolResult]] = []
    create_success = Registry._create_success
    normalize = Registry._normalize_dispatch_result

    def create(self: Any, run: Any, state: Any, entry: Any, candidate: Any) -> ToolSuccess:
        result = create_success(self, run, state, entry, candidate)
        built.append((run.call_id, result))
        return result

    def normalize_by_call_id(self: Any, run: Any, state: Any, result: Any) -> Any:
        if any(call_id == run.call_id and held is result for call_id, held in built):
            return _owned(state, result)
        return normalize(self, run, state, result)

    with (
        mock.patch.object(Registry, "_create_success", create),
        mock.patch.object(Registry, "_normalize_dispatch_result", normalize_by_call_id),
    ):
        yield


def _hook_disposers_keep_the_hook() -> contextlib.AbstractContextManager[Any]:
    original = Registry._add

    def add(hooks: list[Any], hook: Any, *, prepend: bool) -> Any:
        original(hooks, hook, prepend=prepend)
        return lambda: None

    return mock.patch.object(Registry, "_add", staticmethod(add))


def _replacement_checked_only_at_entry(original: Callable[..., Any]) -> Callable[..., Any]:
    # an already aborted replacement still stops the body, but the body's signal follows the caller's alone
    def fuse_signals(caller: Any, wrapper: Any) -> Any:
        return original(caller, wrapper) if wrapper is not None and wrapper.aborted else original(caller)

    return fuse_signals


@contextlib.contextmanager
def _generator_method_replaced(name: str, replacement: Callable[..., Any]) -> Iterator[None]:
    """A method of the fused walk's code generator replaced, with a cache of generated normalizers of its own, so
    that the sound normalizers generated before are not reused, nor the broken ones after."""
    with (
        mock.patch.object(_fused._Generator, name, replacement),
        mock.patch.object(_fused, "_GENERATED", TextKeyedCache()),
    ):
        yield


def _fused_accepts_booleans_as_integers() -> contextlib.AbstractContextManager[None]:
    """The generated integer check tests ``isinstance(v, int)``, which a ``bool`` passes: only once a tool has
    normalized enough items to use the generated code (the step-by-step validator stays right)."""
    original = _fused._Generator.scalar_check

    def scalar_check(self: Any, schema: Any, var: str) -> list[str]:
        return [line.replace("elif t is int:", "elif t is int or t is bool:") for line in original(self, schema, var)]

    return _generator_method_replaced("scalar_check", scalar_check)


def _fused_shares_one_check_per_type() -> contextlib.AbstractContextManager[None]:
    """The generated walk of a wide object keys its shared scalar checks by type alone, so every enum property of
    one type is checked against the first one's enum: only once a tool uses the generated code."""

    def shared_scalar_check(self: Any, schema: Any) -> str:
        kind = schema["type"]
        name: str | None = self.scalar_checks.get(kind)
        if name is None:
            name = self.scalar_checks[kind] = f"c{len(self.scalar_checks)}"
            self._emit(name, [*self.scalar_check(schema, "v"), "return v"])
        return name

    return _generator_method_replaced("shared_scalar_check", shared_scalar_check)


def _fused_skips_additional_properties() -> contextlib.AbstractContextManager[None]:
    """The generated walk of a closed object checks the declared properties but never counts the keys, so an
    undeclared key passes: only once a tool uses the generated code (the step-by-step validator stays right)."""
    original = _fused._Generator._object

    def object_lines(self: Any, schema: Any, depth: int) -> list[str]:
        counted = ("if len(o) != ", "if found != len(o)")
        return [line for line in original(self, schema, depth) if not line.startswith(counted)]

    return _generator_method_replaced("_object", object_lines)


def _fused_takes_any_container_for_an_object() -> contextlib.AbstractContextManager[None]:
    """The generated walk of an object tests only that the value is a container (``isinstance(v, (dict, list))``
    in effect), so an array where an object belongs is copied into one: ``[]`` becomes ``{}``."""
    original = _fused._Generator._object

    def object_lines(self: Any, schema: Any, depth: int) -> list[str]:
        lines = original(self, schema, depth)
        loose = "if type(v) is not dict and type(v) is not FD and type(v) is not list: raise B"
        return [loose if line.startswith("if type(v) is not dict") else line for line in lines]

    return _generator_method_replaced("_object", object_lines)


@contextlib.contextmanager
def _replay_refuses_nested_sub_calls() -> Iterator[None]:
    """The log's invariants take a dispatch's parent for the root call only: a sub-call of a sub-call, which
    the invariants allow, refuses the log."""
    original = session_module._Invariants.problem

    def problem(self: Any, event_type: str, data: Any, **options: Any) -> str | None:
        nested = event_type in (session_module.CODE_DISPATCH_START, session_module.CODE_DISPATCH)
        if nested and isinstance(data, dict) and data.get("parentCallId") != data.get("rootCallId"):
            return f'"{event_type}" parent must be the root call'
        found: str | None = original(self, event_type, data, **options)
        return found

    with mock.patch.object(session_module._Invariants, "problem", problem):
        yield


def _empty_model_arguments_kept_as_text(original: Callable[[str], Any]) -> Callable[[str], Any]:
    """The agent loop reads a model's argument text with a JSON reader alone: an empty text, which is not JSON,
    stays the text, and a define_tool tool refuses it instead of getting ``{}``."""

    def parse(raw: str) -> Any:
        return raw if raw == "" else original(raw)

    return parse


def _step_signal_checked_only_between_calls(original: Callable[..., Any]) -> Callable[..., Any]:
    """The step runner checks the step's signal before each call but hands the call no signal: an abort while a
    call runs reaches only the calls after it."""

    async def run(registry: Any, log: Any, calls: Any, *, signal: Any = None, **options: Any) -> Any:
        outcomes = []
        for call in calls:
            handed = signal if signal is not None and signal.aborted else None
            outcomes.append(await original(registry, log, [call], signal=handed, **options))
        return session_module.StepOutcome(
            tuple(result for outcome in outcomes for result in outcome.results),
            tuple(message for outcome in outcomes for message in outcome.messages),
            tuple(context for outcome in outcomes for context in outcome.additional_contexts),
            any(outcome.concludes_turn for outcome in outcomes),
        )

    return run


def _approval_asked_without_the_tool_name(original: Callable[..., Any]) -> Callable[..., Any]:
    """The approval request is built with an empty tool name: the service cannot say what it approves."""

    def request(agent: Any, tool_name: str, call_id: str, reason: Any, signal: Any) -> Any:
        return original(agent, "", call_id, reason, signal)

    return request


@contextlib.contextmanager
def _observers_that_settle_later_never_run() -> Iterator[None]:
    """The registry calls each result observer but drops what it returns: an observer that settles later never
    runs past its start."""
    original = Registry.on_result

    def on_result(self: Any, observer: Callable[..., Any]) -> Any:
        def dropping(run: Any, result: Any) -> None:
            produced = observer(run, result)
            if inspect.iscoroutine(produced):
                produced.close()

        return original(self, dropping)

    with mock.patch.object(Registry, "on_result", on_result):
        yield


def _path_depth(path: Any) -> int:
    depth = 0
    while isinstance(path, tuple):
        path, _ = path
        depth += 1
    return depth


def _deep_schema_engine_stops(original: Callable[..., Any]) -> Callable[..., Any]:
    """The iterative engine (schemas taller than the closures take) checks nothing below 200 levels."""

    def collect(node: Any, value: Any, path: Any, out: list[str], use_closures: bool) -> Any:
        if _path_depth(path) > 200:
            return None
        return (yield from original(node, value, path, out, use_closures))

    return collect


def _recursive_snapshot(original: Callable[..., Any]) -> Callable[..., Any]:
    """A snapshot that walks the value recursively, and takes running out of stack for a value not lossless."""

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    def snapshot(value: Any) -> Any:
        try:
            walk(value)
        except RecursionError:
            raise NotLosslessJson([Rejection((), "cycle")]) from None
        return original(value)

    return snapshot


@contextlib.contextmanager
def _both(*injections: Callable[[], contextlib.AbstractContextManager[Any]]) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for inject in injections:
            stack.enter_context(inject())
        yield


def _python_numbers_in_the_log(canonical: Callable[..., str]) -> Callable[..., str]:
    def written(value: Any) -> str:
        if isinstance(value, dict) and set(value) == {"seq", "type", "data"}:
            head = canonical({"seq": value["seq"], "type": value["type"]})[:-1]
            return head + ',"data":' + json.dumps(thaw(value["data"]), separators=(",", ":"), ensure_ascii=False) + "}"
        return canonical(value)

    return written


def _skips_unreadable_lines(read: Callable[..., Any]) -> Callable[..., Any]:
    def lenient(data: bytes, path: str) -> Any:
        while True:
            try:
                return read(data, path)
            except session_module.MalformedLogError as malformed:
                pieces = data.split(b"\n")
                del pieces[malformed.line - 1]
                data = b"\n".join(pieces)

    return lenient


def _refuses_a_torn_line(read: Callable[..., Any]) -> Callable[..., Any]:
    def strict(data: bytes, path: str) -> Any:
        events, torn, invariants = read(data, path)
        if torn is not None:
            raise session_module.MalformedLogError(path, torn.line, torn.offset, "no newline")
        return events, torn, invariants

    return strict


def _truthy_execution_mode(registry: Any, name: str, arguments: Any) -> str:
    entry = registry._tools.get(name)
    check = entry.definition.is_concurrency_safe if entry else None
    try:
        return "parallel" if check is not None and check(arguments) else "exclusive"
    except Exception:
        return "exclusive"


def _denial_reason_as_python_text() -> contextlib.AbstractContextManager[Any]:
    # reads a reason that is not a string with Python's str(): "5", "{'a': 1}", "None"
    original = Registry._denial

    def denial(self: Any, state: Any, reason: object) -> Any:
        return original(self, state, reason if isinstance(reason, str) else str(reason))

    return mock.patch.object(Registry, "_denial", denial)


def _drops_proto_keys(candidate: Any) -> Any:
    """A copy made the way ``Object.assign`` or a spread into ``{}`` makes it: an own ``__proto__`` key is lost."""
    if isinstance(candidate, dict):
        return {key: _drops_proto_keys(item) for key, item in candidate.items() if key != "__proto__"}
    if isinstance(candidate, list):
        return [_drops_proto_keys(item) for item in candidate]
    return candidate


def _observers_stop_at_the_first_raise() -> contextlib.AbstractContextManager[Any]:
    """The registry contains a raising observer but notifies none of the observers after it."""

    def notify(self: Any, run: Any, result: Any) -> None:
        for observer in list(self._observers):
            try:
                produced = observer(run, result)
                if inspect.isawaitable(produced):
                    future = asyncio.ensure_future(produced)
                    self._pending_observers.add(future)
                    future.add_done_callback(lambda done, run=run: self._observer_settled(run, done))
            except Exception as thrown:
                self._observer_failed(run, thrown)
                return

    return mock.patch.object(Registry, "_notify", notify)


def _replay_ignores_seq() -> contextlib.AbstractContextManager[Any]:
    """The reader takes every line's ``seq`` for the line number it should be: a repeated or lost line whose
    neighbours still pair passes."""
    original = session_module._parse_line

    def parse_line(piece: bytes, line: int, invariants: Any) -> Any:
        try:
            envelope = json.loads(piece)
        except ValueError:
            return original(piece, line, invariants)
        if isinstance(envelope, dict) and type(envelope.get("seq")) is int:
            envelope["seq"] = line
            piece = json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return original(piece, line, invariants)

    return mock.patch.object(session_module, "_parse_line", parse_line)


def _bare_body_stage_drops_deferred_contexts() -> contextlib.AbstractContextManager[Any]:
    """A registry with no around wrapper runs the body directly and forgets what it deferred: only the path through
    the wrappers puts the deferred contexts first (R-CTX-1)."""
    original = Registry._body_stage

    async def body_stage(self: Any, run: Any, state: Any) -> Any:
        result = await original(self, run, state)
        if not self._wrappers:
            run._deferred.clear()
        return result

    return mock.patch.object(Registry, "_body_stage", body_stage)


def _plain_error_code_taken_for_info(original: Callable[..., Any]) -> Callable[..., Any]:
    # an error that carries a string code is taken for a coded one, as a duck-typed check would take it
    def error_info(thrown: object) -> tuple[str, str] | None:
        code = getattr(thrown, "code", None)
        if type(code) is str and original(thrown) is None:
            return type(thrown).__name__, code
        return original(thrown)

    return error_info


def _spill_store_failure_fails_the_call(original: Callable[..., Any]) -> Callable[..., Any]:
    # the store is asked outside the policy's containment: a store that fails fails the post-execute listener
    async def bound_content(content: Any, call_id: str, *, max_bytes: int, store: Any, hint: str) -> Any:
        lossless = is_lossless_json(content)
        text = spill_module._plain_text(content) if lossless else spill_module._unchecked_plain_text(content)
        if text is None or utf8_length(text) <= max_bytes:
            return await original(content, call_id, max_bytes=max_bytes, store=store, hint=hint)
        locator = await registry_module.settle(store(call_id, text))
        return await original(content, call_id, max_bytes=max_bytes, store=lambda *_: locator, hint=hint)

    return bound_content


def _change_listeners_all_told() -> contextlib.AbstractContextManager[Any]:
    """Every listener is told of a change, and the first error raised once all were: one listener raising no longer
    stops the ones after it (R-REG-11)."""

    def notify_change(self: Any, name: str) -> None:
        raised: list[BaseException] = []
        for listener in list(self._change_listeners):
            try:
                listener(name)
            except Exception as error:
                raised.append(error)
        if raised:
            raise raised[0]

    return mock.patch.object(Registry, "_notify_change", notify_change)


def _reopening_keeps_a_torn_line(original: Callable[..., Any]) -> Callable[..., Any]:
    # the reader reports a torn last line where the file ends, so reopening cuts nothing and appends after its bytes
    def read_events(data: bytes, path: str) -> Any:
        events, torn, invariants = original(data, path)
        if torn is not None:
            torn = session_module.TornLine(torn.line, len(data), torn.length)
        return events, torn, invariants

    return read_events


def _gap_cut_by_characters(original: Callable[..., Any]) -> Callable[..., Any]:
    # a string indent cut after 10 characters rather than 10 UTF-16 code units: an astral character counts one
    def gap(space: object) -> Any:
        return (space[:10] or None) if type(space) is str else original(space)

    return gap


def _container_presentation_meta_taken_as_constant(original: Callable[..., Any]) -> Callable[..., Any]:
    # define_tool takes a presentationMeta that is an object or an array for constant metadata instead of wrapping
    # it as it is: only a scalar one still fails the call (R-NORM-4)
    def define_tool(**fields: Any) -> Any:
        output = fields["output"]
        meta = output.presentation_meta
        if isinstance(meta, dict | list):
            fields["output"] = dataclasses.replace(output, presentation_meta=lambda args, value: meta)
        return original(**fields)

    return define_tool


def _schemas_list_a_text_description() -> contextlib.AbstractContextManager[Any]:
    """``schemas()`` lists a description that is not a string as the tool's name, as a registry typing it as text
    would (R-SCHEMAS-1)."""
    original = Registry.schemas

    def schemas(self: Any) -> Any:
        listed = original(self)
        for schema in listed:
            if type(schema["description"]) is not str:
                schema["description"] = schema["name"]
        return listed

    return mock.patch.object(Registry, "schemas", schemas)


def _recursive_key_order(node: Any) -> Any:
    if isinstance(node, dict):
        return [[key, _recursive_key_order(child)] for key, child in node.items()]
    if isinstance(node, list):
        return [_recursive_key_order(item) for item in node]
    return None


BUGS: tuple[Bug, ...] = (
    Bug(
        "persists-the-value",
        "R-LOG-3",
        _wrap_module_function(session_module, "tool_result_data", _persists_the_value),
        principle=7,
    ),
    Bug("meta-for-nested-calls", "R-NEST-3", _wrap_create_success(_meta_for_nested_calls)),
    Bug("trusts-a-wrapper-authored-success", "R-WRAP-5", _trusts_wrapper_successes),
    Bug("shallow-freeze", "R-SNAP-6", _wrap_create_success(_shallow_freeze)),
    Bug("accepts-nan", "R-SNAP-2", _wrap_normalized_value(_nan_to_null)),
    Bug("accepts-unsafe-integers", "R-SNAP-3", _wrap_normalized_value(_round_unsafe_integers), principle=1),
    Bug("content-replacement-drops-the-value", "R-POST-6", _wrap_post(_drops_the_value_on_content_replacement)),
    Bug("value-replacement-not-rerendered", "R-POST-4", _wrap_post(_keeps_stale_content_on_value_replacement)),
    Bug("null-meta-dropped", "R-NORM-5", _wrap_create_success(_drops_null_meta), principle=8),
    Bug(
        "failure-content-without-error-prefix",
        "R-NORM-8",
        _wrap_module_function(registry_module, "tool_error_result", _unprefixed_failure_content),
    ),
    Bug(
        "info-on-uncoded-errors",
        "R-RES-3",
        _wrap_module_function(registry_module, "tool_error_result", _info_on_plain_errors),
    ),
    Bug(
        "aborted-instead-of-aborted-before-dispatch",
        "R-ABORT-1",
        _wrap_module_function(registry_module, "aborted_result", _always_aborted),
    ),
    Bug(
        "accept-contexts-prepended",
        "R-CTX-2",
        _wrap_module_function(registry_module, "_concat_contexts", _contexts_prepended),
    ),
    Bug(
        "block-message-joined-by-spaces",
        "R-POST-2",
        _wrap_module_function(registry_module, "_blocked_message", _block_message_joined_by_spaces),
    ),
    Bug("foreign-failure-loses-meta-and-contexts", "R-WRAP-4", _foreign_failure_loses_meta_and_contexts),
    Bug("observers-notified-twice", "R-OBS-1", _observers_notified_twice),
    Bug(
        "replay-includes-tool-calls",
        "R-REPLAY-1",
        _wrap_module_function(session_module, "derive_messages", _replays_calls_too),
    ),
    Bug("content-replacement-unconcludes-the-turn", "R-TURN-2", _wrap_post(_content_replacement_unconcludes)),
    Bug(
        "log-written-with-python-numbers",
        "R-SNAP-5",
        _wrap_module_function(session_module, "canonical_json", _python_numbers_in_the_log),
    ),
    Bug(
        "replay-skips-unreadable-lines",
        "R-REPLAY-2",
        _wrap_module_function(session_module, "_read_events", _skips_unreadable_lines),
    ),
    Bug(
        "replay-refuses-a-torn-line",
        "R-REPLAY-2",
        _wrap_module_function(session_module, "_read_events", _refuses_a_torn_line),
    ),
    Bug(
        "execution-mode-truthy",
        "R-REG-9",
        lambda: mock.patch.object(Registry, "execution_mode", _truthy_execution_mode),
        principle=8,
    ),
    Bug("fused-accepts-booleans-as-integers", "R-VAL-7", _fused_accepts_booleans_as_integers, principle=5),
    Bug("fused-shares-one-check-per-type", "R-VAL-3", _fused_shares_one_check_per_type, principle=5),
    Bug("fused-skips-additional-properties", "R-VAL-4", _fused_skips_additional_properties, principle=5),
    Bug("fused-takes-arrays-for-objects", "R-VAL-2", _fused_takes_any_container_for_an_object, principle=5),
    Bug("replay-refuses-nested-sub-calls", "R-REPLAY-2", _replay_refuses_nested_sub_calls),
    Bug(
        "deep-schema-engine-stops-at-200-levels",
        "R-VAL-5",
        _wrap_module_function(_schema_deep, "_collect", _deep_schema_engine_stops),
        principle=5,
    ),
    Bug("recursive-snapshot", "R-ARGS-1", _wrap_module_function(registry_module, "snapshot_json", _recursive_snapshot)),
    Bug("renderer-handed-an-unfrozen-value", "R-NORM-1", _renders_an_unfrozen_value),
    Bug("snapshot-keeps-insertion-order", "R-SNAP-4", _snapshot_keeps_insertion_order, principle=9),
    Bug("provenance-by-call-id", "R-TOK-1", _provenance_by_call_id),
    Bug("hook-disposer-keeps-the-hook", "R-REG-10", _hook_disposers_keep_the_hook),
    Bug(
        "replacement-signal-checked-only-at-entry",
        "R-WRAP-7",
        _wrap_module_function(registry_module, "fuse_signals", _replacement_checked_only_at_entry),
        principle=3,
    ),
    Bug("denial-reason-as-python-text", "R-PRE-8", _denial_reason_as_python_text, principle=1),
    Bug(
        "approval-asked-without-the-tool-name",
        "R-PRE-9",
        _wrap_module_function(registry_module, "ApprovalRequest", _approval_asked_without_the_tool_name),
    ),
    Bug("observers-that-settle-later-never-run", "R-OBS-1", _observers_that_settle_later_never_run),
    Bug(
        "empty-model-arguments-kept-as-text",
        "R-LOG-5",
        _wrap_module_function(session_module, "parse_model_arguments", _empty_model_arguments_kept_as_text),
        principle=4,
    ),
    Bug(
        "step-signal-checked-only-between-calls",
        "R-LOG-5",
        _wrap_module_function(reference_adapter, "run_tool_calls", _step_signal_checked_only_between_calls),
        principle=3,
    ),
    Bug("observers-stop-at-the-first-raise", "R-OBS-2", _observers_stop_at_the_first_raise, principle=2),
    Bug("snapshot-drops-proto-keys", "R-SNAP-8", _wrap_normalized_value(_drops_proto_keys), principle=9),
    Bug("replay-ignores-seq", "R-REPLAY-2", _replay_ignores_seq, principle=10),
    Bug(
        "keys-report-walked-recursively",
        "R-SNAP-4",
        lambda: mock.patch.object(reference_adapter, "_key_order", _recursive_key_order),
        principle=11,
    ),
    # principle 6: each is caught only by a scenario of what the format could not express before (NEW_FORMAT_BUGS)
    Bug("bare-body-stage-drops-deferred-contexts", "R-CTX-1", _bare_body_stage_drops_deferred_contexts, principle=6),
    Bug(
        "plain-error-code-taken-for-info",
        "R-RES-3",
        _wrap_module_function(result_module, "error_info", _plain_error_code_taken_for_info),
        principle=6,
    ),
    Bug(
        "spill-store-failure-fails-the-call",
        "R-SPILL-1",
        _wrap_module_function(spill_module, "bound_content", _spill_store_failure_fails_the_call),
        principle=6,
    ),
    Bug("change-listeners-all-told", "R-REG-11", _change_listeners_all_told, principle=6),
    Bug(
        "reopening-keeps-a-torn-line",
        "R-REPLAY-2",
        _wrap_module_function(session_module, "_read_events", _reopening_keeps_a_torn_line),
        principle=6,
    ),
    Bug(
        "indent-cut-by-characters",
        "R-SNAP-5",
        _wrap_module_function(jsonvalue_module, "_gap", _gap_cut_by_characters),
        principle=6,
    ),
    Bug(
        "container-presentation-meta-taken-as-constant",
        "R-NORM-4",
        _wrap_module_function(reference_adapter, "define_tool", _container_presentation_meta_taken_as_constant),
        principle=6,
    ),
    Bug("schemas-list-a-text-description", "R-SCHEMAS-1", _schemas_list_a_text_description, principle=6),
)

NEW_FORMAT_BUGS: dict[str, frozenset[str]] = {
    "bare-body-stage-drops-deferred-contexts": frozenset({"bare-execute-stage", "bare-registry"}),
    "plain-error-code-taken-for-info": frozenset({"res-plain-error-code"}),
    "spill-store-failure-fails-the-call": frozenset({"spill-store-fails", "spill-store-rejects"}),
    "change-listeners-all-told": frozenset({"reg-change-listeners-order"}),
    "reopening-keeps-a-torn-line": frozenset({"reopen-damaged-log"}),
    "indent-cut-by-characters": frozenset({"render-json-indent-space"}),
    "container-presentation-meta-taken-as-constant": frozenset({"reg-presentation-meta-not-callable-containers"}),
    "schemas-list-a-text-description": frozenset({"reg-description-any-value"}),
}
"""The bugs only a scenario of a format extension catches (docs/protocol.md, "Bounds of the format"), each with
those scenarios: every other scenario of its rule passes with the bug in place."""


def broken(name: str) -> Broken:
    """The broken implementation of the bug named ``name``."""
    return Broken(next(bug for bug in BUGS if bug.name == name))


def fused_skips_additional_properties() -> Broken:
    """The implementation ``docs/kit.md`` runs ``toolcanon twins`` on: ``--impl
    conformance/tests/broken_implementations.py:fused_skips_additional_properties``."""
    return broken("fused-skips-additional-properties")
