"""The HTML report of real checks, opened in headless Chromium in a 1366 by 768 window: a passing run, a failing
run, and two implementations side by side.

Each page puts what fails first (a summary under the verdict linking to every failure and error, their accounts
before the rules), resolves every link, fits the window without scrolling sideways, groups the rules by the
contract's sections, and gives each failure the command that runs it again alone: the tests run that command
and check that it reproduces exactly that failure, and nothing else.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from broken_implementations import BUGS, Broken
from fake_suite import write_suite

from toolcanon_conformance.cli import DEFAULT_IMPLEMENTATION, main
from toolcanon_conformance.locations import scenarios_dir
from toolcanon_conformance.report import render, repro_command
from toolcanon_conformance.rules import load_rules

HERE = Path(__file__).parent
WINDOW = (1366, 768)
BUG = "value-replacement-not-rerendered"


def broken() -> Broken:
    """The reference with one bug, value replacements left as first rendered: ``--impl test_report_html:broken``."""
    return Broken(next(bug for bug in BUGS if bug.name == BUG))


PROBE = """<script>
const FOLLOWS = Node.DOCUMENT_POSITION_FOLLOWING;
const matrix = document.getElementById("matrix");
const summary = document.getElementById("summary");
const accounts = [...document.querySelectorAll(".scenario.failed-box, .scenario.errored-box, .scenario.stale-box")];
const ids = [...document.querySelectorAll("[id]")].map((element) => element.id);
const links = [...document.querySelectorAll('a[href^="#"]')].map((a) => a.getAttribute("href").slice(1));
const head = matrix.tHead.rows[0].cells;
const colour = (selector) => {
  const found = matrix.querySelector(selector);
  return found === null ? null : getComputedStyle(found).backgroundColor;
};
const firstLink = summary.querySelector("ol a");
const trend = document.getElementById("trend");
const bar = (element) => {
  const segments = [...element.children].map((segment) => ({
    outcome: segment.classList[1], width: segment.getBoundingClientRect().width,
  }));
  return { width: element.getBoundingClientRect().width, segments };
};
document.body.setAttribute("data-probe", JSON.stringify({
  viewport: [window.innerWidth, window.innerHeight],
  scrollWidth: document.documentElement.scrollWidth,
  matrixRight: matrix.getBoundingClientRect().right,
  duplicateIds: ids.filter((id, index) => ids.indexOf(id) !== index),
  links: links.length,
  unresolved: links.filter((id) => document.getElementById(id) === null),
  summary: summary.textContent,
  summaryLinks: [...summary.querySelectorAll("ol a")].map((a) => a.getAttribute("href").slice(1)),
  firstLinkBottom: firstLink === null ? null : firstLink.getBoundingClientRect().bottom,
  accounts: accounts.map((box) => ({
    id: box.id,
    scenario: box.querySelector("strong code").textContent,
    section: box.closest("section").id,
    beforeMatrix: Boolean(box.compareDocumentPosition(matrix) & FOLLOWS),
    afterSummary: Boolean(summary.compareDocumentPosition(box) & FOLLOWS),
    repro: box.querySelector("code.repro") === null ? null : box.querySelector("code.repro").textContent,
    files: [...box.querySelectorAll("dl.facts dd > code:not(.repro)")].map((code) => code.textContent),
    differences: box.querySelectorAll(".diff").length,
    marked: [...box.querySelectorAll(".diff pre mark")].length,
  })),
  columns: [...head].map((th) => th.textContent),
  sticky: getComputedStyle(head[0]).position,
  sections: [...matrix.tBodies].map((body) => body.rows[0].cells[0].textContent),
  rules: matrix.querySelectorAll("tr[data-rule]").length,
  chips: matrix.querySelectorAll(".chip").length,
  chipLinks: [...matrix.querySelectorAll("a.chip")].map((a) => a.getAttribute("href").slice(1)),
  failedChip: colour("a.chip.failed"),
  passedChip: colour("span.chip.passed"),
  sideRows: document.querySelectorAll("#side-by-side-table tbody tr").length,
  trend: trend === null ? null : {
    afterSummary: Boolean(summary.compareDocumentPosition(trend) & FOLLOWS),
    beforeMatrix: Boolean(trend.compareDocumentPosition(matrix) & FOLLOWS),
    right: trend.getBoundingClientRect().right,
    runs: [...trend.querySelectorAll("#trend-runs tbody tr")].map((row) => ({
      name: row.cells[0].textContent,
      counts: row.cells[2].textContent,
      changes: row.cells[3].textContent,
      changeLinks: [...row.cells[3].querySelectorAll("a")].map((a) => a.getAttribute("href").slice(1)),
      bar: bar(row.querySelector(".bar")),
    })),
    families: [...trend.querySelectorAll("#trend-families tbody tr")].map((row) => ({
      family: row.dataset.family,
      cells: [...row.cells].slice(1).map((cell) => ({
        text: cell.textContent,
        changed: cell.classList.contains("changed"),
        outline: getComputedStyle(cell).outlineStyle,
        bar: bar(cell.querySelector(".bar")),
      })),
    })),
    colours: Object.fromEntries(["passed", "known", "predates", "failed"].map((outcome) => {
      const found = trend.querySelector(`.seg.${outcome}`);
      return [outcome, found === null ? null : getComputedStyle(found).backgroundColor];
    })),
  },
}));
</script>"""


CHROMIUM_MISSING = (
    "chromium not on PATH: the HTML report's browser test needs it (looked for chromium, chromium-browser and "
    "google-chrome)"
)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(CHROMIUM_MISSING)


def _open_all(pages: dict[Path, str]) -> dict[Path, dict[str, Any]]:
    """Open each page in headless Chromium in a 1366 by 768 window and return what :data:`PROBE` found there,
    every browser started at once (each spends most of its start-up waiting)."""
    browser = _chromium()
    running = {}
    for folder, page_text in pages.items():
        folder.mkdir(parents=True, exist_ok=True)
        page = folder / "report.html"
        page.write_text(page_text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            f"--user-data-dir={folder / 'profile'}",
        ]
        running[folder] = subprocess.Popen(
            [browser, *flags, "--dump-dom", page.as_uri()],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "HOME": str(folder)},
        )
    found: dict[Path, dict[str, Any]] = {}
    for folder, process in running.items():
        try:
            stdout, stderr = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        assert 'data-probe="' in stdout, stderr[-2000:]
        found[folder] = json.loads(unescape(stdout.split('data-probe="', 1)[1].split('"', 1)[0]))
    return found


def _check(folder: Path, *arguments: str) -> dict[str, Any]:
    """``toolcanon check ARGUMENTS --report``: the JSON report it writes."""
    folder.mkdir(parents=True, exist_ok=True)
    report = folder / "report.json"
    main(["check", *arguments, "--report", str(report)])
    loaded: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return loaded


def _light_suite(folder: Path) -> Path:
    """The bundled scenarios but those of generated values: the pages lay out every section and rule of a real
    run all the same, without the seconds that values 100,000 levels deep take in each of the four checks."""
    folder.mkdir(parents=True)
    for path in sorted(scenarios_dir().glob("*.json")):
        if "generated-values" not in json.loads(path.read_text(encoding="utf-8")).get("requires", ()):
            shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Each of the four checks: its JSON report, and what the browser found on its HTML page."""
    _chromium()
    root = tmp_path_factory.mktemp("pages")
    suite = ["--scenarios", str(_light_suite(root / "scenarios"))]
    written = root / "predates" / "written.json"
    written.parent.mkdir()
    checks = {
        "passing": ["--impl", DEFAULT_IMPLEMENTATION],
        # its failures, written as a baseline, are the entries of the releases' baseline
        "failing": ["--impl", "test_report_html:broken", "--write-baseline", str(written)],
        "two": ["--impl", "test_report_html:broken", "--impl", DEFAULT_IMPLEMENTATION],
    }
    reports = {name: _check(root / name, *arguments, *suite) for name, arguments in checks.items()}
    baseline = _predating_baseline(written)
    releases = ["--impl", DEFAULT_IMPLEMENTATION, "--impl", "test_report_html:broken", "--baseline", str(baseline)]
    reports["releases"] = _check(root / "releases", *releases, "--impl", DEFAULT_IMPLEMENTATION, *suite)
    shown = _open_all({root / name: render(report, "html") for name, report in reports.items()})
    return {name: (report, shown[root / name]) for name, report in reports.items()}


