"""The pure parts of ``python -m mutation`` (``nox -s mutation``): the seeded stratified sample, the score
arithmetic with equivalent mutants, reading mutmut's results and the triage file, and the scratch project's
layout. A whole mutation run takes minutes and mutmut; none is made here.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from repository_root import ROOT, root_importable  # noqa: F401  (the fixture is used by its name)


def _names(module: str, count: int, function: str = "x_f") -> list[str]:
    return [f"toolcanon.{module}.{function}__mutmut_{n}" for n in range(1, count + 1)]


# --- sampling ------------------------------------------------------------------------------------------


def test_the_sample_is_spread_over_the_modules_in_proportion() -> None:
    from mutation.sampling import allocate, sample

    sizes = {"jsonvalue": 600, "_fused": 300, "result": 100}
    assert allocate(sizes, 100) == {"jsonvalue": 60, "_fused": 30, "result": 10}
    # largest remainder: 7 * (6, 3, 1) / 10 = 4.2, 2.1, 0.7 -> 4, 2, 1
    assert allocate(sizes, 7) == {"jsonvalue": 4, "_fused": 2, "result": 1}
    assert allocate(sizes, 5000) == sizes
    assert sum(allocate({"a": 13, "b": 17, "c": 5}, 11).values()) == 11
    names = {module: _names(module, size) for module, size in sizes.items()}
    drawn = sample(names, 100, seed=1)
    assert {module: len(chosen) for module, chosen in drawn.items()} == {"jsonvalue": 60, "_fused": 30, "result": 10}
    assert all(set(drawn[module]) <= set(names[module]) for module in names)
    assert sample(names, None, seed=1) == {module: sorted(module_names) for module, module_names in names.items()}


def test_the_sample_is_drawn_by_its_seed_alone() -> None:
    from mutation.sampling import sample

    names = {"jsonvalue": _names("jsonvalue", 200), "session": _names("session", 100)}
    assert sample(names, 30, seed=7) == sample(dict(reversed(names.items())), 30, seed=7)
    assert sample(names, 30, seed=7) != sample(names, 30, seed=8)


def test_a_new_mutant_displaces_at_most_one_of_a_module_s_sample() -> None:
    """Ranks are per name: after a change, the mutants of unchanged functions keep their places."""
    from mutation.sampling import sample

    before = {"jsonvalue": _names("jsonvalue", 200)}
    after = {"jsonvalue": [*before["jsonvalue"], "toolcanon.jsonvalue.x_g__mutmut_1"]}
    kept = set(sample(before, 20, seed=3)["jsonvalue"]) & set(sample(after, 20, seed=3)["jsonvalue"])
    assert len(kept) >= 19


def test_a_negative_sample_is_a_usage_error() -> None:
    from mutation.errors import UsageError
    from mutation.sampling import allocate

    with pytest.raises(UsageError, match="--sample -1"):
        allocate({"a": 3}, -1)


def test_the_sample_digest_names_the_set_of_mutants() -> None:
    from mutation.cli import sample_digest

    names = _names("jsonvalue", 5)
    assert sample_digest(names) == sample_digest(list(reversed(names)))
    assert sample_digest(names) != sample_digest(names[1:])


# --- modules and options -------------------------------------------------------------------------------


def test_the_core_modules_and_the_schema_group() -> None:
    from mutation.errors import UsageError
    from mutation.targets import core_modules, module_of, select_modules

    modules = core_modules(ROOT / "reference" / "toolcanon")
    assert modules[:2] == ("jsonvalue", "schema")
    assert modules[-4:] == ("_fused", "registry", "result", "session")
    assert "_schema_deep" in modules and all(m.startswith("_schema_") for m in modules[2:-4])
    assert select_modules([], modules) == modules
    assert select_modules(["session", "_schema_deep"], modules) == ("_schema_deep", "session")
    assert select_modules(["schema"], modules) == modules[1:-4]
    with pytest.raises(UsageError, match="--module schemas: not a mutated module"):
        select_modules(["schemas"], modules)
    assert module_of("toolcanon._fused.xǁFusedNormalizationǁ_generated__mutmut_1") == "_fused"
    with pytest.raises(ValueError, match="not the name of a mutant"):
        module_of("toolcanon._fused.x_walk")


def test_the_options() -> None:
    from mutation.cli import DEFAULT_SAMPLE, QUICK_SAMPLE, parse_arguments

    assert parse_arguments([]).sample == DEFAULT_SAMPLE
    assert parse_arguments(["--quick"]).sample == QUICK_SAMPLE
    assert parse_arguments(["--all"]).sample is None
    options = parse_arguments(["--module", "schema", "--module", "session", "--suite", "unit", "--seed", "4"])
    assert (options.module, options.suite, options.seed) == (["schema", "session"], "unit", 4)
    with pytest.raises(SystemExit):
        parse_arguments(["--suite", "all"])


# --- mutmut's results ----------------------------------------------------------------------------------


def _meta(mutants: Path, module: str, exit_codes: dict[str, int | None], hashes: dict[str, str]) -> None:
    folder = mutants / "src" / "toolcanon"
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "exit_code_by_key": exit_codes,
        "durations_by_key": {name: 0.5 for name in exit_codes},
        "hash_by_function_name": hashes,
        "estimated_durations_by_key": {},
    }
    (folder / f"{module}.py.meta").write_text(json.dumps(meta), encoding="utf-8")


def test_outcomes_are_read_from_mutmut_s_meta_files(tmp_path: Path) -> None:
    from mutation.errors import MutationError
    from mutation.outcomes import read_hashes, read_outcomes, status_of

    names = _names("result", 6)
    codes: list[int | None] = [1, 0, 33, -24, None, 3]
    _meta(tmp_path, "result", dict(zip(names, codes, strict=True)), {"x_f": "abc123"})
    outcomes = read_outcomes(tmp_path, names[::-1])
    assert [outcome.name for outcome in outcomes] == names[::-1]
    assert [outcome.status for outcome in outcomes] == ["killed", "other", "timeout", "no tests", "survived", "killed"]
    assert outcomes[1].detail == "not checked"
    assert {outcome.function_hash for outcome in outcomes} == {"abc123"}
    assert read_hashes(tmp_path) == {"result.x_f": "abc123"}
    assert status_of(-11) == ("other", "segfault")
    assert status_of(99) == ("other", "suspicious")
    with pytest.raises(MutationError, match=r"no mutant toolcanon\.session"):
        read_outcomes(tmp_path, _names("session", 1))


# --- the score -----------------------------------------------------------------------------------------


def _outcome(name: str, status: str) -> Any:
    from mutation.outcomes import Outcome

    return Outcome(name, status, status, None, 0.0, "h")  # type: ignore[arg-type]


def test_the_score_leaves_out_the_equivalent_mutants() -> None:
    from mutation.score import WHOLE, Tally, format_table, tally

    names = _names("jsonvalue", 10)
    statuses = ["killed"] * 6 + ["survived", "survived", "no tests", "timeout"]
    outcomes = [_outcome(name, status) for name, status in zip(names, statuses, strict=True)]
    # two survivors and one killed mutant are triaged equivalent: the killed one stays killed
    rows = tally(outcomes, ["jsonvalue", "session"], equivalent={names[0], names[6], names[7]})
    row = rows["jsonvalue"]
    assert (row.run, row.killed, row.survived, row.no_tests, row.timeout, row.equivalent) == (10, 6, 0, 1, 1, 2)
    assert row.score == 6 / 8
    assert rows["session"].score is None
    assert rows[WHOLE].run == 10 and rows[WHOLE].score == 6 / 8
    everything_equivalent = Tally(equivalent=3)
    assert everything_equivalent.run == 3 and everything_equivalent.score is None
    table = format_table(rows)
    assert "75.0 %" in table and table.splitlines()[0].split()[:3] == ["module", "run", "killed"]


def test_in_reach_also_leaves_out_what_only_the_python_api_shows() -> None:
    from mutation.score import WHOLE, format_table, tally

    names = _names("registry", 8)
    statuses = ["killed"] * 4 + ["survived", "survived", "no tests", "survived"]
    outcomes = [_outcome(name, status) for name, status in zip(names, statuses, strict=True)]
    # a killed mutant triaged to the unit tests stays killed; an equivalent one is not counted as API only too
    rows = tally(outcomes, ["registry"], equivalent={names[7]}, api_only={names[0], names[4], names[6]})
    row = rows["registry"]
    assert (row.run, row.killed, row.survived, row.no_tests, row.equivalent, row.api_only) == (8, 4, 2, 1, 1, 2)
    assert row.score == 4 / 7
    assert row.in_reach == 4 / 5
    assert rows[WHOLE].api_only == 2 and rows[WHOLE].in_reach == 4 / 5
    header, _, first = format_table(rows).splitlines()[:3]
    assert header.endswith("score  API only  in reach")
    assert first.split() == ["registry", "8", "4", "2", "0", "1", "1", "0", "57.1", "%", "2", "80.0", "%"]
    assert tally(outcomes, ["registry"], equivalent=set())["registry"].in_reach == 4 / 8


def test_the_schema_group_has_a_row_of_its_own() -> None:
    from mutation.score import tally

    outcomes = [_outcome(_names("schema", 1)[0], "killed"), _outcome(_names("_schema_deep", 1)[0], "survived")]
    rows = tally(outcomes, ["schema", "_schema_deep", "session"], equivalent=set())
    assert list(rows) == ["schema", "_schema_deep", "session", "schema + _schema_*", "whole"]
    assert rows["schema + _schema_*"].score == 0.5


# --- the triage ----------------------------------------------------------------------------------------


def _triage_file(tmp_path: Path, entries: dict[str, Any]) -> Path:
    path = tmp_path / "triage.json"
    path.write_text(json.dumps({"mutants": entries}), encoding="utf-8")
    return path


def test_a_triage_file_is_read_and_its_stale_entries_found(tmp_path: Path) -> None:
    from mutation.triage import current, load_triage

    a, b, c = (_names(module, 1)[0] for module in ("_fused", "session", "result"))
    entries = {
        a: {"verdict": "equivalent", "function": "h1", "why": "the bound is never reached"},
        b: {"verdict": "needs a scenario", "blindSpot": "key order", "function": "h2", "why": "keys reordered"},
        c: {"verdict": "unit test", "function": "h3", "why": "a repr"},
    }
    triage = load_triage(_triage_file(tmp_path, entries))
    assert triage[b].blind_spot == "key order" and triage[a].verdict == "equivalent"
    valid, stale = current(triage, {"_fused.x_f": "h1", "session.x_f": "changed"})
    assert set(valid) == {a}
    assert [entry.name for entry in stale] == [b]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"verdict": "fine", "function": "h", "why": "w"}, r"verdict: 'fine' is not one of"),
        ({"verdict": "equivalent", "function": "h", "why": " "}, "why: says nothing"),
        ({"verdict": "equivalent", "why": "w"}, "function: not the hash"),
        ({"verdict": "needs a scenario", "function": "h", "why": "w"}, "blindSpot: None is not one of"),
        ({"verdict": "unit test", "blindSpot": "other", "function": "h", "why": "w"}, "only a mutant that needs"),
        ({"verdict": "unit test", "function": "h", "why": "w", "note": "x"}, "unknown member 'note'"),
    ],
)
def test_a_malformed_triage_entry_is_named(tmp_path: Path, entry: dict[str, Any], message: str) -> None:
    from mutation.triage import TriageError, load_triage

    with pytest.raises(TriageError, match=message):
        load_triage(_triage_file(tmp_path, {_names("session", 1)[0]: entry}))


def test_a_triage_entry_names_a_mutant(tmp_path: Path) -> None:
    from mutation.triage import TriageError, load_triage

    with pytest.raises(TriageError, match="not the name of a mutant"):
        load_triage(_triage_file(tmp_path, {"session.x_f": {"verdict": "unit test", "function": "h", "why": "w"}}))


def test_the_project_s_triage_file_is_well_formed() -> None:
    from mutation.targets import core_modules
    from mutation.triage import load_triage

    modules = set(core_modules(ROOT / "reference" / "toolcanon"))
    triage = load_triage()
    assert all(entry.name.split(".")[1] in modules for entry in triage.values())


# --- progress ------------------------------------------------------------------------------------------


def test_mutmut_s_status_lines_are_read() -> None:
    from mutation.run import Progress, parse_progress, phase_of

    line = "⠼ 12/5076  🎉 9 🫥 1  ⏰ 0  🤔 0  🙁 2  🔇 0  🧙 0"
    assert parse_progress(line) == Progress(done=12, killed=9, survived=2, timeout=0, no_tests=1, suspicious=0)
    assert parse_progress("    done in 5000ms") is None
    assert phase_of("⠋ Running clean tests") == "Running clean tests"
    assert phase_of("Running mutation testing") == "Running mutation testing"
    assert phase_of("    also copying tests") is None


# --- the scratch project -------------------------------------------------------------------------------


def test_the_scenario_project_holds_the_reference_under_src_and_one_test_per_scenario(tmp_path: Path) -> None:
    from mutation.scratch import PLUGIN, Checkout, build

    project = build(tmp_path, "scenarios", Checkout(ROOT), ["jsonvalue", "_fused"])
    assert project == tmp_path / "scenarios"
    assert (project / "src" / "toolcanon" / "__init__.py").is_file()
    assert not list(project.rglob("__pycache__"))
    assert (project / "tests" / "test_scenarios.py").is_file() and (project / f"{PLUGIN}.py").is_file()
    locations = json.loads((project / "tests" / "locations.json").read_text(encoding="utf-8"))
    assert Path(locations["scenarios"]) == ROOT / "fixtures" / "scenarios"
    settings = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    mutmut = settings["mutmut"]
    assert mutmut["source_paths"] == ["src"]
    assert mutmut["only_mutate"] == ["src/toolcanon/jsonvalue.py", "src/toolcanon/_fused.py"]
    assert mutmut["pytest_add_cli_args"] == ["-p", PLUGIN]
    assert mutmut["pytest_add_cli_args_test_selection"] == ["tests"]
    # only the copy under src/ can be imported: nothing named toolcanon elsewhere in the project
    assert [path.relative_to(project) for path in project.rglob("toolcanon")] == [Path("src/toolcanon")]
    # made anew: a second build replaces the first
    (project / "stray.txt").write_text("x", encoding="utf-8")
    assert not (build(tmp_path, "scenarios", Checkout(ROOT), ["jsonvalue"]) / "stray.txt").exists()


def test_the_unit_project_keeps_the_tests_where_they_find_their_data(tmp_path: Path) -> None:
    from mutation.scratch import Checkout, build

    project = build(tmp_path, "unit", Checkout(ROOT), ["session"])
    assert (project / "reference" / "tests" / "conftest.py").is_file()
    assert (project / "conftest.py").read_bytes() == (ROOT / "conftest.py").read_bytes()
    for folder in ("fixtures", "snapshots"):
        link = project / "mutants" / folder
        assert link.is_symlink() and link.resolve() == (ROOT / folder).resolve()
    settings = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert settings["mutmut"]["pytest_add_cli_args_test_selection"] == ["reference/tests"]
    assert "--ignore=reference/tests/test_standalone.py" in settings["mutmut"]["pytest_add_cli_args"]
    assert {"conftest.py", "reference/tests"} <= set(settings["mutmut"]["also_copy"])
    assert "testpaths" not in settings["pytest"]["ini_options"]
    assert settings["pytest"]["ini_options"]["xfail_strict"] is True


def test_toml_values() -> None:
    from mutation.scratch import toml_value

    strings = ["a", 'b"c', "é"]
    assert toml_value(strings) == '["a", "b\\"c", "\\u00e9"]'
    assert tomllib.loads("x = " + toml_value(strings))["x"] == strings
    assert (toml_value(True), toml_value(3)) == ("true", "3")
    with pytest.raises(TypeError):
        toml_value(1.5)


# --- the triage in the docs ----------------------------------------------------------------------------


def test_the_triage_section_of_docs_mutation_md_is_made_from_the_triage_file() -> None:
    """After a change of ``mutation/triage.json``: ``python -m mutation.triage_doc``."""
    from mutation.triage import load_triage
    from mutation.triage_doc import BEGIN, DOC, END, render

    text = DOC.read_text(encoding="utf-8")
    section = text.partition(BEGIN + "\n")[2].partition(END)[0]
    assert section == render(load_triage())


def test_the_triage_section_groups_the_mutants_that_need_a_scenario_by_blind_spot(tmp_path: Path) -> None:
    from mutation.triage import load_triage
    from mutation.triage_doc import BEGIN, END, render, replace_section

    a, b = _names("_fused", 2)
    entries = {
        a: {"verdict": "needs a scenario", "blindSpot": "size/depth/fused fast path", "function": "h", "why": "big"},
        b: {"verdict": "equivalent", "function": "h", "why": "a | b"},
    }
    section = render(load_triage(_triage_file(tmp_path, entries)))
    assert "### Needs a scenario: 1" in section and "#### size/depth/fused fast path: 1" in section
    assert f"| `{b}` | a \\| b |" in section and "### Unit test (a Python-API detail no scenario can see): 0" in section
    document = f"head\n{BEGIN}\nold\n{END}\ntail\n"
    assert replace_section(document, section) == f"head\n{BEGIN}\n{section}{END}\ntail\n"
    with pytest.raises(ValueError, match="no section"):
        replace_section("head\n", section)


# --- re-scoring a report -------------------------------------------------------------------------------


def test_a_report_is_scored_again_with_the_current_triage(tmp_path: Path) -> None:
    from mutation.cli import main
    from mutation.triage import load_triage

    triaged = next(iter(load_triage().values()), None)
    name = triaged.name if triaged is not None else _names("session", 1)[0]
    digest = triaged.function_hash if triaged is not None else "h"
    module = name.split(".")[1]
    outcomes = [
        {"name": name, "status": "survived", "mutmut": "survived", "exitCode": 0, "seconds": 1.0, "function": digest},
        {"name": _names(module, 1, "x_zz")[0], "status": "killed", "mutmut": "killed", "exitCode": 1,
         "seconds": 1.0, "function": "h"},
    ]  # fmt: skip
    report = {
        "commit": "abc", "date": "d", "seed": 1, "sample": 2, "mutants": 2, "sampleDigest": "x",
        "modules": {module: {"mutants": 9, "sampled": 2}},
        "suites": {"scenarios": {"seconds": 60.0, "mutationSeconds": 30.0, "outcomes": outcomes}},
    }  # fmt: skip
    printed = _rescore(tmp_path, report)
    text = "\n".join(printed)
    assert "seed 1" in text and "sample digest x" in text and "== the scenario suite: 2 mutants" in text
    equivalent = triaged is not None and triaged.verdict == "equivalent"
    assert ("100.0 %" if equivalent else "50.0 %") in text
    (tmp_path / "broken.json").write_text("{}", encoding="utf-8")
    assert main(["--rescore", str(tmp_path / "broken.json")], echo=printed.append) == 2


def _rescore(tmp_path: Path, report: dict[str, Any], file_name: str = "report.json") -> list[str]:
    """What ``--rescore`` prints of ``report``, written to ``file_name``; it must exit 0."""
    from mutation.cli import main

    path = tmp_path / file_name
    path.write_text(json.dumps(report), encoding="utf-8")
    printed: list[str] = []
    assert main(["--rescore", str(path)], echo=printed.append) == 0
    return printed


def _rescored(tmp_path: Path, suite: str, outcome: dict[str, Any]) -> list[str]:
    """What ``--rescore`` prints of a report of one suite that ran one mutant."""
    report = {
        "commit": "abc", "date": "d", "seed": 1, "sample": 1, "mutants": 1, "sampleDigest": "x",
        "modules": {outcome["name"].split(".")[1]: {"mutants": 9, "sampled": 1}},
        "suites": {suite: {"seconds": 60.0, "mutationSeconds": 30.0, "outcomes": [outcome]}},
    }  # fmt: skip
    return _rescore(tmp_path, report, f"{suite}.json")


def _reported(name: str, status: str, function: str) -> dict[str, Any]:
    """One mutant's outcome as a report holds it."""
    return {"name": name, "status": status, "mutmut": status, "exitCode": int(status == "killed"), "seconds": 1.0,
            "function": function}  # fmt: skip


