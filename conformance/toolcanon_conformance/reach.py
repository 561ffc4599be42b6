"""What a scenario document reaches: its behaviours, steps, members, capabilities, tags, thresholds and rules.

:func:`reached` names each thing a scenario uses as one string, so that a set of drawn scenarios can be compared
with the catalogue of what the format and the contract have (``conformance/tests/test_generator_catalogue.py``
fails when generated scenarios never reach one):

- ``behaviour:<place>:<kind>`` — a renderer, projector, body, finalizer or hook action of that kind, ``<place>``
  ``renderer``, ``projector``, ``body``, ``finalizer`` or a hook's stage, at any depth of ``then``;
- ``step:<form>`` — a step of that form (``call``, ``probe``, ``persist``, …);
- ``member:<where>.<name>`` — an optional member of the format present (``tool.timeoutMs``, ``call.callId``,
  ``scenario.spill``, ``damage.how=drop``, ``concurrencySafe.kind=raise``, …);
- ``capability:<name>`` — a capability the scenario requires;
- ``exotic:<kind>``, ``generate:<kind>`` — an exotic or a generator tag of that kind;
- ``threshold:<name>:<side>`` — a measure just below, at or just above one of
  :data:`toolcanon_conformance.thresholds.THRESHOLDS`;
- ``rule:<id>`` — a contract rule the scenario exercises, by :data:`RULE_FEATURES`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from toolcanon_conformance.generate import expand
from toolcanon_conformance.thresholds import THRESHOLDS, Threshold, side_of

__all__ = ["RULE_FEATURES", "reached", "rules_of"]

_THRESHOLD: Final = {threshold.name: threshold for threshold in THRESHOLDS}
_SCALARS: Final = frozenset({"string", "number", "integer", "boolean", "null"})
_STEP_FORMS: Final = (
    *("call", "probe", "persist", "modelStep", "replay", "reopen", "schemas", "executionMode", "removeHook"),
)
# The JSON type of a value, as a member's feature names it (``member:tool.description=object``).
_JSON_TYPES: Final = ((bool, "boolean"), (int, "number"), (float, "number"), (str, "string"), (list, "array"))

# Each rule and the features any of which exercises it: what a scenario must hold for the rule to decide part of
# its transcript. Coarse on purpose: a rule is reached when its situation is drawn, not when a bug of it shows.
RULE_FEATURES: Final[dict[str, tuple[str, ...]]] = {
    "R-REG-1": ("member:tool.registerError=no-output", "behaviour:projector:not-callable"),
    "R-REG-2": ("member:tool.registerError=schema",),
    "R-REG-3": ("member:tool.registerError=timeoutMs",),
    "R-REG-4": ("member:tool.registerError=reserved",),
    "R-REG-5": ("member:tool.registerError=order",),
    "R-REG-6": ("member:tool.registerError=duplicate",),
    "R-REG-7": ("behaviour:execute:dispose-tool-then", "behaviour:post-execute:dispose-tool-then"),
    "R-REG-8": ("member:tool.description", "member:tool.rawParameters"),
    "R-REG-9": ("step:executionMode",),
    "R-REG-10": ("step:removeHook",),
    "R-REG-11": ("member:scenario.changeListener", "member:scenario.changeListeners"),
    "R-SCHEMAS-1": ("step:schemas",),
    "R-SCHEMAS-2": ("step:schemas",),
    "R-DSL-1": ("member:tool.registerError=timeoutMs-dsl",),
    "R-DSL-2": ("member:tool.parameters",),
    "R-DSL-3": ("member:output.schema",),
    "R-DSL-4": ("member:tool.registerError=dsl",),
    "R-DSL-5": ("member:tool.registerError=dsl",),
    "R-DSL-6": ("member:tool.registerError=dsl",),
    "R-DSL-7": ("member:tool.registerError=dsl",),
    "R-DSL-8": ("member:tool.registerError=dsl-parameters",),
    "R-DSL-9": ("member:tool.registerError=dsl",),
    "R-DSL-10": ("member:tool.registerError=dsl",),
    **{f"R-SUBSET-{number}": ("member:tool.registerError=schema",) for number in range(1, 11)},
    "R-SUBSET-11": ("member:output.rawSchema",),
    **{f"R-VAL-{number}": ("member:output.rawSchema", "member:output.schema") for number in range(1, 9)},
    "R-ARGS-1": ("behaviour:pre-execute:mutate-then", "behaviour:body:mutate-then"),
    "R-ARGS-2": ("member:call.arguments=exotic",),
    "R-ARGS-3": ("member:call.arguments=exotic",),
    "R-ARGS-4": ("member:call.arguments=invalid",),
    "R-ARGS-5": ("member:tool.rawParameters", "member:mcp.inputSchema"),
    "R-ARGS-6": ("member:call.arguments=extra",),
    "R-ARGS-7": ("member:call.arguments=not-an-object",),
    "R-ARGS-8": ("member:call.name=unknown",),
    "R-ARGS-9": ("behaviour:execute:dispose-tool-then",),
    "R-SNAP-1": ("step:call",),
    "R-SNAP-2": ("exotic:nan", "exotic:cycle"),
    "R-SNAP-3": ("exotic:tuple", "exotic:unsafe-integer", "exotic:non-string-key"),
    "R-SNAP-4": ("member:value.index-like-key",),
    "R-SNAP-5": ("behaviour:renderer:json",),
    "R-SNAP-6": ("step:probe",),
    "R-SNAP-7": ("exotic:throwing-getter", "exotic:throwing-proxy", "exotic:accessor-property"),
    "R-SNAP-8": ("exotic:null-prototype", "exotic:other-realm"),
    "R-NORM-1": ("behaviour:body:return",),
    "R-NORM-2": ("member:body.value=invalid",),
    "R-NORM-3": ("member:body.value=invalid",),
    "R-NORM-4": ("behaviour:renderer:raise", "behaviour:projector:raise"),
    "R-NORM-5": ("behaviour:projector:null", "behaviour:body:program"),
    "R-NORM-6": ("behaviour:execute:short-circuit-success", "behaviour:post-execute:accept-value"),
    "R-NORM-7": ("behaviour:renderer:constant", "behaviour:renderer:exotic"),
    "R-NORM-8": ("behaviour:body:raise",),
    "R-RES-1": ("step:call",),
    "R-RES-2": ("behaviour:body:raise",),
    "R-RES-3": ("member:raise.error", "member:raise.code"),
    "R-RES-4": ("member:raise.error",),
    "R-RES-5": ("member:additionalContexts",),
    "R-RES-6": ("behaviour:execute:short-circuit-failure",),
    "R-PRE-1": ("step:call",),
    "R-PRE-2": ("behaviour:pre-execute:allow",),
    "R-PRE-3": ("behaviour:pre-execute:deny",),
    "R-PRE-4": ("behaviour:pre-execute:ask",),
    "R-PRE-5": ("member:approval.outcome",),
    "R-PRE-6": ("member:approval.abortCaller",),
    "R-PRE-7": ("behaviour:pre-execute:raise",),
    "R-PRE-8": ("member:deny.reason=not-text",),
    "R-PRE-9": ("member:approval.report",),
    "R-GUARD-1": ("behaviour:guard:pass",),
    "R-GUARD-2": ("behaviour:guard:deny",),
    "R-GUARD-3": ("behaviour:guard:raise",),
    "R-WRAP-1": ("behaviour:execute:passthrough",),
    "R-WRAP-2": ("behaviour:body:raise",),
    "R-WRAP-3": ("behaviour:execute:raise", "member:tool.timeoutMs=past-timer"),
    "R-WRAP-4": ("behaviour:execute:short-circuit-failure",),
    "R-WRAP-5": (
        *("behaviour:execute:short-circuit-success", "behaviour:execute:return-result-of"),
        "behaviour:execute:look-alike",
    ),
    "R-WRAP-6": ("behaviour:execute:short-circuit-success",),
    "R-WRAP-7": ("behaviour:execute:replace-signal-aborted",),
    "R-WRAP-8": ("behaviour:post-execute:report-signal",),
    "R-POST-1": ("behaviour:post-execute:block",),
    "R-POST-2": ("behaviour:post-execute:block",),
    "R-POST-3": ("behaviour:post-execute:accept-both",),
    "R-POST-4": ("behaviour:post-execute:accept-value",),
    "R-POST-5": ("behaviour:post-execute:accept-value",),
    "R-POST-6": ("behaviour:post-execute:accept-content",),
    "R-POST-7": ("behaviour:post-execute:raise",),
    "R-POST-8": ("behaviour:post-execute:accept",),
    "R-FIN-1": ("member:tool.finalizeContent",),
    "R-FIN-2": ("behaviour:finalizer:replace", "behaviour:finalizer:keep"),
    "R-FIN-3": ("behaviour:finalizer:raise",),
    "R-FIN-4": ("member:tool.finalizeContent",),
    "R-FIN-5": ("behaviour:finalizer:truncate",),
    "R-OBS-1": ("behaviour:result-observer:mutate",),
    "R-OBS-2": ("behaviour:result-observer:raise",),
    "R-CTX-1": ("behaviour:body:defer",),
    "R-CTX-2": ("member:additionalContexts",),
    "R-CTX-3": ("behaviour:body:defer",),
    "R-CTX-4": ("behaviour:execute:raise", "behaviour:pre-execute:raise", "behaviour:post-execute:raise"),
    "R-CTX-5": ("behaviour:body:abort-caller",),
    "R-TURN-1": ("behaviour:body:conclude",),
    "R-TURN-2": ("behaviour:body:conclude",),
    "R-TOK-1": ("behaviour:execute:return-result-of", "behaviour:execute:cache"),
    "R-TOK-2": ("behaviour:body:program",),
    "R-ABORT-1": ("member:call.abort",),
    "R-ABORT-2": ("behaviour:pre-execute:abort-caller",),
    "R-ABORT-3": ("behaviour:execute:replace-signal-aborted",),
    "R-ABORT-4": ("behaviour:body:abort-caller",),
    "R-ABORT-5": ("behaviour:execute:abort-caller-after-next",),
    "R-ABORT-6": ("behaviour:body:abort-caller",),
    "R-ABORT-7": ("behaviour:body:await-abort",),
    "R-LOG-1": ("step:persist",),
    "R-LOG-2": ("step:persist",),
    "R-LOG-3": ("step:persist",),
    "R-LOG-4": ("member:program.agent",),
    "R-LOG-5": ("step:modelStep",),
    "R-REPLAY-1": ("step:replay",),
    "R-REPLAY-2": ("member:damage.how=torn-last-line", "member:reopen.damage.how=torn-last-line"),
    "R-NEST-1": ("behaviour:body:program",),
    "R-NEST-2": ("member:program.arguments=exotic",),
    "R-NEST-3": ("behaviour:body:program",),
    "R-NEST-4": ("member:program.result",),
    "R-NEST-5": ("behaviour:body:program",),
    "R-NEST-6": ("member:program.aborted",),
    "R-MCP-1": ("member:tool.mcp",),
    "R-MCP-2": ("member:mcp.outputSchema",),
    "R-MCP-3": ("member:mcp.response.isError",),
    "R-MCP-4": ("member:mcp.response.content=not-a-list",),
    "R-MCP-5": ("member:mcp.response.content=blocks",),
    "R-MCP-6": ("member:mcp.response.content=image",),
    "R-MCP-7": ("member:mcp.execution",),
    "R-MCP-8": ("member:mcp.inputSchema",),
    "R-SPILL-1": ("threshold:spill-bound:above", "member:spill.fail.how=raise", "member:spill.fail.how=reject"),
    "R-SPILL-2": ("member:spill.post-execute",),
    "R-SPILL-3": ("member:spill.nested",),
    "R-TIMEOUT-1": ("member:tool.timeoutMs=fires",),
    "R-TIMEOUT-2": ("member:tool.timeoutMs=in-time",),
    "R-TIMEOUT-3": ("member:tool.timeoutMs=fires-with-abort",),
    "R-FP-1": ("behaviour:renderer:first-party",),
}


def rules_of(features: Iterable[str]) -> frozenset[str]:
    """The rules that :data:`RULE_FEATURES` says ``features`` exercise."""
    present = set(features)
    return frozenset(rule for rule, needs in RULE_FEATURES.items() if present.intersection(needs))


def reached(document: Mapping[str, Any]) -> frozenset[str]:
    """Everything ``document`` (a scenario of the format, generator tags unexpanded) reaches, as the module
    docstring names it, rules included."""
    found: set[str] = set()
    _scenario_members(document, found)
    for key, tool in document["tools"].items():
        _tool(key, tool, document, found)
    for hook in document.get("hooks", ()):
        found.add("member:hook.steps" if "steps" in hook else "member:hook.every-call")
        _behaviours(hook["stage"], hook["action"], found)
    tools = document["tools"]
    for step in document["steps"]:
        _step(step, tools, document, found)
    found.update(f"capability:{capability}" for capability in document.get("requires", ()))
    _tags(document, found)
    found.update(f"rule:{rule}" for rule in rules_of(found))
    return frozenset(found)


def _scenario_members(document: Mapping[str, Any], found: set[str]) -> None:
    for member in ("approval", "changeListener", "changeListeners", "bare", "spill", "attachments", "timeout"):
        if member in document:
            found.add(f"member:scenario.{member}")
    found.update(f"member:bare={stage}" for stage in document.get("bare", ()))
    approval = document.get("approval")
    if approval is not None:
        found.add("member:approval.outcome")
        found.update(f"member:approval.{member}" for member in ("abortCaller", "report") if member in approval)
    if "spill" in document:
        hooks = document.get("hooks", ())
        if any(hook["stage"] == "post-execute" for hook in hooks):
            found.add("member:spill.post-execute")
        if any(_terminal(tool.get("body"))[0] == "program" for tool in document["tools"].values()):
            found.add("member:spill.nested")
        spill = document["spill"]
        if spill["maxBytes"] == 0:
            found.add("member:spill.maxBytes=0")
        if "fail" in spill:
            found.add(f"member:spill.fail.how={spill['fail']['how']}")
            if "calls" in spill["fail"]:
                found.add("member:spill.fail.calls")


def _json_type(value: Any) -> str:
    """The JSON type of a scenario value: ``null``, ``boolean``, ``number``, ``string``, ``array`` or ``object``."""
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "object")


def _terminal(body: Any) -> tuple[str | None, list[str]]:
    """A body's terminal kind and the kinds of the effects in front of it, outermost first."""
    effects: list[str] = []
    while isinstance(body, Mapping) and isinstance(body.get("kind"), str):
        if "then" not in body:
            return body["kind"], effects
        effects.append(body["kind"])
        body = body["then"]
    return None, effects


