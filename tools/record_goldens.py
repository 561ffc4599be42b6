"""Record the goldens of the scenarios whose golden comes from the original, by running the original.

A scenario holding a value Python cannot express names the implementation its golden is recorded from
(``"golden": {"source": "typescript-dsh-tools", "reason": ...}``, ``docs/protocol.md``, "Goldens"). This script
runs each such scenario through that implementation's adapter and writes its transcript, exactly the bytes the
adapter answered, to ``snapshots/scenarios/<id>.json``. It never writes a golden of the reference: those come
from ``pytest conformance/tests/test_scenarios.py --snapshot-update``.

    python tools/record_goldens.py                  # every recorded golden
    python tools/record_goldens.py js-keys          # one (several ids may be given)
    python tools/record_goldens.py --check          # write nothing; exit 1 when a golden would change

Exit status: 0 done (``--check``: every golden is current), 1 an implementation did not answer a transcript or
(``--check``) a golden is missing or differs, 2 a usage error (an unknown id, a scenario whose golden is the
reference's, a source this script cannot run, or whose engine is not installed: the original runs on the Node
``tools/original_node.py`` picks). Review every new or changed golden against the contract digest
and commit it on its own, saying why the bytes exist or changed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import jsonschema
from jsonschema.exceptions import best_match
from original_node import NodeUnavailable, adapter_command

from toolcanon_conformance.adapters.subprocess import Subprocess
from toolcanon_conformance.golden_source import REFERENCE, golden_source_of
from toolcanon_conformance.implementation import Ran
from toolcanon_conformance.scenario import Scenario, ScenarioError, load_scenarios, transcript_schema

ROOT: Final = Path(__file__).resolve().parents[1]

ADAPTERS: Final[dict[str, Callable[[], list[str]]]] = {
    "typescript-dsh-tools": adapter_command,
}
"""How to get the adapter command of each source a golden may be recorded from (it may raise
:class:`NodeUnavailable`: the original runs only on the engine its packages require)."""


class UsageError(Exception):
    """What was asked for cannot be recorded: exit status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="record_goldens.py", description="Record the goldens whose source is not the reference."
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="scenario ids (default: every recorded golden)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a golden would change")
    parser.add_argument("--scenarios", type=Path, default=ROOT / "fixtures" / "scenarios", metavar="DIR")
    parser.add_argument("--goldens", type=Path, default=ROOT / "snapshots" / "scenarios", metavar="DIR")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds per scenario")
    return parser


def chosen(scenarios: Sequence[Scenario], ids: Sequence[str]) -> list[Scenario]:
    """The scenarios to record: the named ones, or every one whose golden source is not the reference."""
    if not ids:
        return [scenario for scenario in scenarios if golden_source_of(scenario.data) != REFERENCE]
    by_id = {scenario.id: scenario for scenario in scenarios}
    picked: list[Scenario] = []
    for scenario_id in dict.fromkeys(ids):
        if scenario_id not in by_id:
            raise UsageError(f"{scenario_id}: no such scenario")
        scenario = by_id[scenario_id]
        if golden_source_of(scenario.data) == REFERENCE:
            raise UsageError(
                f"{scenario_id}: its golden is the reference's transcript, not recorded: "
                "pytest conformance/tests/test_scenarios.py --snapshot-update writes it"
            )
        picked.append(scenario)
    for scenario in picked:
        source = golden_source_of(scenario.data)
        if source not in ADAPTERS:
            raise UsageError(f"{scenario.id}: no adapter is known for the source {source!r}")
    return picked


def _problem(scenario_id: str, transcript: str) -> str | None:
    """Why a transcript cannot be a golden, or ``None``."""
    try:
        parsed: Any = json.loads(transcript)
    except ValueError as error:
        return f"the transcript is not JSON: {error}"
    violation = best_match(jsonschema.Draft202012Validator(transcript_schema()).iter_errors(parsed))
    if violation is not None:
        return f"the transcript does not follow its schema: {violation.json_path}: {violation.message}"
    if parsed.get("scenario") != scenario_id:
        return f"the transcript is of scenario {parsed.get('scenario')!r}"
    return None


def record(scenarios: Sequence[Scenario], goldens: Path, *, check: bool, timeout: float) -> int:
    """Run each scenario through its source's adapter and write (or, with ``check``, compare) its golden; 2 when
    a source's engine is missing."""
    failed = False
    counts = {"new": 0, "changed": 0, "unchanged": 0}
    sources = list(dict.fromkeys(golden_source_of(scenario.data) for scenario in scenarios))
    try:
        commands = {source: ADAPTERS[source]() for source in sources}
    except NodeUnavailable as error:
        print(f"record_goldens.py: {error}", file=sys.stderr)
        return 2
    for source in sources:
        adapter = Subprocess(commands[source], timeout=timeout, validate_protocol=True, cwd=ROOT)
        adapter.start()
        try:
            for seq, scenario in enumerate(s for s in scenarios if golden_source_of(s.data) == source):
                outcome = adapter.run(seq, scenario.data)
                if not isinstance(outcome, Ran):
                    print(f"{scenario.id}: {source} did not answer a transcript: {outcome}")
                    failed = True
                    continue
                problem = _problem(scenario.id, outcome.transcript)
                if problem is not None:
                    print(f"{scenario.id}: {problem}")
                    failed = True
                    continue
                data = outcome.transcript.encode("utf-8", errors="surrogatepass")
                path = goldens / f"{scenario.id}.json"
                state = "new" if not path.exists() else "unchanged" if path.read_bytes() == data else "changed"
                counts[state] += 1
                if not check and state != "unchanged":
                    path.write_bytes(data)
                print(f"{scenario.id}: {state} (from {source})")
        finally:
            adapter.stop()
    differing = counts["new"] + counts["changed"]
    summary = ", ".join(f"{count} {state}" for state, count in counts.items())
    if check and differing:
        summary += ": record them without --check"
    elif differing:
        summary += ": review the written goldens against the contract digest before committing them"
    print(summary)
    return 1 if failed or (check and differing) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Record or check the goldens; return the exit status."""
    options = _parser().parse_args(argv)
    try:
        scenarios = chosen(load_scenarios(options.scenarios), options.ids)
    except (UsageError, ScenarioError, FileNotFoundError) as error:
        print(f"record_goldens.py: {error}", file=sys.stderr)
        return 2
    if not scenarios:
        print("no scenario has a golden recorded from another implementation")
        return 0
    return record(scenarios, options.goldens, check=options.check, timeout=options.timeout)


if __name__ == "__main__":
    raise SystemExit(main())
