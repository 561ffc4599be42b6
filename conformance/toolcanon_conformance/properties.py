"""Property-based and stateful conformance: generated scenarios sent to the implementation under test.

The scenario suite checks an implementation on the cases someone wrote down; this module checks it on cases
hypothesis draws (:func:`toolcanon_conformance.strategies.scenarios`), through the same
:class:`~toolcanon_conformance.implementation.Implementation` interface, so any adapter (in-process or a
subprocess in another language) can be checked this way:

- :func:`check_differential` — the implementation's transcript of every generated scenario equals the
  reference's, byte for byte;
- :func:`check_invariants` — properties that need no reference, judged on the implementation's transcript
  alone (:func:`invariant_violations`): the value never reaches the log, replay equals live, what is handed
  out frozen is frozen, a failure never has a value;
- :func:`conformance_machine` — a hypothesis state machine that builds a scenario rule by rule (register a
  tool, add a hook, call, probe, persist, replay) and after every rule runs the scenario so far on the
  implementation and on the reference, comparing transcripts and checking the invariants.

A failure is a :class:`ConformanceFailure` (an ``AssertionError``) carrying the shrunk scenario as canonical JSON,
ready to be saved as a regression scenario, and, for a differential failure, the first differing JSON path.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

from hypothesis import HealthCheck, given
from hypothesis import settings as Settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from hypothesis.strategies import SearchStrategy

from toolcanon import canonical_json
from toolcanon_conformance.adapters import reference as reference_adapter
from toolcanon_conformance.diff import Difference, Path, compare, format_path
from toolcanon_conformance.generate import expand
from toolcanon_conformance.implementation import Errored, Implementation, Outcome, Ran, Skipped
from toolcanon_conformance.scenario import iter_exotic_tags
from toolcanon_conformance.strategies import (
    CANARY,
    REFERENCE_EXOTIC_KINDS,
    SCENARIO_CAPABILITIES,
    ScenarioBuilder,
    scenarios,
)

__all__ = [
    "FAILURE_KINDS",
    "ConformanceFailure",
    "ImplementationPair",
    "ReferenceFailure",
    "assert_invariants",
    "assert_same_transcript",
    "check_differential",
    "check_invariants",
    "conformance_machine",
    "default_settings",
    "invariant_violations",
]


class ConformanceFailure(AssertionError):
    """A generated scenario on which the implementation under test misbehaves.

    ``scenario`` is the scenario document, ``scenario_json`` its canonical JSON text (save it as
    ``fixtures/scenarios/<new id>.json``, with that id, to keep it as a regression scenario), ``difference``
    the first place where the transcript differs from the reference's (differential failures), and
    ``violations`` the broken invariants, each starting with its JSON path in the transcript. ``kind`` says
    which of :data:`FAILURE_KINDS` it is, and ``context`` is the errored outcome's context (``errored``). A
    differential failure also keeps every difference (``differences``, the first being ``difference``) and both
    transcripts (``transcripts``: the reference's, then the implementation's), so that a known disagreement can be
    told from a new one by all it shows (:mod:`toolcanon_conformance.known`).
    """

    def __init__(
        self,
        reason: str,
        scenario: Mapping[str, Any],
        *,
        difference: Difference | None = None,
        violations: Sequence[str] = (),
        kind: str | None = None,
        context: Mapping[str, Any] | None = None,
        differences: Sequence[Difference] = (),
        transcripts: tuple[str, str] | None = None,
    ) -> None:
        self.reason = reason
        self.scenario = dict(scenario)
        self.difference = difference
        self.differences = tuple(differences) if differences else (() if difference is None else (difference,))
        self.transcripts = transcripts
        self.violations = tuple(violations)
        self.kind = kind if kind is not None else ("invariant" if violations else "differs")
        self.context = dict(context) if context is not None else {}
        self.scenario_json = canonical_json(self.scenario, 2)
        lines = [reason]
        if difference is not None:
            lines.append(f"first difference (expected: the reference; actual: the implementation):\n{difference}")
        lines.extend(f"- {violation}" for violation in self.violations)
        lines.append("the scenario (canonical JSON; give it a new id to keep it as a regression scenario):")
        lines.append(self.scenario_json)
        super().__init__("\n".join(lines))


FAILURE_KINDS: Final = ("differs", "invariant", "errored", "skipped", "invalid-outcome")
"""What a :class:`ConformanceFailure` is about: a transcript that differs from the reference's, a broken
invariant, an implementation that errored (crashed, hung, raised), skipped, or answered no outcome at all."""


class ReferenceFailure(RuntimeError):
    """The reference did not run a generated scenario: generated scenarios stay within what it runs, so this is
    a bug of the kit or of the reference given (``outcome`` is what it answered), never of the implementation."""

    def __init__(self, outcome: Outcome, scenario: Mapping[str, Any]) -> None:
        super().__init__(f"the reference did not run a generated scenario: {outcome!r}")
        self.outcome = outcome
        self.scenario = dict(scenario)


def default_settings(max_examples: int = 50) -> Settings:
    """The hypothesis settings of the checks: ``max_examples``, no deadline (an adapter may be a slow
    subprocess), no example database, one bug reported (the first found, shrunk)."""
    return Settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        report_multiple_bugs=False,
        suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much),
    )


# --- running scenarios on both sides --------------------------------------------------------------------


class ImplementationPair:
    """The implementation under test and the reference, started on first use, run with increasing ``seq``.

    ``reference`` defaults to the bundled one. With ``concurrent``, :meth:`check` runs the implementation in a
    worker thread while the reference runs in the caller's: worth it when the implementation is another
    process (a :class:`~toolcanon_conformance.adapters.subprocess.Subprocess` waits without holding the
    interpreter), and no gain for an implementation in this process.
    """

    def __init__(
        self, implementation: Implementation, reference: Implementation | None = None, *, concurrent: bool = False
    ) -> None:
        self.implementation = implementation
        self.reference = reference if reference is not None else reference_adapter.implementation
        self.concurrent = concurrent
        self.seq = 0
        self.capabilities: frozenset[str] | None = None
        #: The side being started while :meth:`start` runs (still set when its ``start`` raised).
        self.starting: Implementation | None = None
        self._worker: ThreadPoolExecutor | None = None

    def start(self) -> frozenset[str]:
        """Start both (once); the optional capabilities generated scenarios may use: those both declare.

        Raises what the implementation's or the reference's ``start`` raises (an
        :class:`~toolcanon_conformance.exceptions.AdapterError` for the kit's adapters); when the reference
        fails to start, the implementation is stopped again.
        """
        if self.capabilities is None:
            self.starting = self.implementation
            declared = set(self.implementation.start().capabilities)
            self.starting = self.reference
            try:
                declared &= set(self.reference.start().capabilities)
            except BaseException:
                self.implementation.stop()
                raise
            self.starting = None
            self.capabilities = frozenset(capability for capability in SCENARIO_CAPABILITIES if capability in declared)
            if self.concurrent:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolcanon-implementation")
        return self.capabilities

    def stop(self) -> None:
        """Stop both (when started)."""
        if self.capabilities is not None:
            self.capabilities = None
            if self._worker is not None:
                self._worker.shutdown(wait=False, cancel_futures=True)
                self._worker = None
            self.implementation.stop()
            self.reference.stop()

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    @staticmethod
    def _run(implementation: Implementation, seq: int, scenario: dict[str, Any]) -> Outcome:
        # Each side gets its own copy: what one implementation does to the document cannot reach the other.
        return implementation.run(seq, _copied(scenario))

    def transcript(self, scenario: dict[str, Any]) -> str:
        """The implementation's transcript, or a :class:`ConformanceFailure` when it has none."""
        return _transcript_of(self._run(self.implementation, self._next_seq(), scenario), scenario)

    def reference_transcript(self, scenario: dict[str, Any]) -> str:
        """The reference's transcript; a :class:`ReferenceFailure` when it has none."""
        outcome = self._run(self.reference, self._next_seq(), scenario)
        if not isinstance(outcome, Ran):
            raise ReferenceFailure(outcome, scenario)
        return outcome.transcript

    def check(self, scenario: dict[str, Any], *, differential: bool, invariants: bool) -> str:
        """Run the scenario and check it; return the implementation's transcript."""
        worker = self._worker
        if differential and worker is not None:
            running = worker.submit(self._run, self.implementation, self._next_seq(), scenario)
            expected = self.reference_transcript(scenario)
            actual = _transcript_of(running.result(), scenario)
        else:
            actual = self.transcript(scenario)
            expected = self.reference_transcript(scenario) if differential else ""
        if differential:
            assert_same_transcript(expected, actual, scenario)
        if invariants:
            assert_invariants(scenario, actual)
        return actual


def _copied(value: Any) -> Any:
    """A copy of scenario data (JSON objects, arrays and scalars); anything else is deep-copied."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if value is None or isinstance(value, str | int | float):
        return value
    return copy.deepcopy(value)


def _transcript_of(outcome: Outcome, scenario: Mapping[str, Any]) -> str:
    if isinstance(outcome, Ran):
        return outcome.transcript
    if isinstance(outcome, Skipped):
        raise ConformanceFailure(
            f"the implementation skipped a scenario within its declared capabilities: {outcome.message} "
            "(restrict the exotic kinds it is given if its language cannot express one)",
            scenario,
            kind="skipped",
        )
    if isinstance(outcome, Errored):
        message = outcome.context.get("message", "no message")
        raise ConformanceFailure(
            f"the implementation errored: {message}\ncontext: {outcome.context!r}",
            scenario,
            kind="errored",
            context=outcome.context,
        )
    raise ConformanceFailure(
        f"the implementation answered {outcome!r}, not an outcome", scenario, kind="invalid-outcome"
    )


def assert_same_transcript(expected: str, actual: str, scenario: Mapping[str, Any]) -> None:
    """Raise :class:`ConformanceFailure` unless ``actual`` is byte for byte the reference's ``expected``."""
    if actual == expected:
        return
    differences = compare(_utf8(expected), _utf8(actual))
    raise ConformanceFailure(
        "the transcript differs from the reference's",
        scenario,
        difference=differences[0] if differences else None,
        differences=differences,
        transcripts=(expected, actual),
    )


def assert_invariants(scenario: Mapping[str, Any], transcript: str) -> None:
    """Raise :class:`ConformanceFailure` when :func:`invariant_violations` finds any."""
    violations = invariant_violations(scenario, transcript)
    if violations:
        raise ConformanceFailure("the transcript breaks an invariant of the contract", scenario, violations=violations)


def _utf8(text: str) -> bytes:
    # A broken implementation may answer a lone surrogate: still show where it differs.
    return text.encode("utf-8", "surrogatepass")


# --- the checks -----------------------------------------------------------------------------------------


def _kinds_for_reference(exotic_kinds: Iterable[str] | None) -> tuple[str, ...]:
    """The exotic kinds to draw: those asked for that the reference can express too."""
    if exotic_kinds is None:
        return REFERENCE_EXOTIC_KINDS
    asked = set(exotic_kinds)
    return tuple(kind for kind in REFERENCE_EXOTIC_KINDS if kind in asked)


def _run_property(
    pair: ImplementationPair,
    exotic_kinds: Iterable[str] | None,
    settings: Settings | None,
    max_examples: int,
    strategy: SearchStrategy[dict[str, Any]] | None,
    check: Callable[[dict[str, Any]], object],
) -> None:
    try:
        capabilities = pair.start()
        if strategy is None:
            strategy = scenarios(capabilities=capabilities, exotic_kinds=_kinds_for_reference(exotic_kinds))

        @(settings if settings is not None else default_settings(max_examples))
        @given(strategy)
        def generated_scenario(scenario: dict[str, Any]) -> None:
            check(scenario)

        generated_scenario()
    finally:
        pair.stop()


def check_differential(
    implementation: Implementation,
    *,
    reference: Implementation | None = None,
    max_examples: int = 50,
    exotic_kinds: Iterable[str] | None = None,
    settings: Settings | None = None,
    strategy: SearchStrategy[dict[str, Any]] | None = None,
) -> None:
    """Differential property: on generated scenarios, the implementation's transcript is the reference's.

    Starts both implementations, sends each scenario of :func:`~toolcanon_conformance.strategies.scenarios`
    (limited to the capabilities both declare, and to ``exotic_kinds`` — default: every kind the reference
    can express; leave out those your language cannot) to both, and compares the transcripts byte for byte;
    stops both at the end. ``reference`` defaults to the bundled reference. ``settings`` replaces
    :func:`default_settings` (``max_examples`` is then ignored); ``strategy`` replaces the scenarios drawn
    (``scenarios(max_steps=3)``, say: it must then stay within the implementation's capabilities itself).

    Raises :class:`ConformanceFailure` for the first (shrunk) scenario whose transcripts differ, or that the
    implementation skips or errors on.
    """
    pair = ImplementationPair(implementation, reference)
    _run_property(
        pair,
        exotic_kinds,
        settings,
        max_examples,
        strategy,
        lambda scenario: pair.check(scenario, differential=True, invariants=False),
    )


def check_invariants(
    implementation: Implementation,
    *,
    max_examples: int = 50,
    exotic_kinds: Iterable[str] | None = None,
    settings: Settings | None = None,
    strategy: SearchStrategy[dict[str, Any]] | None = None,
) -> None:
    """Oracle-free properties: on generated scenarios, the implementation's transcript alone satisfies every
    invariant of :func:`invariant_violations` (no reference is consulted; parameters as for
    :func:`check_differential`).

    Raises :class:`ConformanceFailure` for the first (shrunk) scenario whose transcript breaks one, or that the
    implementation skips or errors on.
    """
    pair = ImplementationPair(implementation, None)
    _run_property(
        pair,
        exotic_kinds,
        settings,
        max_examples,
        strategy,
        lambda scenario: pair.check(scenario, differential=False, invariants=True),
    )


# --- invariants ----------------------------------------------------------------------------------------

_MISSING: Final[Any] = object()


def invariant_violations(scenario: Mapping[str, Any], transcript: str) -> list[str]:
    """What the transcript of a generated scenario breaks among the contract's oracle-free invariants.

    - **value never in the log**: :data:`~toolcanon_conformance.strategies.CANARY`, which generated scenarios
      place only in value fields that the renderer and projector drop, appears in no persist, model or replay
      step;
    - **replay equals live**: each replay gives the messages of its log's ``tool/result`` events verbatim, one
      ``tool-result`` block per persisted call, with that call's id, final content and ``isError``;
    - **a model step logs its calls in order**: each call's ``tool/call``, with its raw argument text, then a
      ``tool/result`` for it, in model order (its nested calls' dispatch events between them);
    - **frozen means frozen**: a probe answers ``true`` when its path ends at a container of the result (or of
      the arguments), ``null`` otherwise, and never ``false``;
    - **a failure never has a value**: no result (direct or nested) with ``isError`` true has a ``value``, and
      none with ``isError`` false has an ``error``.

    Each violation starts with the JSON path in the transcript. The canary check relies on the discipline of
    :func:`~toolcanon_conformance.strategies.scenarios` (a hand-written scenario may show the canary).
    """
    try:
        data = json.loads(transcript)
    except ValueError as error:
        return [f"$: the transcript is not JSON: {error}"]
    steps = _at(data, "steps")
    if not isinstance(steps, dict):
        return ["$.steps: the transcript has no steps object"]
    documents = {step["id"]: step for step in scenario["steps"]}
    violations = list(_failures_without_value(steps))
    for step in scenario["steps"]:
        outcome = steps.get(step["id"], _MISSING)
        where: Path = ("steps", step["id"])
        if outcome is _MISSING:
            violations.append(f"{format_path(where)}: the step has no outcome")
        elif any(form in step for form in ("persist", "replay", "reopen", "modelStep")):
            violations.extend(_canary(where, outcome))
            if "replay" in step and "damage" not in step["replay"]:  # a damaged log replays what the reader kept
                violations.extend(_replay(where, outcome, documents, steps, step["replay"]["persist"]))
            if "modelStep" in step:
                violations.extend(_model_step(where, outcome, step["modelStep"]["calls"]))
        elif "probe" in step:
            violations.extend(_probe(where, outcome, step["probe"], documents, steps))
    return violations


def _at(value: Any, *path: str | int) -> Any:
    """The JSON value at ``path`` (object keys and array indices), or ``_MISSING``."""
    for element in path:
        in_object = isinstance(value, dict) and isinstance(element, str) and element in value
        in_array = isinstance(value, list) and type(element) is int and 0 <= element < len(value)
        if not (in_object or in_array):
            return _MISSING
        value = value[element]
    return value


def _results(steps: Mapping[str, Any]) -> Iterator[tuple[Path, Any]]:
    for step_id, outcome in steps.items():
        if isinstance(outcome, dict) and "result" in outcome:
            yield ("steps", step_id, "result"), outcome["result"]
        nested = _at(outcome, "nested")
        for index, entry in enumerate(nested if isinstance(nested, list) else ()):
            if isinstance(entry, dict) and "result" in entry:
                yield ("steps", step_id, "nested", index, "result"), entry["result"]


def _failures_without_value(steps: Mapping[str, Any]) -> Iterator[str]:
    for where, result in _results(steps):
        is_error = _at(result, "isError")
        if is_error is True and "value" in result:
            yield f"{format_path(where)}: a failure has a value"
        elif is_error is False and "error" in result:
            yield f"{format_path(where)}: a success has an error"
        elif not isinstance(is_error, bool):
            yield f"{format_path(where)}.isError: not a boolean"


def _find_text(value: Any, needle: str, where: Path) -> Path | None:
    """The path of the first string (or key) inside ``value`` that contains ``needle``."""
    if isinstance(value, str):
        return where if needle in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            if needle in key:
                return where
            found = _find_text(item, needle, (*where, key))
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_text(item, needle, (*where, index))
            if found is not None:
                return found
    return None


def _canary(where: Path, outcome: Any) -> Iterator[str]:
    found = _find_text(outcome, CANARY, where)
    if found is not None:
        yield f"{format_path(found)}: a value field that the renderer and projector drop reached the log"


def _replay(
    where: Path, outcome: Any, documents: Mapping[str, Any], steps: Mapping[str, Any], persist_id: str
) -> Iterator[str]:
    messages = _at(outcome, "messages")
    if not isinstance(messages, list):
        yield f"{format_path(where)}.messages: not a list"
        return
    events = _list_at(steps.get(persist_id), "events")
    logged = [_at(event, "data", "message") for event in events if _at(event, "type") == "tool/result"]
    if not _same(messages, logged):
        yield f"{format_path(where)}.messages: not the messages of the log's tool/result events, verbatim"
    blocks = [
        (index, position, block)
        for index, message in enumerate(messages)
        for position, block in enumerate(_list_at(message, "content"))
        if _at(block, "type") == "tool-result"
    ]
    if "modelStep" in documents[persist_id]:
        call_ids = [call["callId"] for call in documents[persist_id]["modelStep"]["calls"]]
        if [_at(block, "toolCallId") for _, _, block in blocks] != call_ids:
            yield f"{format_path(where)}.messages: not one tool-result block per call of {persist_id!r}, in order"
        return
    persisted = documents[persist_id]["persist"]["steps"]
    if len(blocks) != len(persisted):
        count = f"{len(blocks)} tool-result block(s) for {len(persisted)} persisted call(s)"
        yield f"{format_path(where)}.messages: {count}"
        return
    for step_id, (index, position, block) in zip(persisted, blocks, strict=True):
        here = format_path((*where, "messages", index, "content", position))
        live = _at(steps, step_id, "result")
        call = documents[step_id]["call"]
        if _at(block, "toolCallId") != call.get("callId", step_id):
            yield f"{here}.toolCallId: not the id of the persisted call {step_id!r}"
        if not _same(_at(block, "content"), _at(live, "content")):
            yield f"{here}.content: the replayed content differs from the live content of {step_id!r}"
        if _at(block, "isError") is not _at(live, "isError"):
            yield f"{here}.isError: differs from the live result of {step_id!r}"


def _model_step(where: Path, outcome: Any, calls: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """Each call of a model step logged in model order: its ``tool/call`` with its raw text, then its result."""
    logged: list[tuple[Any, ...]] = []
    for event in _list_at(outcome, "events"):
        kind = _at(event, "type")
        if kind == "tool/call":
            data = _at(event, "data")
            logged.append((kind, _at(data, "callId"), _at(data, "name"), _at(data, "arguments")))
        elif kind == "tool/result":
            logged.append((kind, _at(event, "data", "message", "source", "callId")))
    expected: list[tuple[Any, ...]] = []
    for call in calls:
        expected += [("tool/call", call["callId"], call["name"], call["arguments"]), ("tool/result", call["callId"])]
    if logged != expected:
        yield f"{format_path(where)}.events: not each call's tool/call (its raw text) then its tool/result, in order"


def _list_at(value: Any, key: str) -> list[Any]:
    found = _at(value, key)
    return found if isinstance(found, list) else []


def _same(left: Any, right: Any) -> bool:
    """JSON equality that tells ``true`` from ``1`` and ``1`` from ``1.0`` (key order aside), without recursion:
    replayed content may nest past the interpreter's recursion limit (the snapshot's depth threshold)."""
    pairs = [(left, right)]
    while pairs:
        a, b = pairs.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, dict):
            if a.keys() != b.keys():
                return False
            pairs.extend((a[key], b[key]) for key in a)
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            pairs.extend(zip(a, b, strict=True))
        elif a != b:
            return False
    return True


def _probe(
    where: Path, outcome: Any, probe: Mapping[str, Any], documents: Mapping[str, Any], steps: Mapping[str, Any]
) -> Iterator[str]:
    answer = _at(outcome, "frozen")
    here = format_path((*where, "frozen"))
    if answer is False:
        yield f"{here}: the data at {probe['target']} {probe['path']} of {probe['step']!r} can be mutated"
        return
    if answer is not True and answer is not None:
        yield f"{here}: not true, false or null"
        return
    expected = _probed_container(probe, documents, steps)
    if expected is True and answer is None:
        yield f"{here}: null, but the path ends at a container"
    elif expected is False and answer is True:
        yield f"{here}: true, but the path ends at a scalar or nowhere"


def _probed_container(probe: Mapping[str, Any], documents: Mapping[str, Any], steps: Mapping[str, Any]) -> bool | None:
    """Whether the probed path ends at a container (``None`` when the transcript cannot tell)."""
    target = probe["target"]
    if target == "arguments":
        arguments = expand(documents[probe["step"]]["call"]["arguments"])
        if any(True for _ in iter_exotic_tags(arguments)):
            return None  # non-lossless arguments have no snapshot; some exotic ones are accepted as plain data
        node = arguments
    else:
        result = _at(steps, probe["step"], "result")
        node = _at(result, target)
    # The transcript is read as JSON.parse reads it, a surrogate pair being one character: so is the path's key.
    path = [_utf16_joined(element) if isinstance(element, str) else element for element in probe["path"]]
    node = _at(node, *path) if node is not _MISSING else _MISSING
    return isinstance(node, dict | list)


def _utf16_joined(text: str) -> str:
    """``text`` with each surrogate pair of code points joined into the one character it encodes."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


# --- the state machine ---------------------------------------------------------------------------------


def conformance_machine(
    implementation: Implementation,
    *,
    reference: Implementation | None = None,
    exotic_kinds: Iterable[str] | None = None,
    max_tools: int = 4,
    max_hooks: int = 4,
    max_steps: int = 14,
    max_examples: int = 10,
    stateful_step_count: int = 20,
) -> type[RuleBasedStateMachine]:
    """A :class:`~hypothesis.stateful.RuleBasedStateMachine` class that checks ``implementation`` statefully.

    Implementations are reached only through whole scenarios, so the machine builds one up rule by rule —
    register a fixture tool, add a hook, an approval service or a change listener, add a call, a freeze probe, a
    persist, a model step or a replay (up to
    ``max_tools`` tools, ``max_hooks`` hooks and ``max_steps`` steps), in the order hypothesis chooses — and
    after every rule runs the scenario so far on the implementation and on the reference (default: the bundled
    one), requiring byte-identical transcripts and every invariant of :func:`invariant_violations`. A rerun
    rule also requires the same scenario to give the same transcript again.

    Both implementations are started when the first machine is made and never stopped by it. Run it with
    ``TestConformance = conformance_machine(implementation).TestCase`` (collected by pytest) or
    ``hypothesis.stateful.run_state_machine_as_test(machine)``; ``max_examples`` and
    ``stateful_step_count`` set the ``TestCase`` settings (a few dozen steps keep it cheap). Failures are
    :class:`ConformanceFailure`.
    """
    pair = ImplementationPair(implementation, reference)
    kinds = _kinds_for_reference(exotic_kinds)

    class ConformanceMachine(RuleBasedStateMachine):
        """Builds a scenario rule by rule and checks the implementation on it after every rule."""

        def __init__(self) -> None:
            super().__init__()
            self.builder = ScenarioBuilder(capabilities=pair.start(), exotic_kinds=kinds, scenario_id="stateful")
            self.last: tuple[dict[str, Any], str] | None = None  # the last scenario run and its transcript

        def _room(self) -> bool:
            return len(self.builder.steps) < max_steps

        @initialize(data=st.data())
        def first_tool(self, data: st.DataObject) -> None:
            # Calls are mostly of registered tools: there is one from the start.
            self.builder.add_tool(data.draw)

        @precondition(lambda self: len(self.builder.tools) < max_tools)
        @rule(data=st.data())
        def register_tool(self, data: st.DataObject) -> None:
            self.builder.add_tool(data.draw)

        # A hook may act on every call: fewer hooks than calls keeps most calls reaching their tool.
        @precondition(lambda self: len(self.builder.hooks) < min(max_hooks, len(self.builder.call_steps)))
        @rule(data=st.data())
        def add_hook(self, data: st.DataObject) -> None:
            self.builder.add_hook(data.draw)

        @precondition(lambda self: self._room())
        @rule(data=st.data())
        def call(self, data: st.DataObject) -> None:
            self.builder.add_call(data.draw)

        @precondition(lambda self: self._room() and bool(self.builder.call_steps))
        @rule(data=st.data())
        def probe(self, data: st.DataObject) -> None:
            self.builder.add_probe(data.draw)

        @precondition(
            lambda self: self._room() and bool(self.builder.call_steps) and self.builder.allows("persistence")
        )
        @rule(data=st.data())
        def persist(self, data: st.DataObject) -> None:
            self.builder.add_persist(data.draw)

        @precondition(lambda self: self.builder.approval is None and self.builder.allows("approval"))
        @rule(data=st.data())
        def approval(self, data: st.DataObject) -> None:
            self.builder.add_approval(data.draw)

        @precondition(lambda self: self.builder.change_listener is None)
        @rule(data=st.data())
        def change_listener(self, data: st.DataObject) -> None:
            self.builder.add_change_listener(data.draw)

        @precondition(lambda self: self._room() and self.builder.allows("model-step"))
        @rule(data=st.data())
        def model_step(self, data: st.DataObject) -> None:
            self.builder.add_model_step(data.draw)

        @precondition(
            lambda self: self._room() and bool(self.builder.persist_steps) and self.builder.allows("persistence")
        )
        @rule(data=st.data())
        def replay(self, data: st.DataObject) -> None:
            self.builder.add_replay(data.draw)

        @precondition(lambda self: self.last is not None)
        @rule()
        def rerun(self) -> None:
            assert self.last is not None
            scenario = self.last[0]
            again = pair.transcript(scenario)
            if again != self.last[1]:
                raise ConformanceFailure(
                    "the same scenario run twice gave two transcripts",
                    scenario,
                    difference=next(iter(compare(_utf8(self.last[1]), _utf8(again))), None),
                )

        @invariant()
        def agrees_with_the_reference(self) -> None:
            if not self.builder.steps:
                return
            scenario = self.builder.document()
            transcript = pair.check(scenario, differential=True, invariants=True)
            self.last = (scenario, transcript)

    ConformanceMachine.TestCase.settings = Settings(
        default_settings(max_examples), stateful_step_count=stateful_step_count
    )
    return ConformanceMachine