def _behaviours(place: str, part: Any, found: set[str]) -> None:
    """Every kind of a behaviour chain (``then`` after ``then``), and the members that matter to rules."""
    while isinstance(part, Mapping) and isinstance(part.get("kind"), str):
        kind = part["kind"]
        found.add(f"behaviour:{place}:{kind}")
        if kind == "replace-signal-aborted" and part.get("later") is True:
            found.add("member:replace-signal-aborted.later")
        if kind == "raise":
            found.update(f"member:raise.{member}" for member in ("error", "code") if member in part)
        if kind == "look-alike":
            found.update(f"member:look-alike.{member}" for member in ("step", "content") if member in part)
        if kind == "not-callable":
            found.add(f"member:not-callable.value={_json_type(part.get('value'))}")
        if kind == "json" and "indent" in part:
            found.add(f"member:json.indent={_json_type(part['indent'])}")
        if "additionalContexts" in part or part.get("contexts"):
            found.add("member:additionalContexts")
        if kind == "deny" and not isinstance(part.get("reason"), str):
            found.add("member:deny.reason=not-text")
        if kind == "later":
            found.add("behaviour:result-observer:later")
        part = part.get("then")


def _tool(key: str, tool: Mapping[str, Any], document: Mapping[str, Any], found: set[str]) -> None:
    for member in (
        "name",
        "description",
        "parameters",
        "rawParameters",
        "finalizeContent",
        "timeoutMs",
        "concurrencySafe",
        "mcp",
        "register",
        "registerError",
    ):
        if member in tool:
            found.add(f"member:tool.{member}")
    if "registerError" in tool:
        found.add(f"member:tool.registerError={_refusal(key, tool, document)}")
    if "description" in tool:
        found.add(f"member:tool.description={_json_type(tool['description'])}")
    output = tool.get("output", {})
    for member in ("schema", "rawSchema", "render", "presentationMeta"):
        if member in output:
            found.add(f"member:output.{member}")
    if "render" in output:
        _behaviours("renderer", output["render"], found)
    if "presentationMeta" in output:
        _behaviours("projector", output["presentationMeta"], found)
    if "finalizeContent" in tool:
        _behaviours("finalizer", tool["finalizeContent"], found)
    if "concurrencySafe" in tool:
        found.add(f"member:concurrencySafe.kind={tool['concurrencySafe']['kind']}")
        if "code" in tool["concurrencySafe"]:
            found.add("member:raise.code")
    body = tool.get("body")
    if body is not None:
        _behaviours("body", body, found)
        _program(body, found)
    if "timeoutMs" in tool:
        _budget(tool, document, found)
    if "mcp" in tool:
        _mcp(tool["mcp"], found)
    schemas = [output.get("rawSchema", output.get("schema"))]
    for schema in schemas:
        if schema is not None:
            _output_schema(expand(schema), found)
    parameters = expand(tool.get("rawParameters", tool.get("mcp", {}).get("inputSchema")))
    if parameters is None and isinstance(tool.get("parameters"), Mapping):
        parameters = {"type": "object", "properties": expand(tool["parameters"])}
    if parameters is not None:
        _threshold(found, "closure-height", _height(parameters))
    for value in _returned(body):
        if "$exotic" in str(value):
            found.add("member:body.value=invalid")
        expanded = expand(value)
        _threshold(found, "snapshot-depth", _nesting(expanded))
    value = _first_value(body)
    if value is not None:
        expanded = expand(value)
        if isinstance(expanded, (list, dict)):
            _threshold(found, "fused-items", len(expanded))


