"""The reference implementation's adapter: runs a scenario against :class:`toolcanon.Registry`.

This module is the worked example for adapter authors. It reads top to bottom in the order a scenario is
run:

1. **Applicability.** A scenario that needs a capability this implementation lacks, or holds an exotic value
   Python cannot express, is answered :class:`Skipped` (never passed). Its generator tags are expanded first:
   the scenario run is the document they stand for.
2. **Fixture tools.** Each tool of the scenario is built from the behaviour catalogue (renderers, metadata
   projectors, bodies, content finalizers) and registered; failed registrations are recorded.
3. **Hooks.** One pass-through instrumentation hook per stage is installed first (outermost), counting the
   *phases* of each call (none for a stage the scenario lists as ``bare``); then the scenario's hooks, in list
   order, each applying only to the calls its ``steps`` filter names (any other call passes through).
4. **Steps.** Direct calls, freeze probes, persist (the durable events of some calls, written to a fresh
   session log), model steps (a model's calls run by the agent-loop step on a fresh log), replay (the model
   messages derived from such a log alone), reopen (a copy of such a log reopened for appending, as a resumed
   session's is) and schemas.
5. **Transcript.** Every step's outcome, with the exact key order of the format, written with the canonical
   JSON writer.

``python -m toolcanon_conformance.adapters.reference`` serves the same adapter over the NDJSON protocol.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, TypeVar, cast

from toolcanon import (
    ABSENT,
    AbortController,
    Accept,
    Allow,
    Ask,
    Block,
    Call,
    Deny,
    ErrorInfo,
    HarnessError,
    Output,
    Registry,
    ToolDefinition,
    ToolError,
    ToolExecution,
    ToolFailure,
    ToolResult,
    ToolSuccess,
    canonical_json,
    define_tool,
)
from toolcanon.decisions import ApprovalRequest
from toolcanon.errors import CodeRunFailedError, contract_error_name, error_message
from toolcanon.jsonvalue import es_key_order, thaw
from toolcanon.mcp import ImageUpload, mcp_tool, public_tool_name
from toolcanon.nested import CodeMode, ToolCallError, Tools
from toolcanon.schema import compile_value_schema
from toolcanon.session import (
    InvalidEventError,
    MalformedLogError,
    ModelToolCall,
    SessionDataError,
    SessionLog,
    replay,
    run_tool_calls,
)
from toolcanon.spill import install_dispatch_log_spill, install_spill
from toolcanon.timeout import install_timeout
from toolcanon_conformance.exotic import NotExpressible, first_inexpressible, materialize
from toolcanon_conformance.generate import expand
from toolcanon_conformance.implementation import Errored, ImplementationInfo, Outcome, Ran, Skipped
from toolcanon_conformance.scenario import FORMAT_VERSION

__all__ = ["CAPABILITIES", "ReferenceImplementation", "implementation", "run_scenario"]

CAPABILITIES: Final = (
    "guards",
    "wrappers",
    "post-execute",
    "finalize-content",
    "approval",
    "cancellation",
    "persistence",
    "nested",
    "mcp",
    "spill",
    "timeout",
    "schemas",
    "first-party-renderers",
    "execution-mode",
    "generated-values",
    "model-step",
)
"""What the reference supports, as the ``start`` handshake announces it."""

HOMEPAGE: Final = "https://github.com/toolcanon/toolcanon"
ISSUES: Final = "https://github.com/toolcanon/toolcanon/issues"
"""Where the reference lives and where a deviation of it is reported, as ``start`` announces them."""

_NESTED_CALL_ID: Final = re.compile(r"^(?P<outer>.+):code:[0-9]+$")
MCP_SERVER: Final = "fixture"
"""The server every MCP fixture is a tool of: the bridge registers it as ``mcp__fixture__<key or name>``."""


# --- the Implementation ------------------------------------------------------------------------------


class ReferenceImplementation:
    """The reference registry as an :class:`~toolcanon_conformance.implementation.Implementation`."""

    def start(self) -> ImplementationInfo:
        """The reference's metadata; nothing to launch (it runs in this process)."""
        return ImplementationInfo(
            name="toolcanon",
            language="python",
            version=_version(),
            capabilities=CAPABILITIES,
            homepage=HOMEPAGE,
            issues=ISSUES,
        )

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        """Run one scenario: its transcript, a skip (not applicable), or the adapter's own failure."""
        try:
            return run_scenario(scenario)
        except Exception as error:
            return Errored.raised(error)

    def stop(self) -> None:
        """Nothing to stop."""


def _version() -> str:
    import toolcanon

    return toolcanon.__version__


implementation = ReferenceImplementation()
"""The adapter object the kit loads with ``--impl toolcanon_conformance.adapters.reference:implementation``."""


_T = TypeVar("_T")


def run_scenario(scenario: Mapping[str, Any]) -> Ran | Skipped:
    """Run a (valid) scenario document against a fresh registry; raises only for the adapter's own bugs."""
    missing = [need for need in scenario.get("requires", ()) if need not in CAPABILITIES]
    if missing:
        return Skipped(f"missing capability: {missing[0]}")
    kind = first_inexpressible(scenario)  # a generator tag holds its exotic tags in document order too
    if kind is not None:
        return Skipped(f"not expressible: {kind}")
    scenario = expand(scenario)  # the generator tags: the document they stand for
    with _contained_warnings(), _LazyWorkdir() as workdir:
        transcript = _run_in_fresh_loop(_ScenarioRun(scenario, workdir).run())
    return Ran(canonical_json(transcript))


class _LazyWorkdir:
    """A temporary directory made only when a scenario first persists a log (most never do)."""

    def __init__(self) -> None:
        self._directory: tempfile.TemporaryDirectory[str] | None = None

    def path(self) -> Path:
        if self._directory is None:
            self._directory = tempfile.TemporaryDirectory(prefix="toolcanon-")
        return Path(self._directory.name)

    def __enter__(self) -> _LazyWorkdir:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._directory is not None:
            self._directory.cleanup()


