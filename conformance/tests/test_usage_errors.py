"""What a mistake on the command line gives: one line naming it, no traceback, exit status 2 (``docs/kit.md``,
"Exit status, the same for every command"), in the ``toolcanon`` commands and in the pytest plugin alike."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_suite import write_suite

from toolcanon_conformance.cli import main
from toolcanon_conformance.protocol import UnknownCapability, known_capabilities, resolve_capabilities
from toolcanon_conformance.render_cli import render_command


@pytest.fixture
def suite(tmp_path: Path) -> list[str]:
    scenarios, goldens = write_suite(tmp_path / "suite")
    return ["--scenarios", str(scenarios), "--goldens", str(goldens)]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh current folder that is not on the import path (as for the installed ``toolcanon`` script),
    with ``sys.path`` and ``sys.modules`` as they were afterwards."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry not in ("", ".", str(folder))])
    yield folder
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(folder)):
            del sys.modules[name]


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """Standard error, which must be exactly one line with nothing on standard output; that line."""
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert captured.out == "", captured.out
    assert captured.err.count("\n") == 1 and captured.err.endswith("\n"), captured.err
    return captured.err.rstrip("\n")


def plugin_run(tmp_path: Path, *arguments: str) -> tuple[int, str]:
    """``pytest --pyargs toolcanon_conformance`` in this process on the fake suite; its status and output."""
    scenarios, goldens = write_suite(Path(tempfile.mkdtemp(dir=tmp_path)))
    command = ["--pyargs", "toolcanon_conformance", "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path)]
    command += ["--scenarios", str(scenarios), "--goldens", str(goldens), *arguments]
    output = io.StringIO()
    gc.freeze()  # the inner session's collections then walk its own objects only
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        status = pytest.main(command)
    return int(status), output.getvalue()


def plugin_error(output: str) -> str:
    """The plugin's one ``ERROR:`` line (as ``pytest.exit`` shows it), with nothing about any test."""
    assert "Traceback" not in output and "test_scenario[" not in output and "passed" not in output, output
    lines = [line for line in output.splitlines() if "ERROR: " in line]
    assert len(lines) == 1, output
    found = re.fullmatch(r"(?:! )?(?:_pytest\.outcomes\.)?Exit: ERROR: (.*?)(?: !)?", lines[0])
    assert found is not None, lines[0]
    return found.group(1)


# --- --impl MODULE:ATTR ----------------------------------------------------------------------------------