def _refusal(key: str, tool: Mapping[str, Any], document: Mapping[str, Any]) -> str:
    """Which registration check a fixture expected to fail meets first (R-REG-5's order)."""
    earlier = []
    for other_key, other in document["tools"].items():
        if other_key == key:
            break
        if "mcp" not in other:
            earlier.append(other.get("name", other_key))
    if tool.get("name", key) in earlier:
        return "duplicate"
    output = tool.get("output")
    raw = "parameters" not in tool
    budget = tool.get("timeoutMs")
    positive = isinstance(budget, (int, float)) and not isinstance(budget, bool) and budget > 0
    bad_budget = "timeoutMs" in tool and not positive
    if output is None or "render" not in output or (raw and "presentationMeta" in output):
        return "order" if bad_budget else "no-output"
    if not raw and bad_budget:
        return "timeoutMs-dsl"
    if "rawSchema" in output or (raw and "schema" not in output):
        return "order" if bad_budget or tool.get("name") == "run_code" else "schema"
    if "schema" in output and output["schema"] != {"type": "json"}:
        return "dsl"
    if bad_budget:
        return "timeoutMs"
    if tool.get("name") == "run_code":
        return "reserved"
    return "dsl-parameters"


def _program(body: Any, found: set[str]) -> None:
    terminal, effects = _terminal(body)
    if terminal != "program":
        return
    while isinstance(body, Mapping) and body.get("kind") != "program":
        body = body["then"]
    if "result" in body:
        found.add("member:program.result")
    if any("$exotic" in str(call.get("arguments")) for call in body["calls"]):
        found.add("member:program.arguments=exotic")
    if {"abort-caller", "abort-replacement", "await-abort"} & set(effects):
        found.add("member:program.aborted")


