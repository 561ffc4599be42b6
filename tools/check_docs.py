"""Check that the docs match the code: rules are exercised, cited tests, files, rules and scenarios exist.

Run by ``nox -s docs`` (and by the test suite). Prints every problem and exits 1 when there is any.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = ("reference", "conformance")
TEST_REFERENCE = re.compile(r"`((?:reference|conformance)/tests/[\w/]+\.py|test_\w+\.py)::(\w+)")
FILE_REFERENCE = re.compile(r"`((?:reference|conformance|fixtures|snapshots|docs|bench)/[\w./-]+)`")
RULE_REFERENCE = re.compile(r"\bR-[A-Z]+-[0-9]+\b")
CODE = re.compile(r"```[^\n]*\n(.*?)```|`((?:[^`\n]|\n(?!\n))+)`", re.S)
SCENARIO_MENTION = re.compile(r"\bS:([A-Za-z0-9][A-Za-z0-9._:-]*[A-Za-z0-9])")
SELECTION = re.compile(r"(?<![\w-])-k[ =]+(?P<quote>[\"']?)(?P<pattern>[^\s\"'`]+)(?P=quote)")
TEST_ID = re.compile(r"test_scenario\[([^\]\s]+)\]")
JSON_SCENARIO = re.compile(r'"scenario":\s*"([^"]+)"')
OUTCOME_LINE = re.compile(r"^\s+([a-z0-9][a-z0-9.-]*) (?:failed|errored|skipped|passed) \[", re.M)
UNRESPONSIVE_LAST = re.compile(r"in a row went unanswered.*?the last ([a-z0-9][a-z0-9.-]*):", re.S)
ID_SHAPE = re.compile(r"(?<![\w./:$\[-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/-]|\.(?:json|py|md|mjs)\b)")
NOT_SCENARIO_IDS = frozenset(
    {
        # names that share a scenario family's first word but name something else
        "spill-policy",  # the original's package folder
        "replay-includes-tool-calls",  # a deliberately broken implementation (conformance/tests)
    }
)
README_COMMANDS = [
    "python3 -m pip install 'nox[uv]' && nox -s conformance",
    "python3 -m pip install 'nox[uv]' && nox -s tests",
]


def unexercised_rules() -> list[str]:
    """Rule ids of docs/contract.md that no scenario lists."""
    sys.path.insert(0, str(ROOT / "conformance"))
    from toolcanon_conformance.rules import load_rules
    from toolcanon_conformance.scenario import load_scenarios

    exercised = {rule for scenario in load_scenarios() for rule in scenario.rules}
    return [f"rule {rule.id} is exercised by no scenario" for rule in load_rules() if rule.id not in exercised]


def _test_file(name: str) -> Path | None:
    if "/" in name:
        path = ROOT / name
        return path if path.exists() else None
    # the two distributions' test folders only: "*/tests" would take in a virtualenv's (.nox/tests) too
    found = sorted(path for folder in DISTRIBUTIONS for path in (ROOT / folder / "tests").glob(f"**/{name}"))
    return found[0] if found else None


def broken_references() -> list[str]:
    """Cited tests (``file::test``) and repository paths that do not exist."""
    problems = []
    for document in _documents():
        text = document.read_text(encoding="utf-8")
        for file_name, test_name in TEST_REFERENCE.findall(text):
            path = _test_file(file_name)
            if path is None:
                problems.append(f"{document.name}: cites missing test file {file_name}")
            elif not re.search(rf"def {test_name}\b", path.read_text(encoding="utf-8")):
                problems.append(f"{document.name}: cites missing test {file_name}::{test_name}")
        for reference in FILE_REFERENCE.findall(text):
            cleaned = reference.rstrip(".,")
            if "<" in cleaned or "*" in cleaned:
                continue
            if not (ROOT / cleaned).exists():
                problems.append(f"{document.name}: names missing path {cleaned}")
    return problems


def _documents() -> list[Path]:
    return [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]


def _code(text: str) -> Iterator[tuple[str, bool]]:
    """The text of every fenced code block and code span of a Markdown document, and whether it is a span."""
    for block, span in CODE.findall(text):
        yield (span, True) if span else (block, False)


def _rule_ids() -> set[str]:
    rules = json.loads((ROOT / "conformance/toolcanon_conformance/data/rules.json").read_text(encoding="utf-8"))
    return {rule["id"] for rule in rules}


def _scenario_ids() -> set[str]:
    """The kit's scenario ids (a scenario file is named by its id)."""
    return {path.stem for path in (ROOT / "fixtures" / "scenarios").glob("*.json")}