def test_an_impl_module_that_does_not_exist_is_one_line(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--impl", "no.such.module:impl", *suite]) == 2
    assert one_error_line(capsys) == (
        "toolcanon check: --impl no.such.module:impl: cannot import 'no.such.module': No module named 'no'"
    )


def test_an_impl_file_is_imported_by_its_path(here: Path, suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    (here / "by_path_adapter.py").write_text("from fake_suite import implementation\n", encoding="utf-8")
    assert main(["check", "--impl", "./by_path_adapter.py:implementation", *suite, "-k", "ok-"]) == 0
    assert "PASS: 2 passed, 0 failed, 0 errored, 1 skipped of 3 scenarios" in capsys.readouterr().out
    assert main(["check", "--impl", "by_path_adapter.py:implementation", *suite, "-k", "ok-"]) == 0
    assert "PASS: 2 passed" in capsys.readouterr().out


def test_an_impl_file_whose_attribute_is_no_implementation_is_one_line(
    here: Path, suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "returns_one.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    assert main(["check", "--impl", "./returns_one.py:main", *suite]) == 2
    assert one_error_line(capsys) == (
        "toolcanon check: --impl ./returns_one.py:main: 'main' of './returns_one.py' returned an int, not an "
        "implementation (an object with start, run and stop, or a class or factory returning one)"
    )


def test_an_impl_file_that_raises_names_where_in_one_line(
    here: Path, suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "raises_on_import.py").write_text("import os\nraise RuntimeError('no registry')\n", encoding="utf-8")
    assert main(["check", "--impl", "./raises_on_import.py:implementation", *suite]) == 2
    assert one_error_line(capsys) == (
        "toolcanon check: --impl ./raises_on_import.py:implementation: cannot import './raises_on_import.py': "
        f"RuntimeError: no registry (at {here / 'raises_on_import.py'}:2)"
    )


@pytest.mark.parametrize(
    ("target", "line"),
    [
        (
            "./absent.py:implementation",
            "cannot import './absent.py': no such file (MODULE:ATTR takes a dotted module name, "
            "pkg.adapter:implementation, or a Python file, ./adapter.py:implementation)",
        ),
        (
            "my-adapter:implementation",
            "'my-adapter' is not a module name: MODULE:ATTR takes a dotted module name, pkg.adapter:implementation, "
            "or a Python file, ./adapter.py:implementation",
        ),
        (
            "beside:implementation",
            "cannot import 'beside': No module named 'beside' (beside.py is in the current folder, which is not on "
            "the import path: give the file, ./beside.py:implementation, or set PYTHONPATH=.)",
        ),
    ],
)
def test_an_impl_that_is_not_a_module_name_says_which_forms_there_are(
    here: Path, capsys: pytest.CaptureFixture[str], target: str, line: str
) -> None:
    (here / "beside.py").write_text("implementation = None\n", encoding="utf-8")
    assert main(["smoke", "--impl", target]) == 2
    assert one_error_line(capsys) == f"toolcanon smoke: --impl {target}: {line}"


def test_the_plugin_gives_an_impl_that_cannot_be_imported_one_line(tmp_path: Path) -> None:
    status, output = plugin_run(tmp_path, "--impl", "no.such.module:impl")
    assert status == 2
    assert plugin_error(output) == "--impl no.such.module:impl: cannot import 'no.such.module': No module named 'no'"


def test_the_plugin_gives_an_impl_file_that_is_no_implementation_one_line(tmp_path: Path, here: Path) -> None:
    (here / "returns_two.py").write_text("def main():\n    return 2\n", encoding="utf-8")
    status, output = plugin_run(tmp_path, "--impl", "./returns_two.py:main")
    assert status == 2
    assert plugin_error(output) == (
        "--impl ./returns_two.py:main: 'main' of './returns_two.py' returned an int, not an implementation "
        "(an object with start, run and stop, or a class or factory returning one)"
    )


# --- report and replay -----------------------------------------------------------------------------------


@pytest.fixture
def saved_report(suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    report = tmp_path / "r.json"
    main(["check", "--impl", "fake_suite:implementation", *suite, "-k", "ok-", "--report", str(report)])
    capsys.readouterr()
    return report


def test_report_into_a_folder_that_does_not_exist_is_one_line(
    saved_report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nodir"
    assert main(["report", str(saved_report), "--format", "md", "-o", str(missing / "x.md")]) == 2
    assert one_error_line(capsys) == f"toolcanon report: -o {missing / 'x.md'}: the folder {missing} does not exist"
    assert not missing.exists()


def test_report_of_a_file_that_is_not_json_names_it(
    saved_report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "r.html"
    assert main(["report", str(saved_report), "--format", "html", "-o", str(page)]) == 0
    assert main(["report", str(page)]) == 2
    assert one_error_line(capsys) == (
        f"toolcanon report: {page}: not a JSON report (Expecting value: line 1 column 1 (char 0)); toolcanon report "
        "reads the JSON report that toolcanon check --report FILE.json writes"
    )
    assert main(["report", str(tmp_path / "absent.json")]) == 2
    assert one_error_line(capsys) == f"toolcanon report: {tmp_path / 'absent.json'}: no such file"


def test_replay_of_a_log_that_does_not_exist_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nosuch.jsonl"
    assert main(["replay", str(missing)]) == 2
    assert one_error_line(capsys) == f"toolcanon replay: error: {missing}: no such file"


# --- --require CAPABILITY --------------------------------------------------------------------------------


def test_an_unknown_required_capability_is_a_usage_error_before_any_scenario(
    suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "--require", "guardz"]) == 2
    assert one_error_line(capsys) == "toolcanon check: --require guardz: no such capability (closest: guards)"


def test_a_required_capability_is_read_ignoring_case_and_a_far_one_lists_the_known() -> None:
    assert resolve_capabilities(["Guards", "guards", " mcp "]) == ("guards", "mcp")
    with pytest.raises(UnknownCapability) as raised:
        resolve_capabilities(["zzzzqq"])
    assert str(raised.value) == f"--require zzzzqq: no such capability (known: {', '.join(known_capabilities())})"


def test_the_plugin_refuses_an_unknown_required_capability_before_any_test(tmp_path: Path) -> None:
    status, output = plugin_run(tmp_path, "--require", "guardz")
    assert status == 2
    assert plugin_error(output) == "--require guardz: no such capability (closest: guards)"
    status, output = plugin_run(tmp_path, "--impl", "fake_suite:implementation", "--require", "guardz")
    assert status == 2
    assert plugin_error(output) == "--require guardz: no such capability (closest: guards)"


# --- render --config, info --format, cases --export ------------------------------------------------------


def render(*arguments: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = render_command(list(arguments), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_render_config_is_inline_json_or_a_file(tmp_path: Path) -> None:
    value = tmp_path / "v.json"
    value.write_text(json.dumps({"root": ".", "paths": ["a", "b", "c"]}), encoding="utf-8")
    config = tmp_path / "c.json"
    config.write_text('{"max_results": 1}', encoding="utf-8")
    inline = render("glob", str(value), "--config", '{"max_results": 1}')
    assert inline[0] == 0 and inline[1].startswith("a\n\n(Showing 1 of 3 paths.")
    assert render("glob", str(value), "--config", str(config)) == inline


@pytest.mark.parametrize(
    ("config", "line"),
    [
        (
            '{"max_results": 1',
            "--config {\"max_results\": 1: not a JSON object: Expecting ',' delimiter: line 1 column 18 (char 17)",
        ),
        ("absent.json", "cannot read config file 'absent.json': [Errno 2] No such file or directory: 'absent.json'"),
        ("", '--config is empty: give a JSON object ({"max_results": 2}) or a file holding one'),
    ],
)
def test_a_bad_render_config_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, line: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v.json").write_text(json.dumps({"root": ".", "paths": ["a"]}), encoding="utf-8")
    assert render("glob", "v.json", "--config", config) == (2, "", f"toolcanon render: {line}\n")


def test_render_help_says_config_takes_both(capsys: pytest.CaptureFixture[str]) -> None:
    assert render("--help")[0] == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert 'inline when the value starts with "{"' in help_text and "otherwise the path of a JSON file" in help_text


def test_info_format_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["info", "--help"])
    assert exited.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert (
        "--format {text,json} json: the metadata as one JSON object (selectedBy, implementation, protocolVersion)"
        in (help_text)
    )


def test_cases_export_of_the_whole_suite_prints_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "cases"
    assert main(["cases", "--export", str(target)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    found = re.fullmatch(
        rf"wrote (\d+) scenarios, (\d+) goldens and (\d+) schemas to {re.escape(str(target))} "
        r"\(scenarios/, goldens/, schemas/\)",
        line,
    )
    assert found is not None, line
    assert int(found.group(1)) == len(list((target / "scenarios").iterdir())) > 100
    assert int(found.group(3)) == len(list((target / "schemas").iterdir()))
