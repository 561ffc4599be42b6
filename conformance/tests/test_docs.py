"""The docs match the code: every rule exercised, every cited test, path, rule and scenario present, the README true."""

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


def test_a_link_to_a_missing_section_is_reported(check_docs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text(
        "# X\n\n## `toolcanon check`: a run\n\n```\n# not a heading\n```\n\n"
        "[ok](#toolcanon-check-a-run) [ok](y.md#steps) [gone](y.md#not-a-heading) [gone](#x-1) [no file](z.md#steps)\n"
    )
    (tmp_path / "docs" / "y.md").write_text("# Y\n\n### Steps\n")
    (tmp_path / "README.md").write_text("no commands")
    monkeypatch.setattr(check_docs, "ROOT", tmp_path)
    assert check_docs.broken_references() == [
        "x.md: links to missing section y.md#not-a-heading",
        "x.md: links to missing section #x-1",
        "x.md: links to missing file z.md",
    ]


def test_quoted_rule_and_scenario_ids_exist(check_docs) -> None:  # type: ignore[no-untyped-def]
    assert check_docs.unknown_ids() == []


def test_an_unknown_rule_or_scenario_is_reported(check_docs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    document = tmp_path / "x.md"
    document.write_text(
        "`R-POST-4` and `R-POST-99`; S:post-accept-value and S:post-gone.\n\n"
        "```\ntoolcanon check -k post-accept-value\ntoolcanon check -k no-such-scenario -k PATTERN\n```\n\n"
        '```json\n{"knownFailures": [{"scenario": "nest-outer-aborted"}, {"scenario": "nest-nothing"}]}\n```\n\n'
        "see `args-not-object`, `args-renamed-away`, `post-execute` and `test_scenario[val-gone]`\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(check_docs, "_documents", lambda: [document])
    assert check_docs.unknown_ids() == [
        "x.md: quotes unknown rule R-POST-99",
        "x.md: quotes unknown scenario S:post-gone",
        "x.md: selects no scenario with -k no-such-scenario",
        "x.md: quotes unknown scenario nest-nothing",
        "x.md: quotes unknown scenario args-renamed-away",
        "x.md: quotes unknown scenario val-gone",
    ]


def test_the_readme_python_example_runs() -> None:
    """The README's example is real code: it runs, and its assertions hold."""
    import re

    readme = (TOOLS.parent / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


# --- the kit guide's option tables ----------------------------------------------------------------------

KIT_GUIDE = TOOLS.parent / "docs" / "kit.md"


def _guide_options(heading: str) -> set[str]:
    """The options named in the first column of the option table under ``heading`` in docs/kit.md."""
    import re

    text = KIT_GUIDE.read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    table = section.split("\n| option | meaning |\n", 1)[1].split("\n\n", 1)[0]
    cells = [row.split(" | ", 1)[0] for row in table.splitlines() if row.startswith("| `")]
    return {option for cell in cells for option in re.findall(r"`(--?[A-Za-z][\w-]*)", cell)}


def test_the_guide_lists_every_option_of_check_and_no_other(capsys: pytest.CaptureFixture[str]) -> None:
    import re

    from toolcanon_conformance.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["check", "--help"])
    assert exit_.value.code == 0
    usage = capsys.readouterr().out.split("\noptions:", 1)[0]
    listed = set(re.findall(r"\[(--?[A-Za-z][\w-]*)", usage)) - {"-h"}
    assert "--max-failures" in listed and "-k" in listed
    assert _guide_options("## `toolcanon check`") == listed


def test_the_guide_lists_every_option_of_the_plugin_and_no_other() -> None:
    from toolcanon_conformance import plugin

    added: list[str] = []

    class Group:
        def addoption(self, *names: str, **settings: object) -> None:
            added.extend(names)

    class Parser:
        def getgroup(self, *arguments: object, **settings: object) -> Group:
            return Group()

    plugin.pytest_addoption(Parser())  # type: ignore[arg-type]
    assert {"--require", "--fail-on-skip", "--max-failures"} <= set(added)
    # --timeout is added later, once no other plugin is known to have it (pytest-timeout has its own).
    assert _guide_options("## The pytest plugin") == set(added) | {"--timeout"}


def test_the_counts_the_docs_print_are_current(check_docs) -> None:  # type: ignore[no-untyped-def]
    assert check_docs.stale_counts() == []


def test_a_stale_count_or_version_is_reported(check_docs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    total, sources = check_docs._suite_counts()
    own = sources["reference"]
    version = check_docs._version()
    document = tmp_path / "x.md"
    document.write_text(
        "```\n"
        f"goldens: reference: {own - 1}, typescript-dsh-tools: {total - own}\n"
        f"FAIL: 150 passed, 1 failed, 0 errored, 2 skipped of {total} scenarios in 1.84 s\n"
        f"toolcanon: toolcanon {version} (python): PASS: {own} passed, 0 failed, 0 errored, 0 skipped, "
        f"{total - own} known of {total} scenarios in 2.12 s\n"
        f"INTERRUPTED (after 12 of {total - 1} scenarios)\n"
        f"{total + 1} scenarios\n"
        "```\n\n"
        f'`{{"message": "{own}/{total - 2} passed"}}`, `toolcanon~=0.0.1`, and a selection: '
        f"`PASS: 2 passed, 0 failed, 0 errored, 1 skipped of 3 scenarios`, `goldens: reference: 1`\n",
        encoding="utf-8",
    )
    (tmp_path / "CHANGELOG.md").write_text(f"0 passed, 0 failed, 0 errored, 0 skipped of {total - 1} scenarios\n")
    monkeypatch.setattr(check_docs, "_current_documents", lambda: [document])
    assert check_docs.stale_counts() == [
        f"x.md: 'goldens: reference: {own - 1}, typescript-dsh-tools: {total - own}': the suite's goldens are "
        f"reference: {own}, typescript-dsh-tools: {total - own}",
        f"x.md: counts '150 passed, 1 failed, 0 errored, 2 skipped of {total} scenarios' add up to 153, not {total}",
        f"x.md: the reference's run '{own} passed, 0 failed, 0 errored, 0 skipped, {total - own} known of {total} "
        f"scenarios': it passes {own} and skips {total - own}",
        f"x.md: 'of {total - 1} scenarios': the suite has {total} scenarios",
        f"x.md: '{total + 1} scenarios': the suite has {total} scenarios",
        f"x.md: '{own}/{total - 2} passed': the suite has {total} scenarios",
        f"x.md: 'toolcanon~=0.0.1': the version is {version}",
    ]


def test_history_keeps_its_counts(check_docs) -> None:  # type: ignore[no-untyped-def]
    names = {path.name for path in check_docs._current_documents()}
    assert "kit.md" in names and "README.md" in names
    assert not names & {"CHANGELOG.md", "performance.md", "mutation.md"}


def test_a_wrapped_count_is_read_whole(check_docs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    total, _ = check_docs._suite_counts()
    document = tmp_path / "x.md"
    document.write_text(f"Prose: `PASS: 1 passed, 0 failed, 0 errored,\n  0 skipped of {total} scenarios` ends.\n")
    monkeypatch.setattr(check_docs, "_current_documents", lambda: [document])
    assert check_docs.stale_counts() == [
        f"x.md: counts '1 passed, 0 failed, 0 errored, 0 skipped of {total} scenarios' add up to 1, not {total}"
    ]