def _upstream_ids() -> set[str]:
    """The ids of the scenarios recorded from the contract's first implementation (fixtures/upstream)."""
    ids = set()
    for path in (ROOT / "fixtures" / "upstream").glob("*/*.json"):
        document = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(document, dict) and isinstance(document.get("id"), str):
            ids.add(document["id"])
    return ids


def _vocabulary() -> set[str]:
    """Every string a JSON Schema of the kit names (kinds, stages, capabilities, exotic tags): not scenario ids."""
    words: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, item in node.items():
                if key == "const" and isinstance(item, str):
                    words.add(item)
                elif key == "enum" and isinstance(item, list):
                    words.update(word for word in item if isinstance(word, str))
                else:
                    walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for path in (ROOT / "conformance/toolcanon_conformance/schemas").glob("*.schema.json"):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return words


def unknown_ids() -> list[str]:
    """Rule ids and scenario ids the docs quote that do not exist.

    A rule id is any ``R-<SECTION>-<n>``. A scenario id is recognised by where it stands: ``S:<id>``, a ``-k``
    selection in a command (which must select at least one scenario), ``test_scenario[<id>]``, a baseline's
    ``"scenario": "<id>"`` (in a block holding ``knownFailures``), a scenario line of the check's output (or the
    last one an unresponsive implementation left unanswered), or a code span (not a code block, whose JSON holds
    step ids) shaped like an id whose first word is a scenario family's (``args-``, ``nest-``, …) and that is no
    word of the schemas.
    """
    rules, scenarios = _rule_ids(), _scenario_ids()
    known = scenarios | _upstream_ids()
    families = {identifier.split("-", 1)[0] for identifier in scenarios if "-" in identifier}
    vocabulary = _vocabulary() | NOT_SCENARIO_IDS
    problems: list[str] = []
    for document in _documents():
        text = document.read_text(encoding="utf-8")
        found: list[str] = []
        for rule in sorted(set(RULE_REFERENCE.findall(text)) - rules):
            found.append(f"quotes unknown rule {rule}")
        for identifier in SCENARIO_MENTION.findall(text):
            if identifier not in scenarios:
                found.append(f"quotes unknown scenario S:{identifier}")
        for code, span in _code(text):
            for match in SELECTION.finditer(code):
                pattern = match.group("pattern")
                if pattern.isupper() or "<" in pattern or "…" in pattern or "$" in pattern:
                    continue  # a placeholder
                if not any(pattern.lower() in identifier.lower() for identifier in scenarios):
                    found.append(f"selects no scenario with -k {pattern}")
            quoted = [
                *TEST_ID.findall(code),
                *(JSON_SCENARIO.findall(code) if '"knownFailures"' in code else ()),
                *OUTCOME_LINE.findall(code),
                *UNRESPONSIVE_LAST.findall(code),
            ]
            for identifier in quoted:
                if identifier not in scenarios and "<" not in identifier and "…" not in identifier:
                    found.append(f"quotes unknown scenario {identifier}")
            for identifier in ID_SHAPE.findall(code) if span else ():
                if identifier.split("-", 1)[0] in families and identifier not in known | vocabulary:
                    found.append(f"quotes unknown scenario {identifier}")
        problems.extend(f"{document.name}: {problem}" for problem in dict.fromkeys(found))
    return problems


def readme_problems() -> list[str]:
    """The README must open with the two commands, and .ci/run must run the second one."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    opening = readme.split("```", 2)[1] if readme.count("```") >= 2 else ""
    problems = [f"README does not open with: {command}" for command in README_COMMANDS if command not in opening]
    if README_COMMANDS[1] not in (ROOT / ".ci" / "run").read_text(encoding="utf-8"):
        problems.append(".ci/run does not run the README's test command")
    return problems


def main() -> int:
    problems = unexercised_rules() + broken_references() + unknown_ids() + readme_problems()
    for problem in problems:
        print(problem)
    print(f"docs check: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