def test_a_triaged_mutant_the_scenarios_now_kill_is_named_for_removal(tmp_path: Path) -> None:
    from mutation.triage import load_triage

    entry = next(entry for entry in load_triage().values() if entry.verdict != "equivalent")
    line = f"  triaged {entry.verdict!r}, but the scenarios kill it (remove the entry): {entry.name}"
    killed = _reported(entry.name, "killed", entry.function_hash)
    assert line in _rescored(tmp_path, "scenarios", killed)
    assert line not in _rescored(tmp_path, "unit", killed)


def test_a_mutant_triaged_to_the_unit_tests_that_they_do_not_kill_is_named(tmp_path: Path) -> None:
    from mutation.triage import load_triage

    entry = next(entry for entry in load_triage().values() if entry.verdict == "unit test")
    line = f"  triaged to the unit tests, but they do not kill it (a unit test is missing): {entry.name}"
    survived = _reported(entry.name, "survived", entry.function_hash)
    assert line in _rescored(tmp_path, "unit", survived)
    assert line not in _rescored(tmp_path, "scenarios", survived)


# --- the target ----------------------------------------------------------------------------------------


def test_both_suites_together_kill_what_either_kills() -> None:
    from mutation.goal import together

    names = _names("session", 4)
    scenarios = [_outcome(names[0], "killed"), _outcome(names[1], "survived"), _outcome(names[2], "no tests"),
                 _outcome(names[3], "survived")]  # fmt: skip
    unit = [_outcome(names[0], "survived"), _outcome(names[1], "killed"), _outcome(names[2], "survived"),
            _outcome(names[3], "survived")]  # fmt: skip
    row = together(scenarios, unit, ["session"], equivalent={names[3]})["session"]
    assert (row.run, row.killed, row.no_tests, row.equivalent) == (4, 2, 1, 1)
    assert row.score == 2 / 3


