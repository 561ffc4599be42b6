"""Check that the docs match the code: rules are exercised, cited tests and files exist, the README is true.

Run by ``nox -s docs`` (and by the test suite). Prints every problem and exits 1 when there is any.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_REFERENCE = re.compile(r"`((?:reference|conformance)/tests/[\w/]+\.py|test_\w+\.py)::(\w+)")
FILE_REFERENCE = re.compile(r"`((?:reference|conformance|fixtures|snapshots|docs|bench)/[\w./-]+)`")
README_COMMANDS = ["python3 -m pip install nox && nox -s conformance", "python3 -m pip install nox && nox -s tests"]


def unexercised_rules() -> list[str]:
    """Rule ids of docs/contract.md that no scenario lists."""
    sys.path.insert(0, str(ROOT / "conformance"))
    from toolcontract_conformance.rules import load_rules
    from toolcontract_conformance.scenario import load_scenarios

    exercised = {rule for scenario in load_scenarios() for rule in scenario.rules}
    return [f"rule {rule.id} is exercised by no scenario" for rule in load_rules() if rule.id not in exercised]


def _test_file(name: str) -> Path | None:
    if "/" in name:
        path = ROOT / name
        return path if path.exists() else None
    found = sorted(ROOT.glob(f"*/tests/**/{name}"))
    return found[0] if found else None


def broken_references() -> list[str]:
    """Cited tests (``file::test``) and repository paths that do not exist."""
    problems = []
    for document in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
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


def readme_problems() -> list[str]:
    """The README must open with the two commands, and .ci/run must run the second one."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    opening = readme.split("```", 2)[1] if readme.count("```") >= 2 else ""
    problems = [f"README does not open with: {command}" for command in README_COMMANDS if command not in opening]
    if README_COMMANDS[1] not in (ROOT / ".ci" / "run").read_text(encoding="utf-8"):
        problems.append(".ci/run does not run the README's test command")
    return problems


def main() -> int:
    problems = unexercised_rules() + broken_references() + readme_problems()
    for problem in problems:
        print(problem)
    print(f"docs check: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
