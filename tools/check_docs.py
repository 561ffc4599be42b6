"""Check that the docs match the code: rules are exercised, cited tests, files, linked sections, rules and scenarios
exist, and the counts and versions they print are the suite's now.

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
#: A Markdown link to a section: of another document (``](protocol-examples.md#steps)``) or of this one (``](#steps)``).
SECTION_LINK = re.compile(r"\]\((?P<file>[\w./-]+\.md)?#(?P<anchor>[\w-]+)\)")
HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.M)
FENCED = re.compile(r"^```.*?^```$", re.M | re.S)
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
    """Cited tests (``file::test``), repository paths and linked sections (``](file.md#anchor)``) that do not exist."""
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
        for link in SECTION_LINK.finditer(text):
            target = document.parent / link["file"] if link["file"] else document
            if not target.is_file():
                problems.append(f"{document.name}: links to missing file {link['file']}")
            elif link["anchor"] not in anchors(target.read_text(encoding="utf-8")):
                problems.append(f"{document.name}: links to missing section {link['file'] or ''}#{link['anchor']}")
    return problems


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown document (a repeated one gains ``-1``, ``-2``, …)."""
    found: set[str] = set()
    for heading in HEADING.findall(FENCED.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        unique, count = slug, 0
        while unique in found:
            count += 1
            unique = f"{slug}-{count}"
        found.add(unique)
    return found


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


def _known_disagreement_ids() -> set[str]:
    """The ids of the implementations' known disagreements (``implementations/*/fuzz-known.json``), no scenarios."""
    ids = set()
    for path in (ROOT / "implementations").glob("*/fuzz-known.json"):
        ids.update(entry["id"] for entry in json.loads(path.read_text(encoding="utf-8"))["knownDisagreements"])
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
    known = scenarios | _upstream_ids() | _known_disagreement_ids()
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


#: Documents that record dated runs (a measurement, a change): their counts are history, not the suite's now.
HISTORY = frozenset({"CHANGELOG.md", "performance.md", "mutation.md"})
COUNTS = re.compile(
    r"(?P<passed>\d+) passed, (?P<failed>\d+) failed, (?P<errored>\d+) errored, (?P<skipped>\d+) skipped"
    r"(?:, (?P<known>\d+) known)?(?:, (?P<stale>\d+) stale)? of (?P<total>\d+) scenarios"
)
GOLDEN_COUNTS = re.compile(r"goldens: (?P<counts>[a-z][a-z0-9-]*: \d+(?:, [a-z][a-z0-9-]*: \d+)*)")
BADGE_COUNTS = re.compile(r"\b(?P<passed>\d+)/(?P<total>\d+) passed\b")
SUITE_SIZE = re.compile(r"\bof (?P<total>\d+) scenarios\b")  # a run's total
CASES_HEADER = re.compile(r"^(?P<total>\d+) scenarios$")  # the first line of toolcanon cases
REFERENCE_RUN = re.compile(r"toolcanon (?P<version>\d+\.\d+\.\d+) \(python\): [A-Z ]+(?:\([^)]*\))?: ")
REFERENCE_END = re.compile(REFERENCE_RUN.pattern + "$")
VERSION_MENTION = re.compile(r"\btoolcanon(?:-conformance)?[ =~]=?(?P<version>\d+\.\d+\.\d+)\b")
#: A count above this is of the whole suite: the docs' examples of a selection select fewer scenarios.
WHOLE_SUITE = 100


def _suite_counts() -> tuple[int, dict[str, int]]:
    """The number of bundled scenarios, and how many goldens come from each source."""
    from toolcanon_conformance.golden_source import count_sources, golden_source_of

    scenarios = [json.loads(path.read_text("utf-8")) for path in (ROOT / "fixtures" / "scenarios").glob("*.json")]
    return len(scenarios), count_sources(golden_source_of(scenario) for scenario in scenarios)


def _version() -> str:
    found = re.search(r'^__version__ = "([^"]+)"$', (ROOT / "reference" / "toolcanon" / "__init__.py").read_text(
        "utf-8"), re.M)  # fmt: skip
    return found.group(1) if found else "unknown"


def _current_documents() -> list[Path]:
    readmes = [ROOT / "README.md", *(ROOT / folder / "README.md" for folder in DISTRIBUTIONS)]
    readmes += sorted((ROOT / "implementations").glob("*/README.md"))
    documents = dict.fromkeys([*readmes, *_documents()])
    return [path for path in documents if path.is_file() and path.name not in HISTORY]


def stale_counts() -> list[str]:
    """Counts and versions the docs print that are not the suite's now.

    A run's counts (``P passed, F failed, E errored, S skipped … of T scenarios``) add up to their total; a total
    above :data:`WHOLE_SUITE` is the whole suite's; a ``goldens:`` line of the whole suite gives each source's
    count; the reference's own run of the whole suite passes every golden it is the source of and skips the rest;
    a version of the distributions is the current one. Dated records (:data:`HISTORY`) keep their counts.
    """
    total, sources = _suite_counts()
    version = _version()
    problems: list[str] = []
    for document in _current_documents():
        text = document.read_text(encoding="utf-8")
        found: list[str] = []
        # a line of prose may wrap inside a count: each line is read joined to the next
        lines = text.splitlines()
        for alone, after in zip(lines, [*lines[1:], ""], strict=True):
            line = f"{alone.rstrip()} {after.lstrip()}"
            for run in COUNTS.finditer(line):
                counts = {name: int(value or 0) for name, value in run.groupdict().items()}
                parts = sum(counts[name] for name in ("passed", "failed", "errored", "skipped", "known", "stale"))
                if parts != counts["total"]:
                    found.append(f"counts {run.group(0)!r} add up to {parts}, not {counts['total']}")
                reference = REFERENCE_END.search(line[: run.start()])
                if counts["total"] > WHOLE_SUITE and reference is not None:
                    own = sources.get("reference", 0)
                    if (counts["passed"], counts["skipped"]) != (own, total - own):
                        found.append(f"the reference's run {run.group(0)!r}: it passes {own} and skips {total - own}")
            for size in (*SUITE_SIZE.finditer(line), *CASES_HEADER.finditer(alone)):
                count = int(size.group("total"))
                if count > WHOLE_SUITE and count != total:
                    found.append(f"{size.group(0)!r}: the suite has {total} scenarios")
            for badge in BADGE_COUNTS.finditer(line):
                if int(badge.group("total")) > WHOLE_SUITE and int(badge.group("total")) != total:
                    found.append(f"{badge.group(0)!r}: the suite has {total} scenarios")
            for golden in GOLDEN_COUNTS.finditer(line):
                shown = {name: int(count) for name, _, count in (part.partition(": ") for part in
                         golden.group("counts").split(", "))}  # fmt: skip
                if sum(shown.values()) > WHOLE_SUITE and shown != sources:
                    actual = ", ".join(f"{name}: {count}" for name, count in sources.items())
                    found.append(f"{golden.group(0)!r}: the suite's goldens are {actual}")
            for mention in (*VERSION_MENTION.finditer(line), *REFERENCE_RUN.finditer(line)):
                if mention.group("version") != version:
                    found.append(f"{mention.group(0).strip()!r}: the version is {version}")
        problems.extend(f"{document.name}: {problem}" for problem in dict.fromkeys(found))
    return problems


def main() -> int:
    problems = unexercised_rules() + broken_references() + unknown_ids() + readme_problems() + stale_counts()
    for problem in problems:
        print(problem)
    print(f"docs check: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
