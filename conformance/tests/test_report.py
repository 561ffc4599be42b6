"""Reports: the JSON form follows its schema; Markdown and HTML show the rules, the matrix and the first diffs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_runner import Scripted, goldens, scenario

from toolcontract_conformance.adapters.inprocess import InProcess
from toolcontract_conformance.baseline import Baseline
from toolcontract_conformance.report import ReportError, render, report_json, report_markdown, validate_report
from toolcontract_conformance.runner import SuiteResult, run_suite


@pytest.fixture(scope="module")
def suite() -> SuiteResult:
    scenarios = [
        scenario("snap-ok", rules=["R-SNAP-1", "R-SNAP-2"]),
        scenario("post-<wrong>", "wrong-value", rules=["R-POST-4"], description="a <b>value</b> & more"),
        scenario("wrap-error", "error", rules=["R-WRAP-1"]),
        scenario("exotic-set", "skip", rules=["R-SNAP-2"]),
        scenario("known", "wrong-value", rules=["R-WRAP-1"]),
        scenario("needs-mcp", rules=["R-MCP-1"], requires=["mcp"]),
        scenario("no-rule", rules=[]),
    ]
    baseline = Baseline.from_json({"formatVersion": 1, "knownFailures": [{"scenario": "known"}]})
    return run_suite(InProcess(Scripted()), scenarios, goldens, baseline=baseline)


@pytest.fixture(scope="module")
def report(suite: SuiteResult) -> dict[str, Any]:
    return report_json(suite)


def test_the_json_report_follows_its_schema(report: dict[str, Any]) -> None:
    validate_report(report)
    validate_report(json.loads(render(report, "json")))
    assert report["ok"] is False
    assert report["summary"] == {
        "total": 7,
        "passed": 2,
        "failed": 2,
        "errored": 1,
        "skipped": 2,
        "knownFailures": 1,
        "baselineProblems": 0,
    }
    failed = next(s for s in report["scenarios"] if s["id"] == "post-<wrong>")
    assert failed["differences"][0] == {
        "path": "$.steps.c1.result.value",
        "kind": "value",
        "expected": "1",
        "actual": "2",
        "detail": "",
    }
    assert next(s for s in report["scenarios"] if s["id"] == "needs-mcp")["missingCapabilities"] == ["mcp"]
    rules = {tally["rule"]: tally for tally in report["rules"]}
    assert rules["R-WRAP-1"]["errored"] == 1 and rules["R-WRAP-1"]["known"] == 1
    assert rules["R-SNAP-2"]["scenarios"] == ["snap-ok", "exotic-set"]


def test_a_malformed_report_is_refused(report: dict[str, Any]) -> None:
    with pytest.raises(ReportError, match="summary"):
        validate_report({**report, "summary": {}})


def test_the_markdown_report(report: dict[str, Any]) -> None:
    text = report_markdown(report)
    assert text.startswith("# Conformance report: scripted 1 (python)")
    assert "**FAIL: 2 passed, 2 failed, 1 errored, 2 skipped, 1 known failure(s) of 7 scenarios" in text
    assert "| R-POST-4 | 0 | 1 | 0 | 0 | 0 |" in text
    assert "first difference at `$.steps.c1.result.value` (value)" in text
    assert "- `needs-mcp` [R-MCP-1]\n  - missing capability mcp" in text
    assert "- `known` [R-WRAP-1] — baseline: known-failure" in text


def test_the_html_report_is_one_self_contained_page(report: dict[str, Any]) -> None:
    page = render(report, "html")
    assert page.startswith("<!DOCTYPE html>") and 'id="matrix"' in page
    for reference in ("<script", "<link", "src=", "url(", "@import", "http://", "//fonts"):
        assert reference not in page
    assert "post-&lt;wrong&gt;" in page and "a &lt;b&gt;value&lt;/b&gt; &amp; more" in page
    assert page.count('class="cell ') == 8  # one cell per (scenario, rule) pair


PROBE = """<script>
const matrix = document.getElementById("matrix");
const box = matrix.getBoundingClientRect();
const cells = [...matrix.querySelectorAll("td.cell")];
const colour = (selector) => getComputedStyle(matrix.querySelector(selector)).backgroundColor;
document.body.setAttribute("data-probe", JSON.stringify({
  width: box.width, height: box.height, rows: matrix.tBodies[0].rows.length,
  cells: cells.length, visible: cells.filter((c) => c.getBoundingClientRect().width > 0).length,
  rules: [...matrix.querySelectorAll("th.rule")].map((th) => th.textContent),
  failed: colour("td.cell.failed"), passed: colour("td.cell.passed"),
  firstDiff: document.querySelector("#failed .diff pre.actual").textContent,
}));
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(
        "headless Chromium is needed to check the HTML report, and no chromium browser is installed "
        "(apt-get install chromium)",
        pytrace=False,
    )


def test_chromium_renders_the_matrix(report: dict[str, Any], tmp_path: Path) -> None:
    browser = _chromium()
    page = tmp_path / "report.html"
    page.write_text(render(report, "html").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    shown = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert 'data-probe="' in shown.stdout, shown.stderr[-2000:]
    from html import unescape

    probe = json.loads(unescape(shown.stdout.split('data-probe="', 1)[1].split('"', 1)[0]))
    assert probe["rows"] == 7 and probe["cells"] == 8 and probe["visible"] == 8
    assert probe["width"] > 100 and probe["height"] > 100
    assert sorted(probe["rules"]) == ["(no rule)", "R-MCP-1", "R-POST-4", "R-SNAP-1", "R-SNAP-2", "R-WRAP-1"]
    assert probe["rules"][-1] == "(no rule)"
    assert probe["failed"] == "rgb(198, 40, 40)" and probe["passed"] == "rgb(46, 125, 50)"
    assert probe["firstDiff"] == "2"