def _budget(tool: Mapping[str, Any], document: Mapping[str, Any], found: set[str]) -> None:
    budget = tool["timeoutMs"]
    if type(budget) not in (int, float):
        return
    _threshold(found, "timer-delay", budget)
    _threshold(found, "timeout-floor", budget)
    if "timeout" not in document or tool.get("registerError"):
        return
    if budget > _THRESHOLD["timer-delay"].last_within:
        found.add("member:tool.timeoutMs=past-timer")
    elif "await-abort" in _terminal(tool.get("body"))[1]:
        found.add("member:tool.timeoutMs=fires")
        if {"abort-caller", "abort-replacement"} & set(_terminal(tool["body"])[1]):
            found.add("member:tool.timeoutMs=fires-with-abort")
    elif budget > 0:
        found.add("member:tool.timeoutMs=in-time")


def _mcp(mcp: Mapping[str, Any], found: set[str]) -> None:
    found.update(f"member:mcp.{member}" for member in ("inputSchema", "outputSchema", "execution") if member in mcp)
    response = mcp["response"]
    if not isinstance(response, Mapping):
        return
    found.update(f"member:mcp.response.{member}" for member in response)
    content = response.get("content")
    if "content" in response and not isinstance(content, list):
        found.add("member:mcp.response.content=not-a-list")
    if isinstance(content, list):
        found.add("member:mcp.response.content=blocks")
        kinds = {block.get("type") for block in content if isinstance(block, Mapping)}
        found.update(f"member:mcp.response.content={kind}" for kind in kinds if isinstance(kind, str))