def test_each_module_is_judged_against_the_target() -> None:
    from mutation.goal import FLOORS, IN_REACH, TOGETHER, format_verdicts, judge
    from mutation.score import SCHEMA_ROW, Tally

    assert IN_REACH == TOGETHER == 0.97 and "result" not in FLOORS
    assert FLOORS == {"jsonvalue": 0.80, "registry": 0.80, "session": 0.82, "_schema_deep": 0.62,
                      SCHEMA_ROW: 0.82, "_fused": 0.89}  # fmt: skip
    scenarios = {
        "schema": Tally(),
        "jsonvalue": Tally(killed=80, survived=20, api_only=20),  # in reach 100 %, score 80 %: at its floor
        "registry": Tally(killed=79, survived=21, api_only=21),  # score 79 %: below its floor of 80
        "result": Tally(killed=3, survived=7, api_only=7),  # no floor
        "session": Tally(killed=97, survived=3),  # in reach 97 %: met
        "_fused": Tally(killed=95, survived=5, api_only=2),  # in reach 95/98 = 96.9 %: missed
        "whole": Tally(killed=1),
    }
    both = {name: Tally(killed=row.killed + row.survived - (name == "result") * 1, survived=(name == "result") * 1)
            for name, row in scenarios.items()}  # fmt: skip
    verdicts = {verdict.module: verdict for verdict in judge(scenarios, both, whole=set(scenarios))}
    assert list(verdicts) == ["jsonvalue", "registry", "result", "session", "_fused"]
    assert verdicts["jsonvalue"].meets and verdicts["jsonvalue"].meets_floor
    assert verdicts["registry"].meets_floor is False and not verdicts["registry"].meets
    assert verdicts["result"].floor is None and verdicts["result"].meets_floor is None
    assert verdicts["result"].together == 0.9 and verdicts["result"].meets_together is False
    assert verdicts["session"].meets
    assert verdicts["_fused"].meets_in_reach is False and verdicts["_fused"].meets_floor is True
    lines = format_verdicts(list(verdicts.values()))
    assert lines[0].startswith("the target: in reach >= 97 % per module")
    assert "on the module's whole population (jsonvalue 80, registry 80, session 82, _schema_deep 62, " in lines[0]
    assert "schema + _schema_* 82, _fused 89; result none)" in lines[0]
    assert lines[-1] == "target missed by registry, result, _fused"
    jsonvalue = next(line for line in lines if line.startswith("jsonvalue"))
    assert jsonvalue.split() == ["jsonvalue", "100.0", "%", "ok", "100.0", "%", "ok", "80.0", "%", "ok", "80", "%",
                                 "yes"]  # fmt: skip
    alone = format_verdicts(judge({"session": Tally(killed=1)}, None, whole={"session"}))
    assert alone[-1] == "target met by every module; together not measured (run both suites)"
    assert format_verdicts(judge(None, None))[-1] == "target not judged: the scenario suite did not run"