def _predating_baseline(written: Path) -> Path:
    """The baseline a check wrote, beside it, every failure of the broken implementation made a release predating
    its rule."""
    entries = json.loads(written.read_text(encoding="utf-8"))["knownFailures"]
    change = {"release": "0.2.0", "source": "reference/toolcanon/registry.py", "quote": "re-render the value"}
    for entry in entries:
        entry |= {"kind": "predates", "reason": "a release before the re-rendering", "change": change}
    baseline = written.with_name("baseline.json")
    baseline.write_text(json.dumps({"formatVersion": 1, "knownFailures": entries}), encoding="utf-8")
    return baseline


def _layout_is_failure_first(probe: dict[str, Any], report: dict[str, Any]) -> None:
    """What every page must do, whatever its runs."""
    width, height = probe["viewport"]
    assert width == WINDOW[0] and height <= WINDOW[1]  # the window's height less what the browser takes
    assert probe["scrollWidth"] <= WINDOW[0], "the page scrolls sideways"
    assert probe["matrixRight"] <= WINDOW[0]
    assert probe["duplicateIds"] == [] and probe["unresolved"] == [] and probe["links"] > 0
    assert probe["sticky"] == "sticky"
    # the rules stand under the contract's sections, in its order
    headings = (f"{rule.id.rsplit('-', 1)[0]} — {rule.section}".replace("`", "") for rule in load_rules())
    contract = list(dict.fromkeys(headings))  # as shown: code spans keep their text, not their backticks
    exercised = {tally["rule"] for run in report["implementations"] for tally in run["rules"]}
    assert probe["rules"] == len(exercised)
    assert probe["sections"] == [section for section in contract if section in probe["sections"]]
    assert len(probe["sections"]) >= 20
    for account in probe["accounts"]:
        assert account["afterSummary"] and account["beforeMatrix"], account
    # every scenario that fails a run is linked from the summary, in the order of the accounts
    assert probe["summaryLinks"] == [account["id"] for account in probe["accounts"]]
    if probe["accounts"]:
        assert probe["firstLinkBottom"] <= height  # the first failure is named on the first screen