def _run_in_fresh_loop(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run a scenario in its own event loop, as ``asyncio.run`` does, minus its SIGINT handling.

    (``asyncio.run`` swaps the SIGINT handler around every call; restoring it formats the main task's repr,
    i.e. the whole transcript, each time: a large share of a short scenario's cost.)
    """
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        try:
            leftovers = asyncio.all_tasks(loop)
            for task in leftovers:
                task.cancel()
            if leftovers:
                loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


@contextmanager
def _contained_warnings() -> Iterator[None]:
    """Keep the registry's contained-failure warnings (a raising result observer) off standard error."""
    logger = logging.getLogger("toolcanon")
    handler = logging.NullHandler()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


# --- what the transcript reports ---------------------------------------------------------------------


def context_message(context: Mapping[str, Any]) -> dict[str, Any]:
    """A scenario's additional context ``{id, text}`` as this implementation's context message."""
    return {"role": "user", "content": [{"type": "text", "text": context["text"]}], "id": context["id"]}


def context_report(message: Any) -> dict[str, Any]:
    """A context reported back: ``{id, text}`` for a scenario's own, ``{source, content}`` for any other.

    The others are messages the implementation made itself, such as a nested call's image content forwarded
    to the outer result; their generated parts (role, id) are left out.
    """
    if isinstance(message, Mapping) and set(message) == {"role", "content", "id"}:
        content = message["content"]
        if isinstance(content, list) and len(content) == 1 and isinstance(content[0], Mapping):
            return {"id": message["id"], "text": content[0].get("text")}
    source = message.get("source") if isinstance(message, Mapping) else None
    content = message.get("content") if isinstance(message, Mapping) else message
    return {"source": source, "content": content}


def content_report(content: Any, issued: Mapping[str, Any]) -> Any:
    """A content list as the transcript reports it: an image block holding a reference the scenario's attachment
    store issued shows that reference as ``{mediaType, bytes}``, without the store's own parts (its generated id)."""
    if not isinstance(content, list) or not issued:
        return content
    reported = []
    for block in content:
        attachment = block.get("attachment") if isinstance(block, Mapping) and block.get("type") == "image" else None
        identity = attachment.get("attachmentId") if isinstance(attachment, Mapping) else None
        if isinstance(identity, str) and identity in issued:
            block = {**block, "attachment": issued[identity]}
        reported.append(block)
    return reported


def result_report(result: ToolResult, issued: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A result in the transcript's key order: isError, value | error, content, meta?, contexts?, concludes?"""
    report: dict[str, Any] = {"isError": result.is_error}
    if isinstance(result, ToolSuccess):
        report["value"] = result.value
    else:
        error: dict[str, Any] = {"message": result.error.message}
        if result.error.info is not None:
            error["info"] = {"name": result.error.info.name, "code": result.error.info.code}
        report["error"] = error
    report["content"] = content_report(result.content, issued or {})
    if result.meta is not ABSENT:
        report["meta"] = result.meta
    if result.additional_contexts is not ABSENT:
        report["additionalContexts"] = [context_report(context) for context in result.additional_contexts]
    if result.concludes_turn is True:
        report["concludesTurn"] = True
    return report


def registration_error_report(error: BaseException) -> dict[str, Any]:
    """A failed registration: the contract's error name, the code of a coded error, the message."""
    report: dict[str, Any] = {"name": contract_error_name(error)}
    if isinstance(error, HarnessError):
        report["code"] = error.code
    report["message"] = error_message(error)
    return report


@dataclass(slots=True)
class Phases:
    """How often one call entered each pipeline stage (``finalize`` is reported only when declared)."""

    pre: int = 0
    guard: int = 0
    execute: int = 0
    body: int = 0
    post: int = 0
    finalize: int = 0
    observed: int = 0

    def report(self, with_finalize: bool, bare: frozenset[str] = frozenset()) -> dict[str, int]:
        """The transcript's ``phases`` object, in its key order, without the keys of the ``bare`` stages."""
        counts = {"pre": self.pre, "guard": self.guard, "execute": self.execute, "body": self.body, "post": self.post}
        report = {key: count for key, count in counts.items() if key not in bare}
        if with_finalize:
            report["finalize"] = self.finalize
        report["observed"] = self.observed
        return report


_BARE_KEYS: Final = {"pre-execute": "pre", "guard": "guard", "execute": "execute", "post-execute": "post"}
"""The ``phases`` key of each stage a scenario may list as ``bare``."""


# --- one scenario run --------------------------------------------------------------------------------


class _ScenarioRun:
    """The state of one scenario run: the registry, its fixture tools and hooks, and what each step made."""

    def __init__(self, scenario: Mapping[str, Any], workdir: _LazyWorkdir) -> None:
        self.scenario = scenario
        self.workdir = workdir
        approval = scenario.get("approval")
        self.registry = Registry(approval=self._approval(approval) if approval is not None else None)
        self.code_mode = CodeMode(self.registry, events=self._record_dispatch_event)
        self.spilled: dict[str, str] = {}  # what the spill policy stored, by locator
        self.issued: dict[str, dict[str, Any]] = {}  # attachment id the scenario's store issued -> as reported
        self.steps: dict[str, Mapping[str, Any]] = {step["id"]: step for step in scenario["steps"]}
        self.call_ids = {
            step["id"]: step["call"].get("callId", step["id"]) for step in scenario["steps"] if "call" in step
        }
        self.phases: dict[Any, Phases] = {}  # by dispatch token: one entry per call
        self.observed: list[tuple[ToolExecution, ToolResult]] = []
        self.results: dict[str, ToolResult] = {}
        self.runs: dict[str, ToolExecution] = {}
        self.controllers: dict[str, AbortController] = {}  # the caller's signal of each direct call
        self.nested: dict[Any, list[dict[str, Any]]] = {}  # by outer token
        self.dispatch_events: dict[str, list[tuple[str, Any]]] = {}  # by root call id
        self.logs: dict[str, Path] = {}
        self.step_log: SessionLog | None = None  # the log of the model step running, which dispatch events join
        self.damaged: list[Path] = []  # the damaged copies replayed
        self.message_ids: dict[str, str] = {}  # generated message id -> "<callId>:result"
        self.disposers: dict[str, Callable[[], None]] = {}
        self.hook_disposers: list[Callable[[], None]] = []  # the scenario's hooks' disposers, in list order
        self.seen: dict[Any, list[dict[str, Any]]] = {}  # by dispatch token: what its behaviours received
        self.asking: dict[str, Any] = {}  # call id -> the dispatch token of the call whose listener asked last
        self.caches: dict[int, dict[tuple[str, str, str], Any]] = {}  # by ``cache`` action: the results it keeps
        self.replacements: dict[Any, list[AbortController]] = {}  # by token: the ``later`` replacements in place
        self.fixtures: dict[str, Mapping[str, Any]] = {}  # the fixture behind each tool name
        self.notified: list[dict[str, int]] = []  # each notification a changeListeners listener saw, in order
        self.bare = frozenset(_BARE_KEYS[stage] for stage in scenario.get("bare", ()))  # uninstrumented stages

    async def run(self) -> dict[str, Any]:
        registrations = self._register_tools()
        self._install_instrumentation()
        self._install_hooks()
        if "spill" in self.scenario:
            self._install_spill(self.scenario["spill"]["maxBytes"], self.scenario["spill"].get("fail"))
        if "timeout" in self.scenario:
            install_timeout(self.registry)  # after the hooks: the innermost around wrapper
        outcomes: dict[str, Any] = {}
        for step in self.scenario["steps"]:
            outcomes[step["id"]] = await self._run_step(step)
        transcript: dict[str, Any] = {"formatVersion": FORMAT_VERSION, "scenario": self.scenario["id"]}
        if registrations:
            transcript["registrations"] = registrations
        transcript["steps"] = outcomes
        if "changeListeners" in self.scenario:
            transcript["notified"] = self.notified
        return transcript

    # --- fixture tools --------------------------------------------------------------------------------

    def _register_tools(self) -> dict[str, Any]:
        registrations: dict[str, Any] = {}
        if "changeListener" in self.scenario:
            self._install_change_listener(self.scenario["changeListener"])
        for index, spec in enumerate(self.scenario.get("changeListeners", ())):
            self._install_change_listener(spec, index)
        fixtures = self.scenario["tools"]
        for key in es_key_order(list(fixtures)):  # the format's key order is ECMAScript's, as Object.entries lists
            spec = fixtures[key]
            raw_name = spec.get("name", key)
            # an MCP fixture is registered under the bridge's public name; its server keeps the raw one
            name = public_tool_name(MCP_SERVER, raw_name) if "mcp" in spec else raw_name
            self.fixtures.setdefault(name, spec)
            if spec.get("register") is False:
                continue
            try:
                definition = self._mcp_definition(raw_name, spec) if "mcp" in spec else self._definition(name, spec)
                self.disposers[name] = self.registry.register(definition)
            except Exception as error:
                registrations[key] = {"registerError": registration_error_report(error)}
                continue
            self.fixtures[name] = spec
            if spec.get("registerError"):
                registrations[key] = {"registered": True}
        return registrations

    def _install_change_listener(self, spec: Mapping[str, Any], index: int | None = None) -> None:
        """A tools/change listener that raises ``<message> #<n>`` on the notifications n (from 1) ``raiseOn`` lists;
        the one of ``changeListeners`` at ``index`` records each notification it sees in ``notified``."""
        notified = 0

        def listener(name: str) -> None:
            nonlocal notified
            notified += 1
            if index is not None:
                self.notified.append({"listener": index, "n": notified})
            if notified in spec["raiseOn"]:
                raise RuntimeError(f"{spec['message']} #{notified}")

        self.registry.on_change(listener)

    def _definition(self, name: str, spec: Mapping[str, Any]) -> ToolDefinition:
        """A fixture tool: ``define_tool`` for DSL ``parameters``, a raw definition for ``rawParameters``."""
        output_spec = spec.get("output")
        render = self._renderer(output_spec["render"]) if output_spec and "render" in output_spec else None
        projector_spec = output_spec.get("presentationMeta") if output_spec else None
        projector = self._projector(projector_spec) if projector_spec is not None else None
        finalizer = self._finalizer(spec["finalizeContent"]) if "finalizeContent" in spec else None
        timeout_ms = materialize(spec["timeoutMs"]) if "timeoutMs" in spec else None
        safe = _concurrency_check(spec["concurrencySafe"]) if "concurrencySafe" in spec else None
        body = self._body(spec["body"])
        description = spec.get("description", name)
        if output_spec is not None and "rawParameters" not in spec:
            dsl_schema = output_spec.get("schema", {"type": "json"})
            definition = define_tool(
                name=name,
                description=description,
                parameters=materialize(spec.get("parameters", {})),
                output=Output(materialize(dsl_schema), render, projector),  # type: ignore[arg-type]
                execute=body,
                finalize_content=finalizer,
                timeout_ms=timeout_ms,
                is_concurrency_safe=safe,
            )
            if "rawSchema" in output_spec:  # the raw schema beside define_tool's own (wrapping) projections
                definition = replace(
                    definition, output=replace(definition.output, schema=materialize(output_spec["rawSchema"]))
                )
            return definition
        output: Output | None = None
        if output_spec is not None:
            if "schema" in output_spec:  # a DSL schema on a raw definition: compiled as define_tool would
                schema = compile_value_schema(materialize(output_spec["schema"]), "schema")
            else:
                schema = materialize(output_spec.get("rawSchema"))
            output = Output(schema, render, projector)  # type: ignore[arg-type]
        return ToolDefinition(
            name=name,
            description=description,
            parameters=materialize(spec.get("rawParameters", spec.get("parameters", {}))),
            output=output,
            execute=body,
            finalize_content=finalizer,
            timeout_ms=timeout_ms,
            is_concurrency_safe=safe,
        )

    def _mcp_definition(self, raw_name: str, spec: Mapping[str, Any]) -> ToolDefinition:
        """A tool ``raw_name`` of the MCP server ``fixture`` through the bridge; the server answers the fixture's
        ``response`` every time."""
        server_tool = {key: materialize(value) for key, value in spec["mcp"].items() if key != "response"}
        response = spec["mcp"]["response"]

        async def server(tool: str, arguments: Any) -> Any:
            return materialize(response)

        store = self._store_images if "attachments" in self.scenario else None
        definition = mcp_tool({"name": raw_name, **server_tool}, server, server_name=MCP_SERVER, attachments=store)
        bridged = definition.execute

        async def execute(args: Any, run: ToolExecution) -> Any:
            self._phases(run).body += 1
            return await bridged(args, run)

        return replace(definition, execute=execute, description=spec.get("description", raw_name))

    def _store_images(self, images: list[ImageUpload]) -> list[dict[str, Any]]:
        """``attachments {}``: an in-memory attachment store keeping every image it is handed (the scenario's
        images are tokens, not rasters: nothing is decoded); its references carry a generated id."""
        references = []
        for image in images:
            identity = f"attachment-{len(self.issued)}"
            self.issued[identity] = {"mediaType": image.media_type, "bytes": len(image.data)}
            references.append({"attachmentId": identity, "mediaType": image.media_type, "bytes": len(image.data)})
        return references

    def _install_spill(self, max_bytes: int, fail: Mapping[str, Any] | None) -> None:
        """The generic spill policy, storing each spilled text in memory under ``spill/<callId>.txt``; with
        ``fail``, a store that raises (``raise``) or answers an awaitable that fails (``reject``) on the calls
        ``fail`` names, or on every call."""
        failing = None if fail is None or "calls" not in fail else {self.call_ids.get(n, n) for n in fail["calls"]}

        def keep(call_id: str, text: str) -> str:
            locator = f"spill/{call_id}.txt"
            self.spilled[locator] = text
            return locator

        async def reject(call_id: str) -> str:
            raise RuntimeError(f"spill store rejected {call_id}")

        def store(call_id: str, text: str) -> Any:
            if fail is None or (failing is not None and call_id not in failing):
                return keep(call_id, text)
            if fail["how"] == "raise":
                raise RuntimeError(f"spill store failed for {call_id}")
            return reject(call_id)

        install_spill(self.registry, max_bytes=max_bytes, store=store)
        install_dispatch_log_spill(self.code_mode, max_bytes=max_bytes, store=store)

    def _renderer(self, spec: Mapping[str, Any]) -> Callable[[Any, Any], Any]:
        kind = spec["kind"]
        if kind == "text":
            prefix = spec.get("prefix", "")
            return lambda args, value: [_text(prefix + _as_text(value))]
        if kind == "json":
            indent = spec.get("indent")
            return lambda args, value: [_text(canonical_json(value, indent))]
        if kind == "field":
            name, prefix = spec["name"], spec.get("prefix", "")
            return lambda args, value: [_text(prefix + _field_text(value, name))]
        if kind == "blocks":
            return lambda args, value: value
        if kind in ("constant", "exotic"):
            content = spec["content"]
            return lambda args, value: materialize(content)
        if kind == "raise":
            message = spec["message"]
            return lambda args, value: _raise(RuntimeError(message))
        if kind == "first-party":
            from toolcanon.renderers import FAMILIES  # the first-party renderers are loaded on first use

            return FAMILIES[spec["family"]].render
        if kind == "mutate-then":
            then = self._renderer(spec["then"])

            def mutate_then(args: Any, value: Any) -> Any:
                report = _text(canonical_json({"arguments": _mutability(args), "value": _mutability(value)}))
                content = then(args, value)
                return [report, *content] if isinstance(content, list) else content

            return mutate_then
        if kind == "keys":
            return lambda args, value: [_text(canonical_json(_keys_report(args, value)))]
        raise ValueError(f"unknown renderer kind {kind!r}")

    def _projector(self, spec: Mapping[str, Any]) -> Callable[[Any, Any], Any]:
        kind = spec["kind"]
        if kind == "not-callable":
            # the declaration's presentation_meta is this value itself, which define_tool wraps as it is
            return cast("Callable[[Any, Any], Any]", spec["value"])
        if kind == "value":
            return lambda args, value: value
        if kind == "wrap":
            key = spec["key"]
            return lambda args, value: {key: value}
        if kind in ("constant", "exotic"):
            constant = spec["value"]
            return lambda args, value: materialize(constant)
        if kind == "null":
            return lambda args, value: None
        if kind == "raise":
            message = spec["message"]
            return lambda args, value: _raise(RuntimeError(message))
        if kind == "mutate-then":
            then = self._projector(spec["then"])

            def mutate_then(args: Any, value: Any) -> Any:
                report = {"arguments": _mutability(args), "value": _mutability(value)}
                return {"seen": report, "meta": then(args, value)}

            return mutate_then
        raise NotExpressible(kind)

    def _finalizer(self, spec: Mapping[str, Any]) -> Callable[[ToolExecution, ToolResult], Any]:
        def finalize(run: ToolExecution, result: ToolResult) -> Any:
            self._phases(run).finalize += 1
            return self._finalize_as(spec, run, result)

        return finalize

    def _finalize_as(self, spec: Mapping[str, Any], run: ToolExecution, result: ToolResult) -> Any:
        kind = spec["kind"]
        if kind == "keep":
            return None
        if kind == "replace":
            return materialize(spec["content"])
        if kind == "truncate":
            return _truncate_first_text(result.content, spec["chars"])
        if kind == "mutate-then":
            self._report(run, "finalizeContent", arguments=run.arguments, **_result_parts(result, final=True))
            return self._finalize_as(spec["then"], run, result)
        raise RuntimeError(spec["message"])

    def _body(self, spec: Mapping[str, Any]) -> Callable[[Any, ToolExecution], Awaitable[Any]]:
        async def execute(args: Any, run: ToolExecution) -> Any:
            self._phases(run).body += 1
            return await self._perform(spec, args, run)

        return execute

    async def _perform(self, spec: Mapping[str, Any], args: Any, run: ToolExecution) -> Any:
        """One body behaviour; the chaining ones (``then``) go on with the next."""
        kind = spec["kind"]
        if kind == "return":
            return materialize(spec["value"])
        if kind == "return-arg":
            if isinstance(args, Mapping) and spec["arg"] in args:
                return args[spec["arg"]]
            return materialize(spec.get("default"))
        if kind == "raise":
            raise _error(spec)
        if kind == "defer":
            for context in spec["contexts"]:
                run.defer_context(context_message(context))
        elif kind == "conclude":
            run.conclude_turn()
        elif kind == "await-abort":
            if run.signal is not None:
                await run.signal.wait()
        elif kind == "abort-caller":
            self._abort_caller(run.call_id)
        elif kind == "program":
            return await self._run_program(spec, run)
        elif kind == "mutate-then":
            self._report(run, "body", arguments=args)
        elif kind == "abort-replacement":
            replacements = self.replacements.get(run.token)
            if replacements:
                replacements[-1].abort("replaced by a wrapper")
        elif kind == "report-signal":
            self.seen.setdefault(run.token, []).append({"at": "body", "signal": _signal_report(run.signal)})
        else:
            raise ValueError(f"unknown body kind {kind!r}")
        return await self._perform(spec["then"], args, run)

    # --- nested dispatch ---------------------------------------------------------------------------------

    async def _run_program(self, spec: Mapping[str, Any], outer: ToolExecution) -> Any:
        """A ``program`` body: its calls, in order, as nested calls through the code-mode bridge.

        The program honours its run signal as a code runtime does: once it is aborted while the program runs,
        the program stops at once (a call in flight is left to the bridge, and its entry is recorded when it
        settles) and the run fails as aborted, ``code run failed (abort): <the signal's reason>``.
        """
        entries: list[dict[str, Any]] = []
        self.nested[outer.token] = entries
        received: list[dict[str, Any]] = []
        in_flight: list[asyncio.Task[None]] = []

        async def receive(tools: Tools, call: Mapping[str, Any]) -> None:
            seen = len(self.observed)
            try:
                value = await tools.call(call["name"], materialize(call["arguments"]))
            except ToolCallError as error:
                got: dict[str, Any] = {"error": error.message}
            else:
                got = {"value": value}
            received.append(got)
            entry: dict[str, Any] = {"received": got}
            for run, result in self.observed[seen:]:
                if run.parent is outer.token:
                    entry["result"] = result_report(result, self.issued)
                    entry["phases"] = self._phases_report(run)
                    if run.token in self.seen:
                        entry["seen"] = self.seen[run.token]
            entries.append(entry)

        async def program(tools: Tools) -> Any:
            # an abort that came before the run is the bridge's to answer, call by call (S:nest-outer-aborted)
            aborted = None if tools.signal.aborted else asyncio.ensure_future(tools.signal.wait())
            try:
                for call in spec["calls"]:
                    receiving = asyncio.ensure_future(receive(tools, call))
                    if aborted is not None:
                        await asyncio.wait({receiving, aborted}, return_when=asyncio.FIRST_COMPLETED)
                        if aborted.done():
                            in_flight.append(receiving)
                            raise _RunAborted(tools.signal.reason)
                    await receiving
            finally:
                if aborted is not None:
                    aborted.cancel()
            return _program_result(spec.get("result"), received)

        ran = await self.code_mode.run(outer, program)
        for receiving in in_flight:
            await receiving
        if type(ran.error) is _RunAborted:
            raise CodeRunFailedError("abort", error_message(ran.error.reason))
        if ran.error is not None:
            raise ran.error
        return None if ran.result is ABSENT else ran.result

    async def _record_dispatch_event(self, event_type: str, data: Any) -> None:
        self.dispatch_events.setdefault(data["rootCallId"], []).append((event_type, data))
        if self.step_log is not None:
            self.step_log.append(event_type, data)

    # --- hooks ----------------------------------------------------------------------------------------

    def _phases(self, run: ToolExecution) -> Phases:
        return self.phases.setdefault(run.token, Phases())

    def _phases_report(self, run: ToolExecution) -> dict[str, int]:
        fixture = self.fixtures.get(run.name)
        return self._phases(run).report(fixture is not None and "finalizeContent" in fixture, self.bare)

    def _report(self, run: ToolExecution, at: str, **received: Any) -> None:
        """Record what a ``mutate-then`` behaviour found when it tried to mutate what it received."""
        report: dict[str, Any] = {"at": at}
        for name in ("arguments", "value", "content"):
            if name in received:
                report[name] = _mutability(received[name])
        self.seen.setdefault(run.token, []).append(report)

    def _install_instrumentation(self) -> None:
        """One pass-through hook per stage, installed before the scenario's hooks, hence outermost; none for the
        stages the scenario lists as ``bare``."""

        async def pre(run: ToolExecution, next_: Callable[[], Awaitable[Any]]) -> Any:
            self._phases(run).pre += 1
            return await next_()

        def guard(run: ToolExecution) -> None:
            self._phases(run).guard += 1

        async def around(run: ToolExecution, next_: Callable[[], Awaitable[Any]]) -> Any:
            self._phases(run).execute += 1
            return await next_()

        async def post(run: ToolExecution, result: ToolResult, next_: Callable[[], Awaitable[Any]]) -> Any:
            self._phases(run).post += 1
            return await next_()

        def observe(run: ToolExecution, result: ToolResult) -> None:
            self._phases(run).observed += 1
            self.observed.append((run, result))

        # a bare stage gets none: the registry then has no hook of it unless the scenario installs one
        if "pre" not in self.bare:
            self.registry.on_pre_execute(pre)
        if "guard" not in self.bare:
            self.registry.add_guard(guard)
        if "execute" not in self.bare:
            self.registry.on_execute(around)
        if "post" not in self.bare:
            self.registry.on_post_execute(post)
        self.registry.on_result(observe)

    def _install_hooks(self) -> None:
        for hook in self.scenario.get("hooks", ()):
            applies = self._filter(hook.get("steps"))
            action = hook["action"]
            stage = hook["stage"]
            if stage == "pre-execute":
                dispose = self.registry.on_pre_execute(self._pre_execute_hook(applies, action))
            elif stage == "guard":
                dispose = self.registry.add_guard(self._guard_hook(applies, action))
            elif stage == "execute":
                dispose = self.registry.on_execute(self._execute_hook(applies, action))
            elif stage == "post-execute":
                dispose = self.registry.on_post_execute(self._post_execute_hook(applies, action))
            else:
                dispose = self.registry.on_result(self._observer_hook(applies, action))
            self.hook_disposers.append(dispose)

    def _filter(self, names: list[str] | None) -> Callable[[ToolExecution], bool]:
        """A hook's step filter: a step id names that step's call; anything else is a (nested) call id."""
        if names is None:
            return lambda run: True
        call_ids = {self.call_ids.get(name, name) for name in names}
        return lambda run: run.call_id in call_ids

    def _pre_execute_hook(self, applies: Callable[[ToolExecution], bool], action: Mapping[str, Any]) -> Any:
        async def listener(run: ToolExecution, next_: Callable[[], Awaitable[Any]]) -> Any:
            if not applies(run):
                return await next_()
            return self._pre_execute_decision(action, run)

        return listener

    def _pre_execute_decision(self, action: Mapping[str, Any], run: ToolExecution) -> Any:
        kind = action["kind"]
        if kind == "allow":
            return Allow()
        if kind == "deny":
            return Deny(materialize(action["reason"]))
        if kind == "ask":
            self.asking[run.call_id] = run.token
            return Ask(action.get("reason"))
        if kind == "abort-caller":
            self._abort_caller(run.call_id)
            return self._pre_execute_decision(action["then"], run)
        if kind == "mutate-then":
            self._report(run, "pre-execute", arguments=run.arguments)
            return self._pre_execute_decision(action["then"], run)
        raise _error(action)

    def _guard_hook(self, applies: Callable[[ToolExecution], bool], action: Mapping[str, Any]) -> Any:
        def guard(run: ToolExecution) -> Any:
            return self._guard_reason(action, run) if applies(run) else None

        return guard

    def _guard_reason(self, action: Mapping[str, Any], run: ToolExecution) -> Any:
        kind = action["kind"]
        if kind == "pass":
            return None
        if kind == "deny":
            return materialize(action["reason"])
        if kind == "mutate-then":
            self._report(run, "guard", arguments=run.arguments)
            return self._guard_reason(action["then"], run)
        raise _error(action)

    def _execute_hook(self, applies: Callable[[ToolExecution], bool], action: Mapping[str, Any]) -> Any:
        async def wrapper(run: ToolExecution, next_: Callable[[], Awaitable[Any]]) -> Any:
            if not applies(run):
                return await next_()
            return await self._around(action, run, next_)

        return wrapper

    async def _around(self, action: Mapping[str, Any], run: ToolExecution, next_: Callable[[], Awaitable[Any]]) -> Any:
        kind = action["kind"]
        if kind == "passthrough":
            return await next_()
        if kind == "short-circuit-success":
            return ToolSuccess(
                materialize(action["value"]),
                materialize(action.get("content", [])),
                materialize(action["meta"]) if "meta" in action else ABSENT,
                _contexts_or_absent(action),
            )
        if kind == "short-circuit-failure":
            error = action["error"]
            info = ErrorInfo(error["info"]["name"], error["info"]["code"]) if "info" in error else None
            return ToolFailure(
                ToolError(error["message"], info),
                materialize(action["content"]),
                materialize(action["meta"]) if "meta" in action else ABSENT,
                _contexts_or_absent(action),
            )
        if kind == "return-result-of":
            return self.results[action["step"]]
        if kind == "look-alike":
            copied = self.results[action["step"]] if "step" in action else await next_()
            return _look_alike(copied, materialize(action["content"]) if "content" in action else copied.content)
        if kind == "spread":
            result = await next_()
            own = [] if result.additional_contexts is ABSENT else list(result.additional_contexts)
            return replace(result, additional_contexts=own + _contexts(action))
        if kind == "replace-signal-aborted":
            replaced = AbortController()
            later = action.get("later") is True
            if later:  # aborted only when the body asks for it (abort-replacement)
                self.replacements.setdefault(run.token, []).append(replaced)
            else:
                replaced.abort("replaced by a wrapper")
            saved = run.signal
            run.signal = replaced.signal
            try:
                return await next_()
            finally:
                run.signal = saved
                if later:
                    self.replacements[run.token].remove(replaced)
        if kind == "abort-caller-after-next":
            result = await next_()
            self._abort_caller(run.call_id)
            return result
        if kind == "dispose-tool-then":
            self._dispose(run.name)
            return await self._around(action["then"], run, next_)
        if kind == "cache":
            kept = self.caches.setdefault(id(action), {})
            key = (run.call_id, run.name, canonical_json(run.arguments))
            if key not in kept:
                kept[key] = await next_()
            return kept[key]
        if kind == "mutate-then":
            self._report(run, "execute", arguments=run.arguments)

            async def reported() -> Any:
                result = await next_()
                self._report(run, "next", **_result_parts(result))
                return result

            return await self._around(action["then"], run, reported)
        raise _error(action)

    def _post_execute_hook(self, applies: Callable[[ToolExecution], bool], action: Mapping[str, Any]) -> Any:
        async def listener(run: ToolExecution, result: ToolResult, next_: Callable[[], Awaitable[Any]]) -> Any:
            if not applies(run):
                return await next_()
            return self._post_execute_decision(action, run, result)

        return listener

    def _post_execute_decision(self, action: Mapping[str, Any], run: ToolExecution, result: ToolResult) -> Any:
        kind = action["kind"]
        if kind == "accept":
            return Accept(additional_contexts=_contexts_or_absent(action))
        if kind == "accept-content":
            return Accept(content=materialize(action["content"]), additional_contexts=_contexts_or_absent(action))
        if kind == "accept-value":
            return Accept(value=materialize(action["value"]), additional_contexts=_contexts_or_absent(action))
        if kind == "accept-both":
            return Accept(content=materialize(action["content"]), value=materialize(action["value"]))
        if kind == "block":
            return Block(materialize(action["feedback"]), additional_contexts=_contexts_or_absent(action))
        if kind == "abort-caller":
            self._abort_caller(run.call_id)
            return self._post_execute_decision(action["then"], run, result)
        if kind == "dispose-tool-then":
            self._dispose(run.name)
            return self._post_execute_decision(action["then"], run, result)
        if kind == "mutate-then":
            self._report(run, "post-execute", arguments=run.arguments, **_result_parts(result))
            return self._post_execute_decision(action["then"], run, result)
        if kind == "report-signal":
            self.seen.setdefault(run.token, []).append({"at": "post-execute", "signal": _signal_report(run.signal)})
            return self._post_execute_decision(action["then"], run, result)
        raise _error(action)

    def _observer_hook(self, applies: Callable[[ToolExecution], bool], action: Mapping[str, Any]) -> Any:
        def observer(run: ToolExecution, result: ToolResult) -> Awaitable[None] | None:
            if not applies(run):
                return None
            return self._observe(action, run, result)

        return observer

    def _observe(self, action: Mapping[str, Any], run: ToolExecution, result: ToolResult) -> Awaitable[None] | None:
        if action["kind"] == "mutate":
            self._report(run, "result-observer", arguments=run.arguments, **_result_parts(result, final=True))
            return None
        if action["kind"] == "later":

            async def settle() -> None:
                settled = self._observe(action["then"], run, result)
                if settled is not None:
                    await settled

            return settle()
        raise _error(action)

    def _approval(self, spec: Mapping[str, Any]) -> Callable[[ApprovalRequest], str]:
        def approve(request: ApprovalRequest) -> str:
            if spec.get("abortCaller"):
                self._abort_caller(request.call_id)
            if spec.get("report") is True:
                self._report_approval(request)
            outcome: str = spec["outcome"]
            return outcome

        return approve

    def _report_approval(self, request: ApprovalRequest) -> None:
        """Record, in the asked call's ``seen``, what the approval service was asked and the signal it was handed."""
        asked = {
            "agent": request.agent if isinstance(request.agent, str) else None,
            "toolName": request.tool_name if isinstance(request.tool_name, str) else None,
            "callId": request.call_id if isinstance(request.call_id, str) else None,
            "reason": request.reason if isinstance(request.reason, str) else None,
        }
        report = {"at": "approval", "request": asked, "signal": _signal_report(request.signal)}
        if request.call_id in self.asking:
            self.seen.setdefault(self.asking[request.call_id], []).append(report)

    def _abort_caller(self, call_id: str) -> None:
        """Abort the caller's signal: a direct call's own; a nested call's caller is its program's caller, so
        the outer call's signal (which the run signal follows)."""
        while call_id not in self.controllers:
            nested = _NESTED_CALL_ID.match(call_id)
            if nested is None:
                return
            call_id = nested.group("outer")
        self.controllers[call_id].abort("aborted by the caller")

    def _dispose(self, name: str) -> None:
        dispose = self.disposers.get(name)
        if dispose is not None:
            dispose()

    # --- steps ----------------------------------------------------------------------------------------

    async def _run_step(self, step: Mapping[str, Any]) -> Any:
        if "call" in step:
            return await self._call(step)
        if "probe" in step:
            return {"frozen": self._probe(step["probe"])}
        if "persist" in step:
            try:
                return self._persist(step["id"], step["persist"])
            except Exception as error:
                return {"error": {"name": contract_error_name(error), "message": error_message(error)}}
        if "modelStep" in step:
            return await self._model_step(step)
        if "replay" in step:
            if "damage" in step["replay"]:
                return self._replay_damaged(step["replay"]["persist"], step["replay"]["damage"])
            return self._replay(step["replay"]["persist"])
        if "executionMode" in step:
            spec = step["executionMode"]
            return {"mode": self.registry.execution_mode(spec["name"], materialize(spec["arguments"]))}
        if "removeHook" in step:
            self.hook_disposers[step["removeHook"]["hook"]]()
            return {"removed": True}
        if "reopen" in step:
            try:
                return self._reopen(step["id"], step["reopen"])
            except (InvalidEventError, SessionDataError) as error:
                return {"error": {"name": contract_error_name(error), "message": error_message(error)}}
        return self._schemas()

    async def _call(self, step: Mapping[str, Any]) -> dict[str, Any]:
        spec = step["call"]
        call_id = spec.get("callId", step["id"])
        controller = AbortController()
        self.controllers[call_id] = controller
        if step.get("abort") == "before":
            controller.abort("aborted before the call")
        call = Call(
            call_id, spec["name"], materialize(spec["arguments"]), signal=controller.signal, agent=spec.get("agent")
        )
        result = await self.registry.execute(call)
        await asyncio.sleep(0)  # the observers that settle later run before the step is reported
        run = next(run for run, observed in reversed(self.observed) if observed is result)
        self.results[step["id"]] = result
        self.runs[step["id"]] = run
        report: dict[str, Any] = {"result": result_report(result, self.issued), "phases": self._phases_report(run)}
        if run.token in self.nested:
            report["nested"] = self.nested[run.token]
        if run.token in self.seen:
            report["seen"] = self.seen[run.token]
        return report

    def _probe(self, spec: Mapping[str, Any]) -> bool | None:
        result, run = self.results[spec["step"]], self.runs[spec["step"]]
        target = spec["target"]
        if target == "arguments":
            node: Any = run.arguments
        elif target == "content":
            node = result.content
        else:
            node = result.value if isinstance(result, ToolSuccess) else _MISSING
        for element in spec["path"]:
            node = _child(node, element)
        if not isinstance(node, dict | list):
            return None
        return _resists_every_mutation(node)

    def _persist(self, persist_id: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        """Append the durable events of some calls to a fresh session log, as an agent loop would."""
        path = self.workdir.path() / f"{len(self.logs)}.jsonl"
        self.logs[persist_id] = path
        with SessionLog.open(path) as log:
            self._append_calls(log, spec["steps"], spec.get("rawArguments", {}))
        outcome: dict[str, Any] = {"events": self._logged_events(path)}
        if spec.get("bytes") is True:
            outcome["lines"] = [self._stable_text(text) for text in _data_texts(path.read_bytes())]
        return outcome

    def _append_calls(self, log: SessionLog, step_ids: list[str], raw_arguments: Mapping[str, str]) -> None:
        """The durable events of some call steps, as an agent loop appends them, all at turn 1, step 1."""
        for step_id in step_ids:
            call = self.steps[step_id]["call"]
            call_id = self.call_ids[step_id]
            raw = raw_arguments.get(step_id, canonical_json(call["arguments"]))
            log.append_tool_call(turn=1, step=1, call_id=call_id, name=call["name"], arguments=raw)
            for event_type, data in self.dispatch_events.get(call_id, ()):
                log.append(event_type, data)
            message_id = str(uuid.uuid4())
            self.message_ids[message_id] = f"{call_id}:result"
            log.append_tool_result(turn=1, step=1, call_id=call_id, result=self.results[step_id], message_id=message_id)

    def _reopen(self, reopen_id: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        """Reopen a copy of a log (damaged first) for appending, as a resumed session does, and append the durable
        events of some call steps: the messages derived from the log then, with the torn line the reopening cut
        off, or the line the reader refused (nothing is appended to a log it refuses)."""
        source = self.logs[spec["persist"]]
        reopened = source.with_name(f"{source.stem}-{len(self.damaged)}-reopened.jsonl")
        self.damaged.append(reopened)
        data = source.read_bytes()
        reopened.write_bytes(_damage(data, spec["damage"]) if "damage" in spec else data)
        self.logs[reopen_id] = reopened  # a later step may name it, refused or not
        try:
            log = SessionLog.open(reopened)
        except MalformedLogError as malformed:
            return {"refused": {"line": malformed.line}}
        with log:
            self._append_calls(log, spec["steps"], {})
        try:
            replayed = replay(reopened)
        except MalformedLogError as malformed:  # what was appended made the log one the reader refuses
            return {"refused": {"line": malformed.line}}
        outcome: dict[str, Any] = {}
        if log.repaired is not None:
            outcome["repaired"] = {"line": log.repaired.line}
        outcome["messages"] = [self._stable_message(message) for message in replayed.messages]
        return outcome

    async def _model_step(self, step: Mapping[str, Any]) -> dict[str, Any]:
        """Run a model's tool calls through the agent-loop step, on a fresh session log, sharing one signal."""
        spec = step["modelStep"]
        calls = [ModelToolCall(call["callId"], call["name"], call["arguments"]) for call in spec["calls"]]
        controller = AbortController()
        for call in calls:
            self.controllers[call.call_id] = controller
        if step.get("abort") == "before":
            controller.abort("aborted before the call")
        path = self.workdir.path() / f"{len(self.logs)}.jsonl"
        self.logs[step["id"]] = path

        def message_id(call_id: str) -> str:
            generated = str(uuid.uuid4())
            self.message_ids[generated] = f"{call_id}:result"
            return generated

        with SessionLog.open(path) as log:
            self.step_log = log
            try:
                outcome = await run_tool_calls(
                    self.registry,
                    log,
                    calls,
                    turn=1,
                    step=1,
                    agent=spec.get("agent"),
                    signal=controller.signal,
                    message_id=message_id,
                )
            finally:
                self.step_log = None
        return {
            "events": self._logged_events(path),
            "contexts": [context_report(context) for context in outcome.additional_contexts],
            "concludesTurn": outcome.concludes_turn,
        }

    def _logged_events(self, path: Path) -> list[dict[str, Any]]:
        """Each event of a log as it is read back: its type and data, generated message ids made stable."""
        return [{"type": event.type, "data": self._stable_ids(event.data)} for event in replay(path).events]

    def _stable_text(self, text: str) -> str:
        """A line's data text with each generated message id's literal replaced by ``"<callId>:result"``'s."""
        for generated, stable in self.message_ids.items():
            text = text.replace(canonical_json(generated), canonical_json(stable))
        return text

    def _replay_damaged(self, persist_id: str, damage: Mapping[str, Any]) -> dict[str, Any]:
        """Replay a damaged copy of a persisted log: its messages, the torn line it skipped, or the line it refused."""
        source = self.logs[persist_id]
        damaged = source.with_name(f"{source.stem}-{len(self.damaged)}-damaged.jsonl")
        self.damaged.append(damaged)
        damaged.write_bytes(_damage(source.read_bytes(), damage))
        try:
            replayed = replay(damaged)
        except MalformedLogError as malformed:
            return {"refused": {"line": malformed.line}}
        outcome: dict[str, Any] = {"messages": [self._stable_message(message) for message in replayed.messages]}
        if replayed.torn is not None:
            outcome["torn"] = {"line": replayed.torn.line}
        return outcome

    def _replay(self, persist_id: str) -> dict[str, Any]:
        """The messages derived from a log alone; a log the reader refuses (a reopened one may be) answers the line."""
        try:
            replayed = replay(self.logs[persist_id])
        except MalformedLogError as malformed:
            return {"refused": {"line": malformed.line}}
        return {"messages": [self._stable_message(message) for message in replayed.messages]}

    def _stable_ids(self, data: Any) -> Any:
        if isinstance(data, Mapping) and "message" in data:
            data = thaw(data)
            data["message"] = self._stable_message(data["message"])
        return data

    def _stable_message(self, message: Any) -> Any:
        if isinstance(message, Mapping) and message.get("id") in self.message_ids:
            message = thaw(message)
            message["id"] = self.message_ids[message["id"]]
        return message

    def _schemas(self) -> dict[str, Any]:
        try:
            return {"schemas": self.registry.schemas()}
        except Exception as error:
            return {"error": {"name": contract_error_name(error), "message": error_message(error)}}


# --- small helpers -----------------------------------------------------------------------------------


def _signal_report(signal: Any) -> dict[str, Any]:
    """A signal as a ``seen`` report shows it: whether it was aborted, and its reason when that is a string."""
    aborted = signal is not None and signal.aborted
    reason = signal.reason if aborted and isinstance(signal.reason, str) else None
    return {"aborted": aborted, "reason": reason}


class _RunAborted(Exception):
    """A scenario program stopped because its run signal was aborted while it ran."""

    def __init__(self, reason: object) -> None:
        super().__init__("the run signal was aborted")
        self.reason = reason


_MISSING: Final[Any] = object()


def _concurrency_check(spec: Mapping[str, Any]) -> Callable[[Any], Any]:
    """A fixture's ``isConcurrencySafe``: a constant answer, one of its arguments, or a raise."""

    def check(arguments: Any) -> Any:
        if spec["kind"] == "raise":
            raise _error(spec)
        if spec["kind"] == "return-arg":
            return arguments.get(spec["arg"]) if isinstance(arguments, Mapping) else None
        return materialize(spec["value"])

    return check


def _data_texts(log: bytes) -> list[str]:
    """Each line's ``data`` member as the log's own text: a line is ``{"seq":n,"type":t,"data":<text>}``."""
    texts = []
    for seq, line in enumerate(log.decode("utf-8").split("\n")[:-1], start=1):  # not splitlines: U+2028 is text
        event_type = json.loads(line)["type"]
        head = canonical_json({"seq": seq, "type": event_type})[:-1] + ',"data":'
        if not (line.startswith(head) and line.endswith("}")):
            raise ValueError(f"log line {seq} is not the canonical envelope {head}…}}: {line!r}")
        texts.append(line[len(head) : -1])
    return texts


def _damage(log: bytes, damage: Mapping[str, Any]) -> bytes:
    """A log's bytes damaged as a ``replay`` step's ``damage`` says (lines counted from 1)."""
    lines = log.split(b"\n")[:-1]
    how, index = damage["how"], damage.get("line", 1) - 1
    if how != "append" and not 0 <= index < len(lines) - (how == "reorder"):
        raise ValueError(f"damage {how!r} names line {index + 1} of a log of {len(lines)} lines")
    tail = b""
    if how == "torn-last-line":
        last = lines.pop()
        tail = last[: len(last) // 2]
    elif how == "malformed-line":
        lines[index] = b"not json"
    elif how == "drop":
        del lines[index]
    elif how == "duplicate":
        lines.insert(index, lines[index])
    elif how == "reorder":
        lines[index], lines[index + 1] = lines[index + 1], lines[index]
    else:
        for event in damage["events"]:
            written = {"seq": len(lines) + 1, "type": event["type"], "data": event["data"]}
            if "ignorable" in event:
                written["ignorable"] = event["ignorable"]
            lines.append(canonical_json(written).encode("utf-8"))
    return b"".join(line + b"\n" for line in lines) + tail


_ARRAY_INDEX: Final = re.compile(r"0|[1-9][0-9]*")


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else canonical_json(value)


def _field_text(value: Any, name: str) -> str:
    """``value[name]`` as text (canonical JSON unless a string); ``""`` when the value has no such field."""
    field = _child(value, name if isinstance(value, dict) else _index(name))
    return "" if field is _MISSING else _as_text(field)


def _index(name: str) -> int | str:
    return int(name) if _ARRAY_INDEX.fullmatch(name) else name


def _child(node: Any, element: Any) -> Any:
    if isinstance(node, dict) and isinstance(element, str) and element in node:
        return node[element]
    if isinstance(node, list) and type(element) is int and 0 <= element < len(node):
        return node[element]
    return _MISSING


def _raise(error: BaseException) -> Any:
    raise error


def _error(spec: Mapping[str, Any]) -> Exception:
    """A ``raise`` behaviour's error: the coded error class when ``error`` is given, else an ordinary one, which
    carries ``code`` as an attribute when given (as a system error does): still no coded error."""
    if "error" in spec:
        return HarnessError(spec["message"], spec["error"]["code"], name=spec["error"]["name"])
    error = RuntimeError(spec["message"])
    if "code" in spec:
        error.code = spec["code"]  # type: ignore[attr-defined]
    return error


def _contexts(action: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [context_message(context) for context in action.get("additionalContexts", ())]


def _contexts_or_absent(action: Mapping[str, Any]) -> Any:
    return _contexts(action) if "additionalContexts" in action else ABSENT


def _look_alike(result: ToolResult, content: Any) -> ToolResult:
    """A new result holding the very fields of ``result`` but ``content``: one of the result classes, every field
    right, but not an object the registry built."""
    if isinstance(result, ToolSuccess):
        return ToolSuccess(result.value, content, result.meta, result.additional_contexts, result.concludes_turn)
    return ToolFailure(result.error, content, result.meta, result.additional_contexts)


def _truncate_first_text(content: Any, chars: int) -> Any:
    """The content with its first text block cut to ``chars`` UTF-16 code units (``None``: nothing to cut, as for
    content that is no list)."""
    if not isinstance(content, list):
        return None
    blocks = list(content)
    for position, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            units = block["text"].encode("utf-16-le", "surrogatepass")[: 2 * chars]
            blocks[position] = {**block, "text": units.decode("utf-16-le", "surrogatepass")}
            return blocks
    return None


def _program_result(selector: Any, received: list[dict[str, Any]]) -> Any:
    """What a program returns: ``"received"``, ``"last"``, an index into what it received, or ``None``."""
    if selector == "received":
        return received
    if selector == "last":
        chosen = received[-1] if received else {}
    elif type(selector) is int and selector < len(received):
        chosen = received[selector]
    else:
        return None
    return chosen.get("value")


def _mutability(node: Any) -> str:
    """What a ``mutate-then`` behaviour reports of what it received: ``frozen`` when every mutation attempt
    failed and the data is unchanged, ``mutable`` otherwise, ``scalar`` for a scalar, ``absent`` for nothing."""
    if node is _MISSING:
        return "absent"
    if isinstance(node, dict | list):
        return "frozen" if _resists_every_mutation(node) else "mutable"
    return "scalar"


def _key_order(node: Any) -> Any:
    """The keys of ``node`` as iterated: ``[key, _key_order(child)]`` per key of an object, ``_key_order(item)``
    per item of an array, ``None`` for a scalar; without recursion, so a value of any depth is reported."""
    root: list[Any] = [None]
    pending: list[tuple[Any, list[Any], int]] = [(node, root, 0)]
    while pending:
        current, parent, slot = pending.pop()
        if isinstance(current, dict):
            pairs = [[key, None] for key in current]
            pending.extend((child, pair, 1) for pair, child in zip(pairs, current.values(), strict=True))
            parent[slot] = pairs
        elif isinstance(current, list):
            items: list[Any] = [None] * len(current)
            pending.extend((item, items, index) for index, item in enumerate(current))
            parent[slot] = items
    return root[0]


def _keys_report(args: Any, value: Any) -> dict[str, Any]:
    return {"arguments": _key_order(args), "value": _key_order(value)}


def _result_parts(result: ToolResult, *, final: bool = False) -> dict[str, Any]:
    """A result's value and content, as a ``mutate-then`` behaviour reports them: a failure has no value, and
    before the final result its content is not tried either (the contract leaves its freezing open)."""
    if isinstance(result, ToolSuccess):
        return {"value": result.value, "content": result.content}
    return {"value": _MISSING, "content": result.content if final else _MISSING}


def _resists_every_mutation(container: dict[str, Any] | list[Any]) -> bool:
    """Try every public mutation on ``container``: true when each one raised and nothing changed."""
    before = canonical_json(container)
    for mutate in _mutations(container):
        try:
            mutate()
        except Exception:
            continue
        return False
    return canonical_json(container) == before


def _mutations(container: dict[str, Any] | list[Any]) -> list[Callable[[], Any]]:
    def set_attribute() -> None:
        container.probe = 1  # type: ignore[union-attr]

    if isinstance(container, dict):
        mapping = container
        key = next(iter(mapping), "probe")

        def merge_in_place() -> None:
            nonlocal mapping
            mapping |= {"probe": 1}

        return [
            lambda: mapping.__setitem__("probe", 1),
            lambda: mapping.__setitem__(key, None),
            lambda: mapping.__delitem__(key),
            lambda: mapping.update({"probe": 1}),
            lambda: mapping.pop(key),
            mapping.popitem,
            mapping.clear,
            lambda: mapping.setdefault("probe", 1),
            merge_in_place,
            set_attribute,
        ]
    sequence = container

    def extend_in_place() -> None:
        nonlocal sequence
        sequence += [1]

    def repeat_in_place() -> None:
        nonlocal sequence
        sequence *= 2

    return [
        lambda: sequence.__setitem__(0, None) if sequence else sequence.__setitem__(slice(0, 0), [1]),
        lambda: sequence.__delitem__(0),
        lambda: sequence.append(1),
        lambda: sequence.extend([1]),
        lambda: sequence.insert(0, 1),
        sequence.pop,
        lambda: sequence.remove(sequence[0] if sequence else None),
        sequence.clear,
        sequence.sort,
        sequence.reverse,
        extend_in_place,
        repeat_in_place,
        set_attribute,
    ]


if __name__ == "__main__":
    from toolcanon_conformance.protocol import serve

    raise SystemExit(serve(implementation))