def test_a_floor_is_judged_only_on_a_module_run_whole() -> None:
    from mutation.goal import format_verdicts, judge
    from mutation.score import Tally

    scenarios = {"registry": Tally(killed=70, survived=30, api_only=30), "session": Tally(killed=70, survived=30)}
    sampled = {verdict.module: verdict for verdict in judge(scenarios, None, whole={"session"})}
    assert sampled["registry"].meets_floor is None and sampled["registry"].meets  # below 80 %, but a sample
    assert sampled["session"].meets_floor is False  # below 82 %, and run whole
    lines = format_verdicts(list(sampled.values()))
    registry = next(line for line in lines if line.startswith("registry"))
    assert registry.split() == ["registry", "100.0", "%", "ok", "-", "70.0", "%", "sample", "80", "%", "yes"]
    assert lines[-1] == (
        "target missed by session; together not measured (run both suites); "
        "floors not judged on a sample (registry: run --all)"
    )


def test_a_rescored_report_of_both_suites_ends_with_the_target(tmp_path: Path) -> None:
    names = _names("result", 2)
    outcomes = {
        "scenarios": [_reported(names[0], "killed", "h"), _reported(names[1], "survived", "h")],
        "unit": [_reported(names[0], "survived", "h"), _reported(names[1], "killed", "h")],
    }
    report = {
        "commit": "abc", "date": "d", "seed": 1, "sample": 2, "mutants": 2, "sampleDigest": "x",
        "modules": {"result": {"mutants": 9, "sampled": 2}},
        "suites": {suite: {"seconds": 6.0, "mutationSeconds": 3.0, "outcomes": found}
                   for suite, found in outcomes.items()},
    }  # fmt: skip
    printed = _rescore(tmp_path, report)
    result = next(line for line in printed if line.startswith("result "))
    assert result.split() == ["result", "50.0", "%", "MISSED", "100.0", "%", "ok", "50.0", "%", "-", "no"]
    assert printed[-1] == "target missed by result"


