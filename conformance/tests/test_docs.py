"""The docs match the code: every rule exercised, every cited test and path present, the README commands true."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"


@pytest.fixture(scope="module")
def check_docs():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(TOOLS))
    try:
        import check_docs

        yield check_docs
    finally:
        sys.path.remove(str(TOOLS))


def test_every_rule_is_exercised(check_docs) -> None:  # type: ignore[no-untyped-def]
    assert check_docs.unexercised_rules() == []


def test_cited_tests_and_paths_exist(check_docs) -> None:  # type: ignore[no-untyped-def]
    assert check_docs.broken_references() == []


def test_readme_commands(check_docs) -> None:  # type: ignore[no-untyped-def]
    assert check_docs.readme_problems() == []


def test_a_broken_citation_is_reported(check_docs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("see `reference/tests/test_nothing.py::test_gone` and `fixtures/none.json`")
    (tmp_path / "README.md").write_text("no commands")
    monkeypatch.setattr(check_docs, "ROOT", tmp_path)
    problems = check_docs.broken_references()
    assert "x.md: cites missing test file reference/tests/test_nothing.py" in problems
    assert "x.md: names missing path fixtures/none.json" in problems


def test_the_readme_python_example_runs() -> None:
    """The README's example is real code: it runs, and its assertions hold."""
    import re

    readme = (TOOLS.parent / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