def test_a_passing_run(pages: dict[str, tuple[dict[str, Any], dict[str, Any]]]) -> None:
    report, probe = pages["passing"]
    _layout_is_failure_first(probe, report)
    [run] = report["implementations"]
    assert run["verdict"] == "pass" and probe["accounts"] == []
    assert probe["summary"].startswith("nothing fails the run")
    assert probe["columns"] == ["rule", "what it requires", "#1 toolcanon " + run["implementation"]["version"]]
    assert probe["chips"] == sum(len(tally["scenarios"]) for tally in run["rules"])
    assert probe["passedChip"] == "rgb(46, 125, 50)" and probe["failedChip"] is None
    skipped = [s for s in run["scenarios"] if s["status"] == "skipped"]
    assert skipped and len(probe["chipLinks"]) == sum(len(s["rules"]) for s in skipped)


def test_a_failing_run(pages: dict[str, tuple[dict[str, Any], dict[str, Any]]], tmp_path: Path) -> None:
    report, probe = pages["failing"]
    _layout_is_failure_first(probe, report)
    [run] = report["implementations"]
    failed = [s for s in run["scenarios"] if s["status"] == "failed"]
    assert run["verdict"] == "fail" and len(failed) >= 3
    assert probe["summary"].startswith(f"{len(failed)} failures, 0 errors")
    assert [account["scenario"] for account in probe["accounts"]] == [s["id"] for s in failed]
    assert probe["failedChip"] == "rgb(198, 40, 40)"
    for account, scenario in zip(probe["accounts"], failed, strict=True):
        assert account["section"] == "failed"
        assert account["repro"] == repro_command(run, scenario["id"])
        assert account["repro"] == (
            f"toolcanon check --impl test_report_html:broken --scenarios {run['scenariosDir']} --id {scenario['id']}"
        )
        assert account["files"] == [scenario["scenarioFile"], scenario["goldenFile"]]
        assert Path(scenario["scenarioFile"]).is_file() and Path(scenario["goldenFile"]).is_file()
        assert account["differences"] == len(scenario["differences"]) == scenario["differenceCount"]
        assert account["marked"] >= 1
    for account in (probe["accounts"][0], probe["accounts"][-1]):
        _reproduces(account["repro"], run, account["scenario"], tmp_path)


def test_two_implementations_side_by_side(
    pages: dict[str, tuple[dict[str, Any], dict[str, Any]]], tmp_path: Path
) -> None:
    report, probe = pages["two"]
    _layout_is_failure_first(probe, report)
    first, second = report["implementations"]
    assert (first["verdict"], second["verdict"]) == ("fail", "pass")
    version = second["implementation"]["version"]
    assert probe["columns"] == [
        "rule",
        "what it requires",
        f"#1 broken:{BUG} {first['implementation']['version']}",
        f"#2 toolcanon {version}",
    ]
    failed = [s for s in first["scenarios"] if s["status"] == "failed"]
    assert [account["id"] for account in probe["accounts"]] == [f"i0-s{first['scenarios'].index(s)}" for s in failed]
    assert all(account["section"] == "i0-failed" for account in probe["accounts"])
    assert f"#1 broken:{BUG}" in probe["summary"] and "#2 toolcanon" in probe["summary"]
    assert probe["chips"] == sum(len(tally["scenarios"]) for run in (first, second) for tally in run["rules"])
    # the table by scenario lists only the scenarios the two do not both pass
    both = {s["id"] for run in (first, second) for s in run["scenarios"] if s["status"] != "passed"}
    assert probe["sideRows"] == len(both)
    account = probe["accounts"][0]
    suite = first["scenariosDir"]
    assert (
        account["repro"]
        == f"toolcanon check --impl test_report_html:broken --scenarios {suite} --id {account['scenario']}"
    )
    _reproduces(account["repro"], first, account["scenario"], tmp_path)