def test_a_rescored_report_judges_the_floors_of_the_modules_it_took_whole(tmp_path: Path) -> None:
    session, registry = _names("session", 2, "x_zz"), _names("registry", 1, "x_zz")
    deep, dsl = _names("_schema_deep", 1, "x_zz"), _names("_schema_dsl", 1, "x_zz")
    outcomes = [_reported(name, "survived", "h") for name in (*session, *registry, *dsl)]
    outcomes.append(_reported(deep[0], "killed", "h"))
    report = {
        "commit": "abc", "date": "d", "seed": 1, "sample": None, "mutants": 5, "sampleDigest": "x",
        "modules": {"schema": {"mutants": 0, "sampled": 0}, "_schema_deep": {"mutants": 1, "sampled": 1},
                    "_schema_dsl": {"mutants": 1, "sampled": 1}, "registry": {"mutants": 9, "sampled": 1},
                    "session": {"mutants": 2, "sampled": 2}},
        "suites": {"scenarios": {"seconds": 6.0, "mutationSeconds": 3.0, "outcomes": outcomes}},
    }  # fmt: skip
    printed = _rescore(tmp_path, report)
    scores = {cells[0]: cells[3:5] for cells in (re.split(r"\s{2,}", line.strip()) for line in printed)}
    assert scores["_schema_deep"] == ["100.0 % ok", "62 %"]  # run whole: judged
    assert scores["registry"] == ["0.0 % sample", "80 %"]  # one of nine: not judged
    assert scores["session"] == ["0.0 % MISSED", "82 %"]
    assert scores["schema + _schema_*"] == ["50.0 % MISSED", "82 %"]  # the group selected, each module whole
    assert printed[-1] == (
        "target missed by _schema_dsl, registry, session, schema + _schema_*; "
        "together not measured (run both suites); floors not judged on a sample (registry: run --all)"
    )


def test_the_plugin_gives_the_trampolines_frames_room_once() -> None:
    """Each mutant's run configures pytest again in a forked process: the limit is tripled once, not each time."""
    from mutation.scratch import PLUGIN

    path = ROOT / "mutation" / "suite" / f"{PLUGIN}.py"
    spec = importlib.util.spec_from_file_location("plugin_under_test", path)
    assert spec is not None and spec.loader is not None
    before = sys.getrecursionlimit()
    try:
        plugin = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(plugin)
        for _ in range(2):
            plugin.pytest_configure(SimpleNamespace(args=[], stash={}))
            assert sys.getrecursionlimit() == 3 * before
    finally:
        sys.setrecursionlimit(before)