def _returned(body: Any) -> Iterator[Any]:
    """The values a body chain returns (``return``), and the ones in its program's call arguments."""
    while isinstance(body, Mapping):
        if body.get("kind") == "return":
            yield body.get("value")
        if body.get("kind") == "program":
            yield from (call.get("arguments") for call in body.get("calls", ()))
        body = body.get("then")


def _first_value(body: Any) -> Any:
    for value in _returned(body):
        return value
    return None


def _output_schema(schema: Any, found: set[str]) -> None:
    _threshold(found, "closure-height", _height(schema))
    _threshold(found, "fused-schema-depth", _fused_depth(schema))
    widest = max((len(node["properties"]) for node in _schema_nodes(schema) if _has_properties(node)), default=None)
    if widest is not None:
        _threshold(found, "fused-properties", widest)


def _has_properties(node: Any) -> bool:
    return isinstance(node, Mapping) and isinstance(node.get("properties"), Mapping)


def _children(node: Any) -> list[Any]:
    if not isinstance(node, Mapping):
        return []
    children: list[Any] = []
    if isinstance(node.get("properties"), Mapping):
        children.extend(node["properties"].values())
    if isinstance(node.get("items"), Mapping):
        children.append(node["items"])
    if isinstance(node.get("oneOf"), list):
        children.extend(node["oneOf"])
    return children


