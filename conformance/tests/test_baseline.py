"""Baselines of known failures: what they excuse, and how they go stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolcanon_conformance.baseline import Baseline, BaselineError, Change, Intent
from toolcanon_conformance.diff import Difference, parse_path


def baseline(*entries: dict[str, object]) -> Baseline:
    return Baseline.from_json({"formatVersion": 1, "knownFailures": list(entries)})


def at(path: str) -> Difference:
    return Difference(parse_path(path), "value", "1", "2")


def test_a_whole_scenario_entry_excuses_any_failure_or_error() -> None:
    known = baseline({"scenario": "s", "reason": "issue 4"})
    assert known.judge("s", "failed", [at("$.a")]) == ("known-failure", "issue 4")
    assert known.judge("s", "errored")[0] == "known-failure"
    assert known.judge("other", "failed", [at("$.a")]) == (None, "")
    assert known.judge("s", "skipped") == (None, "")


def test_a_listed_scenario_that_passes_is_stale() -> None:
    verdict, note = baseline({"scenario": "s"}).judge("s", "passed")
    assert verdict == "stale" and "passes" in note


def test_path_entries_excuse_only_differences_under_them() -> None:
    known = baseline({"scenario": "s", "paths": ["$.steps.c1.result.meta", "steps.c2"]})
    assert known.judge("s", "failed", [at("$.steps.c1.result.meta.x"), at("$.steps.c2")])[0] == "known-failure"
    verdict, note = known.judge("s", "failed", [at("$.steps.c1.result.meta"), at("$.steps.c3"), at("$.steps.c2")])
    assert verdict == "unlisted" and "$.steps.c3" in note
    verdict, note = known.judge("s", "failed", [at("$.steps.c2.value")])
    assert verdict == "stale" and "$.steps.c1.result.meta" in note
    assert known.judge("s", "errored")[0] == "unlisted"


def test_unknown_scenarios_are_problems() -> None:
    [problem] = baseline({"scenario": "gone"}, {"scenario": "here"}).unknown_scenarios({"here"})
    assert problem.kind == "unknown-scenario" and problem.scenario == "gone"


def test_load_and_round_trip(tmp_path: Path) -> None:
    data = {"formatVersion": 1, "knownFailures": [{"scenario": "s", "paths": ["$.a[0]"], "reason": "r"}]}
    file = tmp_path / "baseline.json"
    file.write_text(json.dumps(data))
    assert Baseline.load(file).to_json() == data


def test_kinds_and_intents_round_trip() -> None:
    data = {
        "formatVersion": 1,
        "knownFailures": [
            {"scenario": "d", "kind": "deviation", "reason": "r", "intent": {"source": "src/a.ts", "quote": "q"}},
            {"scenario": "h", "paths": ["$.a"], "kind": "host-limit", "reason": "Node 22: past 1,600 levels"},
            {"scenario": "old", "reason": "format 1 without a kind"},
            {"scenario": "p", "kind": "predates", "reason": "r", **CHANGE},
        ],
    }
    loaded = Baseline.from_json(data)
    assert loaded.entries["p"].kind == "predates" and loaded.entries["p"].change == Change("0.2.0", "lib/a.js", "q")
    assert loaded.entries["d"].kind == "deviation" and loaded.entries["d"].intent == Intent("src/a.ts", "q")
    assert loaded.entries["h"].kind == "host-limit" and loaded.entries["old"].kind is None
    assert loaded.to_json() == data


#: A change a release predates: the later release, the file of its package and the lines that bring it.
CHANGE = {"change": {"release": "0.2.0", "source": "lib/a.js", "quote": "q"}}


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"knownFailures": []}, "formatVersion"),
        ({"formatVersion": 1, "knownFailures": [{"scenario": "s", "path": "x"}]}, "path"),
        ({"formatVersion": 1, "knownFailures": [{"scenario": "s"}, {"scenario": "s"}]}, "listed twice"),
        ({"formatVersion": 1, "knownFailures": [{"scenario": "s", "paths": ["$..x"]}]}, "not a JSON path"),
        *(
            ({"formatVersion": 1, "knownFailures": [{"scenario": "s", "reason": "r", **entry}]}, words)
            for entry, words in [
                ({"kind": "bug"}, "s: kind 'bug' is neither 'deviation' .*, 'host-limit' .* nor 'predates'"),
                ({"kind": ""}, "s: kind '' is neither"),
                ({"kind": None}, "s: kind None is neither"),
                ({"kind": "deviation"}, "s: a deviation quotes the intent it contradicts: no intent"),
                ({"kind": "deviation", "intent": {"source": "a.ts", "quote": " "}}, "s: the intent's quote is missing"),
                ({"kind": "deviation", "intent": {"source": "a.ts"}}, "s: the intent's quote is missing"),
                ({"kind": "deviation", "intent": {"source": "/etc/a.ts", "quote": "q"}}, r"intent\.source"),
                ({"kind": "deviation", "intent": {"source": "a.ts", "quote": "q", "line": 3}}, "line"),
                ({"kind": "host-limit", "intent": {"source": "a.ts", "quote": "q"}}, "s: only a deviation quotes"),
                ({"intent": {"source": "a.ts", "quote": "q"}}, "s: only a deviation quotes an intent"),
                ({"kind": "host-limit", "reason": " "}, "s: a host limit names the engine and its measured limit"),
                ({"kind": "predates"}, r"s: a release that predates a change quotes it: no change \{release"),
                ({"kind": "deviation", "intent": {"source": "a.ts", "quote": "q"}, **CHANGE}, "s: only an entry of"),
                (CHANGE, "s: only an entry of kind 'predates' quotes a change"),
                ({"kind": "predates", "change": {"release": "1", "source": "a.js"}}, "quote"),
                ({"kind": "predates", "change": {"release": "1", "source": "/a.js", "quote": "q"}}, r"change\.source"),
            ]
        ),
    ],
)
def test_a_malformed_baseline_is_refused(data: object, words: str) -> None:
    with pytest.raises(BaselineError, match=words):
        Baseline.from_json(data)


def test_an_unreadable_baseline_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="cannot read"):
        Baseline.load(tmp_path / "missing.json")


@pytest.mark.parametrize("depth", [300, 100_000])
def test_a_baseline_nested_too_deep_is_a_baseline_error(tmp_path: Path, depth: int) -> None:
    file = tmp_path / "baseline.json"
    file.write_text(
        '{"formatVersion": 1, "knownFailures": [{"scenario": "s", "reason": ' + "[" * depth + "]" * depth + "}]}"
    )
    with pytest.raises(BaselineError, match="cannot read the baseline: nested deeper than 64 levels"):
        Baseline.load(file)
    deep: object = []
    for _ in range(depth if depth < 1000 else 1000):
        deep = [deep]
    with pytest.raises(BaselineError, match="not a baseline: nested deeper than 64 levels"):
        Baseline.from_json({"formatVersion": 1, "knownFailures": [{"scenario": "s", "reason": deep}]})