def _reproduces(command: str, run: dict[str, Any], scenario_id: str, folder: Path) -> None:
    """Run the command a report gives, in the check's directory, as a user would, and require that scenario's
    failure again, alone."""
    words = shlex.split(command)
    assert words[:2] == ["toolcanon", "check"], command
    again = folder / f"{scenario_id}.json"
    program = "import sys; from toolcanon_conformance.cli import main; sys.exit(main())"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", program, *words[1:], "--report", str(again)],
        cwd=run["workingDirectory"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=environment,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    [rerun] = json.loads(again.read_text(encoding="utf-8"))["implementations"]
    original = next(s for s in run["scenarios"] if s["id"] == scenario_id)
    [scenario] = rerun["scenarios"]
    assert rerun["summary"] == {**rerun["summary"], "total": 1, "failed": 1, "passed": 0}
    assert scenario["id"] == scenario_id and scenario["status"] == "failed"
    assert scenario["differences"] == original["differences"]
    assert rerun["implementation"] == run["implementation"]


# --- the command a report gives, with everything a check used ------------------------------------------


def test_the_command_carries_the_data_baseline_and_options_and_selects_one_scenario_exactly(tmp_path: Path) -> None:
    # bad-meta is a prefix of bad-meta-too: -k bad-meta takes both; the command must take one
    suite = {"ok-plain": ["R-SNAP-1"], "bad-meta": ["R-NEST-2"], "bad-meta-too": ["R-NEST-2"], "err-hook": ["R-WRAP-1"]}
    scenarios, goldens = write_suite(tmp_path / "suite", suite)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"formatVersion": 1, "knownFailures": [{"scenario": "bad-meta-too"}]}))
    data = ["--scenarios", str(scenarios), "--goldens", str(goldens)]
    arguments = ["--impl", "fake_suite:implementation", *data, "--baseline", str(baseline), "--timeout", "20"]
    report = _check(tmp_path / "check", *arguments)
    [run] = report["implementations"]
    assert run["workingDirectory"] == os.getcwd()
    assert (run["scenariosDir"], run["goldensDir"], run["runOptions"]) == (
        str(scenarios),
        str(goldens),
        ["--timeout", "20.0"],
    )
    by_id = {s["id"]: s for s in run["scenarios"]}
    assert by_id["bad-meta"]["scenarioFile"] == str((scenarios / "bad-meta.json").absolute())
    assert by_id["bad-meta"]["goldenFile"] == str((goldens / "bad-meta.json").absolute())
    page = render(report, "html")
    commands = {
        unescape(re.sub("<[^>]+>", "", found)): anchor
        for anchor, found in re.findall(
            r'<div class="scenario [a-z]+-box" id="(s\d+)">.*?<code class="repro">(.*?)</code>', page
        )
    }
    expected = {
        repro_command(run, scenario_id): f"s{run['scenarios'].index(by_id[scenario_id])}"
        for scenario_id in ("bad-meta", "err-hook", "bad-meta-too")
    }
    assert commands == expected
    assert repro_command(run, "bad-meta") == shlex.join(
        [
            "toolcanon",
            "check",
            *arguments[:2],
            "--baseline",
            str(baseline),
            *data,
            "--timeout",
            "20.0",
            "--id",
            "bad-meta",
        ]
    )
    for command in commands:
        scenario_id = shlex.split(command)[-1]
        rerun = _check(tmp_path / f"again-{scenario_id}", *shlex.split(command)[2:])
        [again] = rerun["implementations"]
        [scenario] = again["scenarios"]
        original = by_id[scenario_id]
        assert scenario["id"] == scenario_id and scenario["status"] == original["status"]
        assert scenario.get("differences") == original.get("differences")
        assert scenario.get("baseline") == original.get("baseline")
        assert again["baselineProblems"] == []
    assert len(_check(tmp_path / "by-pattern", *arguments, "-k", "bad-meta")["implementations"][0]["scenarios"]) == 2


