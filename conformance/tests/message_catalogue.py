"""The message catalogue of ``docs/contract.md``: its templates, compiled to regexes, and the messages of goldens.

:func:`parse_catalogue` reads the section "Message catalogue"; :class:`Matcher` compiles its templates for one
scenario (the placeholder ``<own>`` stands for that scenario's own strings); :func:`extract` lists the texts of a
transcript that are messages, each with its JSON path; :func:`check` tells which match no template.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[2]
CONTRACT: Final = ROOT / "docs" / "contract.md"
SECTION: Final = "## Message catalogue"
NOT_PINNED: Final = "not pinned yet"

_ANY_LINE: Final = r"[^\n]*?"
_PART: Final = r"(?:[^\n;]|;(?! ))*?"
_NUMBER: Final = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-][0-9]+)?"
_STRING: Final = r'"(?:[^"\\\n]|\\.)*"'

#: The placeholders that stand for one text of a fixed form (docs/contract.md, "Message catalogue").
SIMPLE: Final[dict[str, str]] = {
    "text": r"[\s\S]*?",
    "name": _ANY_LINE,
    "p": _PART,
    "key": _PART,
    "locator": _ANY_LINE,
    "keyword": "(?:properties|required|additionalProperties|items|enum|const)",
    "annotation": "(?:description|title|default|examples)",
    "type": "(?:object|array|string|number|integer|boolean|null)",
    "n": "[0-9]+",
    "number": _NUMBER,
    "json": rf"(?:null|true|false|{_NUMBER}|{_STRING}|\[[^\n]*?\]|\{{[^\n]*?\}})",
}
#: The placeholders that stand for the scenario's own text.
OWN: Final = frozenset({"own", "mime", "printed"})
#: The placeholders that stand for items of families: their separator (``None``: exactly one item) and whether
#: a text block's text, printed (``<printed>``: the scenario's own text, a number, ..., or nothing), is an item too.
LISTS: Final[dict[str, tuple[str | None, bool]]] = {
    "reason": (None, False),
    "image-reason": (None, False),
    "violations": ("; ", False),
    "schema-violations": ("; ", False),
    "feedback": ("\n", True),
    "projection": ("\n", True),
}
_TOKEN: Final = re.compile(r"(<[a-z][a-z-]*>|\\n)")
_ITEMS_OF: Final = re.compile(r"^(?P<family>.+?) \(items of (?P<names>.+)\)$")
#: Top-level scenario keys whose strings describe the scenario rather than run it.
_TABLE_HEAD: Final = re.compile(r"^\|\s*(?:placeholder|template)\s*\||^\|[-| ]+\|$")
_NOT_RUN: Final = frozenset({"formatVersion", "id", "rules", "description", "golden", "ignore", "optional"})


@dataclass(frozen=True, slots=True)
class Template:
    """One row of the catalogue: the template as written, its family and rules, whether a golden pins it."""

    text: str
    family: str
    rules: tuple[str, ...]
    pinned: bool
    items_of: tuple[str, ...]
    line: int


@dataclass(frozen=True, slots=True)
class Catalogue:
    """The documented placeholders (name: meaning) and the templates, in document order."""

    placeholders: dict[str, str]
    templates: tuple[Template, ...]


@dataclass(frozen=True, slots=True)
class Extracted:
    """A message of a transcript: where it stands, what it must be (``None``: a whole message), and the text it
    was read from when that is more than the message (a content's ``Error: <message>``)."""

    scenario: str
    path: str
    message: object
    expect: str | None = None
    verbatim: str | None = None


@dataclass(slots=True)
class Findings:
    """What :func:`check` found: unmatched messages, the templates used, and the counts of each verdict."""

    unmatched: list[Extracted] = field(default_factory=list)
    used: set[Template] = field(default_factory=set)
    matched: int = 0
    own: int = 0


def _pieces(template: str) -> Iterator[tuple[str | None, str]]:
    """A template in order, piece by piece: ``(name, token)`` for a placeholder, ``(None, text)`` for literal text
    (the two characters ``\\n`` as a line break)."""
    for token in _TOKEN.split(template):
        if token == "\\n":
            yield None, "\n"
        elif _TOKEN.fullmatch(token):
            yield token[1:-1], token
        elif token:
            yield None, token


def placeholders_of(text: str) -> list[str]:
    """The placeholder names of a template, in order."""
    return [name for name, _ in _pieces(text) if name is not None]


def _code_span(cell: str, line: int) -> str:
    found = re.fullmatch(r"(`+)(.+?)\1", cell)
    if found is None:
        raise ValueError(f"line {line}: {cell!r} is not a code span")
    content = found.group(2)
    if content.startswith(" ") and content.endswith(" ") and content.strip():
        content = content[1:-1]
    return content


def parse_catalogue(markdown: str) -> Catalogue:
    """The catalogue of the contract's section "Message catalogue"; ``ValueError`` for a row that does not parse."""
    lines = markdown.splitlines()
    if SECTION not in lines:
        raise ValueError(f"no section {SECTION!r}")
    start = lines.index(SECTION) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    placeholders: dict[str, str] = {}
    templates: list[Template] = []
    family: str | None = None
    items_of: tuple[str, ...] = ()
    for number in range(start, end):
        line, shown = lines[number], number + 1
        if line.startswith("### "):
            heading = line[4:].strip()
            parts = _ITEMS_OF.match(heading)
            family = parts.group("family") if parts else heading
            items_of = tuple(re.findall(r"`<([a-z-]+)>`", parts.group("names"))) if parts else ()
            continue
        if not line.startswith("|") or _TABLE_HEAD.match(line):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if family is None:
            name = _code_span(cells[0], shown)
            if not re.fullmatch(r"<[a-z][a-z-]*>", name) or len(cells) != 2:
                raise ValueError(f"line {shown}: a placeholder row reads '| `<name>` | meaning |'")
            placeholders[name[1:-1]] = cells[1]
            continue
        if len(cells) != 4 or cells[2] not in ("pinned", NOT_PINNED):
            raise ValueError(f"line {shown}: a template row reads '| `template` | rules | pinned | source |'")
        rules = tuple(rule.strip() for rule in cells[1].split(","))
        text = _code_span(cells[0], shown)
        templates.append(Template(text, family, rules, cells[2] == "pinned", items_of, shown))
    return Catalogue(placeholders, tuple(templates))


@cache
def load_catalogue() -> Catalogue:
    """The catalogue of ``docs/contract.md``."""
    return parse_catalogue(CONTRACT.read_text(encoding="utf-8"))


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@cache
def _literal_ends(template: str) -> tuple[str, str]:
    """The text before a template's first placeholder and the text after its last (a template without one: its
    text, twice): every text the template makes begins and ends with them."""
    pieces = list(_pieces(template))
    named = [index for index, (name, _) in enumerate(pieces) if name is not None]
    if not named:
        whole = "".join(text for _, text in pieces)
        return whole, whole
    head = "".join(text for _, text in pieces[: named[0]])
    return head, "".join(text for _, text in pieces[named[-1] + 1 :])


def _walk(node: object) -> Iterator[object]:
    """Every value inside ``node`` (itself included) and every key, without recursion."""
    stack = [node]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _run_parts(scenario: Mapping[str, Any]) -> list[object]:
    return [value for key, value in scenario.items() if key not in _NOT_RUN]


def own_strings(scenario: Mapping[str, Any]) -> set[str]:
    """Every non-empty string the scenario holds (keys included), except its id, rules and descriptions."""
    return {item for item in _walk(_run_parts(scenario)) if isinstance(item, str) and item}


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _is_json(text: str) -> bool:
    """Whether ``text`` is one JSON value (the ``<json>`` placeholder's shape alone also admits other text)."""
    try:
        json.loads(text, parse_constant=_refuse)
    except ValueError:
        return False
    return True


def _refuse(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def own_values(scenario: Mapping[str, Any]) -> set[str]:
    """The JSON text (sorted keys) of every value the scenario holds: a denial reason that is not a string."""
    return {_canonical(item) for item in _walk(_run_parts(scenario))}


class Matcher:
    """The catalogue's templates compiled for one scenario (``<own>`` is that scenario's strings)."""

    def __init__(self, catalogue: Catalogue, own: Iterable[str]) -> None:
        strings = sorted(set(own), key=lambda text: (-len(text), text))
        self.own_pattern = "(?:" + "|".join(re.escape(text) for text in strings) + ")" if strings else "(?!)"
        self.own = set(strings)
        # String() of a value the scenario holds: its own string, a number, a word, an object, an array's items
        printed = rf"(?:{self.own_pattern}|{_NUMBER}|null|true|false|undefined|\[object Object\])"
        self.printed_pattern = rf"(?:{printed}?(?:,{printed}?)*)"
        self.whole = [template for template in catalogue.templates if not template.items_of]
        self.items: dict[str, list[Template]] = {name: [] for name in LISTS}
        for template in catalogue.templates:
            for name in template.items_of:
                self.items.setdefault(name, []).append(template)
        self._patterns: dict[tuple[str, bool], tuple[str, list[tuple[str, str]]]] = {}

    def _simple(self, name: str) -> str:
        if name == "own":
            return self.own_pattern
        if name == "printed":
            return self.printed_pattern
        if name == "mime":
            return f"(?:{self.printed_pattern}|unknown media type)"
        return SIMPLE[name]

    def _list(self, name: str) -> str:
        separator, with_own = LISTS[name]
        choices = [self.pattern(template.text)[0] for template in self.items[name]]
        if with_own:
            # a text block's text as join prints it, nothing when it is empty, missing or null
            choices.append(self.printed_pattern)
        item = "(?:" + "|".join(choices) + ")"
        return item if separator is None else f"{item}(?:{re.escape(separator)}{item})*"

    def pattern(self, text: str, capture: bool = False) -> tuple[str, list[tuple[str, str]]]:
        """The regex of a template, and (when ``capture``) its groups: one per item placeholder or ``<json>``."""
        known = self._patterns.get((text, capture))
        if known is not None:
            return known
        parts: list[str] = []
        groups: list[tuple[str, str]] = []
        for name, token in _pieces(text):
            if name is None:
                parts.append(re.escape(token))
            elif name in LISTS:
                body = self._list(name)
                if capture:
                    group = f"g{len(groups)}"
                    groups.append((group, name))
                    body = f"(?P<{group}>{body})"
                parts.append(body)
            elif name == "json" and capture:
                group = f"j{len(groups)}"
                groups.append((group, name))
                parts.append(f"(?P<{group}>{self._simple(name)})")
            elif name in SIMPLE or name in OWN:
                parts.append(f"(?:{self._simple(name)})")
            else:
                raise ValueError(f"unknown placeholder <{name}> in {text!r}")
        built = ("".join(parts), groups)
        self._patterns[(text, capture)] = built
        return built

    def explain(self, template: Template, text: str) -> set[Template] | None:
        """The templates that make ``text`` (``template`` and the items inside it), or ``None`` when it does not."""
        head, tail = _literal_ends(template.text)
        if not (text.startswith(head) and text.endswith(tail)):
            return None  # cannot match: spares compiling a pattern (milliseconds each) the text never needed
        pattern, groups = self.pattern(template.text, capture=True)
        found = _compiled(pattern).fullmatch(text)
        if found is None:
            return None
        used = {template}
        for group, name in groups:
            if name == "json":
                if not _is_json(found.group(group)):
                    return None
                continue
            inner = self.split(name, found.group(group))
            if inner is None:
                return None
            used |= inner
        return used

    def _item(self, name: str, text: str) -> set[Template] | None:
        for template in self.items[name]:
            used = self.explain(template, text)
            if used is not None:
                return used
        if LISTS[name][1] and _compiled(self.printed_pattern).fullmatch(text) is not None:
            return set()
        return None

    def split(self, name: str, text: str) -> set[Template] | None:
        """The items ``text`` is made of, as the placeholder ``name`` joins them, or ``None``."""
        separator = LISTS[name][0]
        if separator is None:
            return self._item(name, text)
        cuts = [index for index in range(len(text)) if text.startswith(separator, index)]
        ends = [*cuts, len(text)]
        # an item may hold the separator (a <text>), so a text can split more than one way: the most items wins
        reached: dict[int, tuple[int, set[Template]]] = {0: (0, set())}
        whole: tuple[int, set[Template]] | None = None
        for start in sorted({0, *(cut + len(separator) for cut in cuts)}):
            if start not in reached:
                continue
            count, before = reached[start]
            for end in ends:
                if end < start:
                    continue
                used = self._item(name, text[start:end])
                if used is None:
                    continue
                if end == len(text):
                    if whole is None or count + 1 > whole[0]:
                        whole = (count + 1, before | used)
                    continue
                after = end + len(separator)
                if after not in reached or count + 1 > reached[after][0]:
                    reached[after] = (count + 1, before | used)
        return None if whole is None else whole[1]

    def match(self, text: str, expect: str | None) -> set[Template] | None:
        """The templates of a whole message (``expect`` ``None``) or of a text a placeholder must stand for."""
        if expect is not None:
            return self.split(expect, text)
        for template in self.whole:
            used = self.explain(template, text)
            if used is not None:
                return used
        return None


# --- extraction -------------------------------------------------------------------------------------------

ERROR_PREFIX: Final = "Error: "


def _synthesized(content: object) -> str | None:
    """The text after ``Error: `` of a content that is one text block ``Error: <text>`` (R-NORM-8), else None."""
    if not isinstance(content, list) or len(content) != 1:
        return None
    block = content[0]
    if not isinstance(block, dict) or block.get("type") != "text":
        return None
    text = block.get("text")
    if not isinstance(text, str) or not text.startswith(ERROR_PREFIX):
        return None
    return text[len(ERROR_PREFIX) :]


def _result(scenario: str, path: str, result: object) -> Iterator[Extracted]:
    """A failure's message, and its content when that is ``Error: <message>`` (R-NORM-8)."""
    if not isinstance(result, dict) or result.get("isError") is not True:
        return
    error = result.get("error")
    if not isinstance(error, dict) or "message" not in error:
        return
    message = error["message"]
    yield Extracted(scenario, f"{path}.error.message", message)
    if isinstance(message, str) and _synthesized(result.get("content")) == message:
        yield Extracted(scenario, f"{path}.content[0].text", message, verbatim=ERROR_PREFIX + message)


def _tool_results(scenario: str, path: str, message: object) -> Iterator[Extracted]:
    """The ``Error: <message>`` content of each failed tool-result block of a logged or replayed message."""
    blocks = message.get("content") if isinstance(message, dict) else None
    for index, block in enumerate(blocks if isinstance(blocks, list) else ()):
        if isinstance(block, dict) and block.get("type") == "tool-result" and block.get("isError") is True:
            text = _synthesized(block.get("content"))
            if text is not None:
                yield Extracted(
                    scenario, f"{path}.content[{index}].content[0].text", text, verbatim=ERROR_PREFIX + text
                )


def _events(scenario: str, path: str, events: object) -> Iterator[Extracted]:
    for index, event in enumerate(events if isinstance(events, list) else ()):
        data = event.get("data") if isinstance(event, dict) else None
        if not isinstance(data, dict):
            continue
        at = f"{path}[{index}].data"
        if event.get("type") == "tool/result":
            yield from _tool_results(scenario, f"{at}.message", data.get("message"))
        elif event.get("type") == "tool/code-dispatch" and data.get("isError") is True:
            text = _synthesized(data.get("content"))
            if text is not None:
                yield Extracted(scenario, f"{at}.content[0].text", text, verbatim=ERROR_PREFIX + text)


def _reasons(scenario: str, path: str, seen: object) -> Iterator[Extracted]:
    for index, report in enumerate(seen if isinstance(seen, list) else ()):
        signal = report.get("signal") if isinstance(report, dict) else None
        if isinstance(signal, dict) and isinstance(signal.get("reason"), str):
            yield Extracted(scenario, f"{path}[{index}].signal.reason", signal["reason"], "reason")


def _mcp_calls(scenario: Mapping[str, Any]) -> set[str]:
    """The ids of the call steps that call an MCP fixture (by its public name ``mcp__fixture__…``)."""
    tools = scenario.get("tools", {})
    if not any(isinstance(spec, dict) and "mcp" in spec for spec in tools.values()):
        return set()
    return {
        step["id"]
        for step in scenario.get("steps", [])
        if isinstance(step.get("call"), dict) and str(step["call"].get("name", "")).startswith("mcp__fixture__")
    }


def _content_texts(result: object) -> Iterator[tuple[int, str]]:
    content = result.get("content") if isinstance(result, dict) else None
    for index, block in enumerate(content if isinstance(content, list) else ()):
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            yield index, block["text"]


def extract(scenario: Mapping[str, Any], transcript: Mapping[str, Any]) -> Iterator[Extracted]:
    """Every message of a transcript, with its JSON path, in transcript order.

    The paths read (``<key>`` a fixture key, ``<step>`` a step id, ``<i>``, ``<j>``, ``<k>`` indices):

    - ``$.registrations.<key>.registerError.message``;
    - ``$.steps.<step>.result.error.message`` and ``$.steps.<step>.nested[<i>].result.error.message``, and the
      ``content[0].text`` beside each, after ``Error: ``, when the content is that one text block (R-NORM-8);
    - ``$.steps.<step>.nested[<i>].received.error`` (what a program received, R-NEST-4);
    - ``$.steps.<step>.error.message`` (a ``schemas`` or ``persist`` step's error);
    - ``$.steps.<step>.events[<j>].data.message.content[<k>].content[0].text`` of a failed ``tool/result``,
      ``$.steps.<step>.events[<j>].data.content[0].text`` of a failed ``tool/code-dispatch`` and
      ``$.steps.<step>.messages[<j>].content[<k>].content[0].text`` of a failed replayed result, each after
      ``Error: `` when the content is that one text block;
    - ``$.steps.<step>.seen[<j>].signal.reason`` and ``…nested[<i>].seen[<j>].signal.reason``: a ``<reason>``;
    - ``$.steps.<step>.result.content[<k>].text`` of a successful call of an MCP fixture: a ``<projection>``;
    - in a scenario with the spill policy, ``$.steps.<step>.result.content[<k>].text`` when its last paragraph
      (after the last blank line) is parenthesized: that paragraph, the spill notice.

    A failure's ``error.message`` that is not a string is a denial reason the scenario gave (R-PRE-8), extracted
    as that value. A failure's content that is not ``Error: <message>`` was made after the failure (a finalizer,
    a content replacement, block feedback, a wrapper's failure), so it is not the message and is left out.
    """
    identifier = str(scenario.get("id", transcript.get("scenario", "")))
    for key, entry in (transcript.get("registrations") or {}).items():
        error = entry.get("registerError") if isinstance(entry, dict) else None
        if isinstance(error, dict) and "message" in error:
            yield Extracted(identifier, f"$.registrations.{key}.registerError.message", error["message"])
    mcp_calls = _mcp_calls(scenario)
    spill = "spill" in scenario
    for step, outcome in (transcript.get("steps") or {}).items():
        if not isinstance(outcome, dict):
            continue
        at = f"$.steps.{step}"
        result = outcome.get("result")
        yield from _result(identifier, f"{at}.result", result)
        if isinstance(result, dict) and result.get("isError") is False:
            for index, text in _content_texts(result):
                path = f"{at}.result.content[{index}].text"
                if step in mcp_calls:
                    yield Extracted(identifier, path, text, "projection")
                if spill:
                    last = text.rsplit("\n\n", 1)[-1]
                    if last.startswith("(") and last.endswith(")"):
                        yield Extracted(identifier, path, last, verbatim=text)
        yield from _reasons(identifier, f"{at}.seen", outcome.get("seen"))
        for index, entry in enumerate(outcome.get("nested") or ()):
            nested = f"{at}.nested[{index}]"
            received = entry.get("received") if isinstance(entry, dict) else None
            if isinstance(received, dict) and "error" in received:
                yield Extracted(identifier, f"{nested}.received.error", received["error"])
            if isinstance(entry, dict):
                yield from _result(identifier, f"{nested}.result", entry.get("result"))
                yield from _reasons(identifier, f"{nested}.seen", entry.get("seen"))
        error = outcome.get("error")
        if isinstance(error, dict) and "message" in error:
            yield Extracted(identifier, f"{at}.error.message", error["message"])
        yield from _events(identifier, f"{at}.events", outcome.get("events"))
        for index, message in enumerate(outcome.get("messages") or ()):
            yield from _tool_results(identifier, f"{at}.messages[{index}]", message)


def check(
    catalogue: Catalogue, scenario: Mapping[str, Any], transcript: Mapping[str, Any], findings: Findings | None = None
) -> Findings:
    """Match every message of a transcript against the catalogue; the scenario's own text is told apart.

    A message the scenario holds verbatim (a string anywhere in what it runs), or whose whole text it holds (a
    content ``Error: <message>`` it wrote itself), is its own text, and so is a message that is not a string but
    a value it holds; everything else must match a template.
    """
    findings = findings if findings is not None else Findings()
    own, values = own_strings(scenario), own_values(scenario)
    matcher = Matcher(catalogue, own)
    for item in extract(scenario, transcript):
        message = item.message
        if not isinstance(message, str):
            if _canonical(message) in values:
                findings.own += 1
            else:
                findings.unmatched.append(item)
            continue
        if item.expect is None and (message in own or item.verbatim in own):
            findings.own += 1
            continue
        used = matcher.match(message, item.expect)
        if used is None:
            findings.unmatched.append(item)
        else:
            findings.matched += 1
            findings.used |= used
    return findings