def _schema_nodes(schema: Any) -> Iterator[Any]:
    stack = [schema]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(_children(node))


def _height(schema: Any) -> int:
    """A schema's height, a leaf 1 (properties, items and oneOf branches are its children), without recursion."""
    heights: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(schema, False)]
    while stack:
        node, done = stack.pop()
        children = _children(node)
        if done:
            heights[id(node)] = 1 + max((heights[id(child)] for child in children), default=0)
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in children)
    return heights[id(schema)]


def _fused_depth(schema: Any) -> int:
    """The most nodes the fused walk generates a function for along one path: the root, and below it every
    property or item that is not a scalar node (a ``oneOf`` ends the walk)."""
    deepest = 0
    stack = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if not isinstance(node, Mapping) or "oneOf" in node:
            continue
        children = list(node["properties"].values()) if isinstance(node.get("properties"), Mapping) else []
        if isinstance(node.get("items"), Mapping):
            children.append(node["items"])
        for child in children:
            if not (isinstance(child, Mapping) and "oneOf" not in child and child.get("type") in _SCALARS):
                stack.append((child, depth + 1))
    return deepest


def _nesting(value: Any) -> int:
    """How many containers nest in ``value``, the root counted (an exotic tag is a leaf), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping) and "$exotic" not in node:
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1) for item in node.values())
        elif isinstance(node, list):
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1) for item in node)
    return deepest


def _threshold(found: set[str], name: str, measure: float) -> None:
    threshold: Threshold = _THRESHOLD[name]
    side = side_of(measure, threshold)
    if side is not None:
        found.add(f"threshold:{name}:{side}")


def _step(step: Mapping[str, Any], tools: Mapping[str, Any], document: Mapping[str, Any], found: set[str]) -> None:
    form = next(form for form in _STEP_FORMS if form in step)
    found.add(f"step:{form}")
    if step.get("abort") == "before":
        found.add(f"member:{form}.abort")
    body = step[form]
    if form == "call":
        _call(body, tools, document, found)
    elif form == "persist":
        found.update(f"member:persist.{member}" for member in ("rawArguments", "bytes") if member in body)
    elif form == "replay" and "damage" in body:
        found.add(f"member:damage.how={body['damage']['how']}")
    elif form == "reopen" and "damage" in body:
        found.add(f"member:reopen.damage.how={body['damage']['how']}")
    elif form == "probe":
        found.add(f"member:probe.target={body['target']}")


def _call(call: Mapping[str, Any], tools: Mapping[str, Any], document: Mapping[str, Any], found: set[str]) -> None:
    found.update(f"member:call.{member}" for member in ("callId", "agent") if member in call)
    arguments = call["arguments"]
    if "$exotic" in str(arguments):
        found.add("member:call.arguments=exotic")
    expanded = expand(arguments)
    _threshold(found, "snapshot-depth", _nesting(expanded))
    if not isinstance(expanded, Mapping):
        found.add("member:call.arguments=not-an-object")
    names: dict[str, Mapping[str, Any]] = {}
    for key, each in tools.items():
        if "mcp" not in each:
            names.setdefault(each.get("name", key), each)
    tool = names.get(call["name"])
    if (tool is None and not call["name"].startswith("mcp__")) or (tool is not None and tool.get("register") is False):
        found.add("member:call.name=unknown")
    if tool is None:
        return
    parameters = tool.get("parameters")
    if isinstance(parameters, Mapping) and isinstance(expanded, Mapping):
        if set(expanded) - set(parameters):
            found.add("member:call.arguments=extra")
        if any(node.get("required") is True for node in parameters.values() if isinstance(node, Mapping)) and not (
            set(expanded) & set(parameters)
        ):
            found.add("member:call.arguments=invalid")
    if "agent" in call and _terminal(tool.get("body"))[0] == "program":
        found.add("member:program.agent")
    spill = document.get("spill")
    render = tool.get("output", {}).get("render", {})
    text = expanded.get("text") if isinstance(expanded, Mapping) else None
    if spill is not None and render.get("kind") == "text" and isinstance(text, str):
        terminal = tool.get("body")
        while isinstance(terminal, Mapping) and "then" in terminal:
            terminal = terminal["then"]
        if isinstance(terminal, Mapping) and terminal.get("kind") == "return-arg" and terminal.get("arg") == "text":
            size = _utf8_length(render.get("prefix", "") + text)
            _threshold(found, "spill-bound", size - spill["maxBytes"])


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _tags(document: Any, found: set[str]) -> None:
    """Every exotic and generator tag of the document (walked unexpanded: the document nests shallowly)."""
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if isinstance(node.get("$exotic"), str):
                found.add(f"exotic:{node['$exotic']}")
            if isinstance(node.get("$generate"), str):
                found.add(f"generate:{node['$generate']}")
            if any(key.isdigit() and key == str(int(key)) for key in node):
                found.add("member:value.index-like-key")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