def test_an_id_no_scenario_has_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenarios, goldens = write_suite(tmp_path / "suite")
    data = ["--scenarios", str(scenarios), "--goldens", str(goldens)]
    assert main(["check", "--impl", "fake_suite:implementation", *data, "--id", "bad-met"]) == 2
    assert capsys.readouterr().err == "toolcanon check: --id bad-met: no scenario has that id\n"


def test_without_chromium_the_browser_tests_say_why_they_did_not_run(tmp_path: Path) -> None:
    """A run of the suite shows that the browser tests were skipped, and why (the repository's pytest options)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", f"{__file__}::test_a_passing_run"],
        cwd=HERE.parents[1],
        env={**os.environ, "PATH": str(empty)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.search(
        r"^SKIPPED \[1\] .*test_report_html\.py:\d+: " + re.escape(CHROMIUM_MISSING) + "$", done.stdout, re.M
    )
    assert re.search(r"^=+ 1 skipped in ", done.stdout, re.M)


def test_the_trend_of_releases_draws_each_run_and_each_rule_family(
    pages: dict[str, tuple[dict[str, Any], dict[str, Any]]],
) -> None:
    """Three runs, the second excused by a baseline whose entries predate their rules: the trend stands between
    the summary and the rules, each run a bar as wide as its counts say, and each rule family's cell outlined
    exactly where its counts changed from the run before."""
    report, probe = pages["releases"]
    _layout_is_failure_first(probe, report)
    runs = report["implementations"]
    assert [run["verdict"] for run in runs] == ["pass", "pass", "pass"]
    trend = probe["trend"]
    assert trend is not None and trend["afterSummary"] and trend["beforeMatrix"] and trend["right"] <= WINDOW[0]
    predating = [s["id"] for s in runs[1]["scenarios"] if s.get("baseline", {}).get("kind") == "predates"]
    assert predating and runs[1]["summary"]["knownFailures"] == len(predating)
    named = [run["implementation"] for run in runs]
    names = [f"#{k + 1} {implementation['name']} {implementation['version']}" for k, implementation in enumerate(named)]
    assert [row["name"] for row in trend["runs"]] == names
    assert f"{len(predating)} predates" in trend["runs"][1]["counts"] and "known" not in trend["runs"][1]["counts"]
    for row, run in zip(trend["runs"], runs, strict=True):
        bar = row["bar"]
        assert abs(sum(segment["width"] for segment in bar["segments"]) - bar["width"]) <= 1
        total = run["summary"]["total"]
        for segment in bar["segments"]:
            count = sum(1 for s in run["scenarios"] if _shown(s) == segment["outcome"])
            assert abs(segment["width"] - bar["width"] * count / total) <= 1, (row["name"], segment)
    # what changed is named, each predating scenario linked to its account in the run that excused it
    assert trend["runs"][0]["changes"] == "" and trend["runs"][2]["changes"].count("predates → passed") == min(
        len(predating), 12
    )
    anchors = {s["id"]: f"i1-s{k}" for k, s in enumerate(runs[1]["scenarios"])}
    assert set(trend["runs"][1]["changeLinks"]) == {anchors[i] for i in predating[:12]}
    assert set(trend["runs"][2]["changeLinks"]) == {anchors[i] for i in predating[:12]}
    colours = trend["colours"]
    assert colours["predates"] not in (None, colours["passed"], colours["known"], colours["failed"])
    # the families: each cell outlined exactly where the family's scenarios show another count than before
    touched = {rule.rsplit("-", 1)[0] for s in runs[1]["scenarios"] if s["id"] in predating for rule in s["rules"]}
    assert trend["families"] and {family["family"] for family in trend["families"]} >= touched
    for family in trend["families"]:
        changed = [cell["changed"] for cell in family["cells"]]
        assert changed == [False, family["family"] in touched, family["family"] in touched], family
        for cell in family["cells"]:
            assert (cell["outline"] == "solid") is cell["changed"]
            assert abs(sum(segment["width"] for segment in cell["bar"]["segments"]) - cell["bar"]["width"]) <= 1
        if family["family"] in touched:
            assert "«" in family["cells"][1]["text"] and "«" not in family["cells"][0]["text"]


def _shown(scenario: dict[str, Any]) -> str:
    """The outcome a scenario is drawn as."""
    baseline = scenario.get("baseline", {})
    if baseline.get("verdict") == "known-failure":
        return "predates" if baseline.get("kind") == "predates" else "known"
    return str(scenario["status"])
