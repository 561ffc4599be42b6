"""The fuzz targets still run: each takes its seeds and a few hundred mutants of them without a crash.

A few hundred deterministic inputs per target, so that a target whose entry point moved, whose seeds no longer
load, or whose typed errors changed fails here rather than in a long fuzzing run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from repository_root import ROOT, root_importable  # noqa: F401  (the fixture is used by its name)

MUTANTS = 250
# Seeds fed as they are (every one for the fast targets, every second or fourth for the slower ones).
SEED_STRIDE = {"snapshot": 2, "canonical": 2, "session-log": 1, "protocol": 1, "scenario": 4}


@pytest.mark.parametrize("name", sorted(SEED_STRIDE))
def test_target_runs_its_seeds_and_mutants(name: str, tmp_path: Path) -> None:
    """Seeds are accepted, mutants reach the typed errors, and nothing crashes.

    A crash the fuzzer finds is fixed with a regression test beside the code it was in, not listed here.
    """
    from fuzz import TARGETS, load_target
    from fuzz.engine import run_inputs
    from fuzz.mutation import mutants
    from fuzz.target import ACCEPTED

    assert set(TARGETS) == set(SEED_STRIDE)
    target = load_target(name)
    seeds = list(target.seeds())
    assert len(seeds) >= 10, "the seeds come from the project's data"

    on_seeds = run_inputs(target, seeds[:: SEED_STRIDE[name]], tmp_path)
    assert on_seeds.crashes == {}
    assert on_seeds.outcomes[ACCEPTED] >= 0.9 * on_seeds.executions, "the seeds are valid inputs"

    on_mutants = run_inputs(target, mutants(seeds, MUTANTS, tokens=target.tokens), tmp_path)
    crashes = on_mutants.crashes.values()
    assert not crashes, "\n".join(f"{crash.signature}\n{crash.traceback}" for crash in crashes)
    assert on_mutants.executions == MUTANTS
    refusals = [outcome for outcome in on_mutants.outcomes if outcome.startswith("rejected:")]
    assert refusals, "mutants reach the entry point's typed errors"


def test_a_crash_is_kept_with_its_shortest_input(tmp_path: Path) -> None:
    from fuzz.engine import run_inputs
    from fuzz.target import ACCEPTED, Target

    def check(data: bytes) -> str:
        if b"!" in data:
            raise KeyError(data)
        return ACCEPTED

    target = Target("toy", "raises KeyError on '!'", check, lambda: [b"ok"])
    campaign = run_inputs(target, [b"ok", b"long input!", b"!", b"again!"], tmp_path)
    assert campaign.executions == 4
    assert campaign.crashing_inputs == 3
    [crash] = campaign.crashes.values()
    assert crash.signature.startswith("KeyError at ")
    assert crash.inputs == 3
    assert Path(crash.reproducer).read_bytes() == b"!"
    assert "load_target('toy').check(bytes.fromhex('21'))" in Path(crash.reproducer).with_suffix(".txt").read_text()


def test_a_hang_is_a_crash(tmp_path: Path) -> None:
    from fuzz.engine import run_inputs
    from fuzz.target import ACCEPTED, Target

    def check(data: bytes) -> str:
        while data:
            pass
        return ACCEPTED

    target = Target("hang", "spins on any non-empty input", check, lambda: [b""])
    campaign = run_inputs(target, [b"", b"x"], tmp_path, input_timeout=0.2)
    assert [crash.signature.split(" ")[0] for crash in campaign.crashes.values()] == ["InputTimedOut"]
    assert campaign.outcomes == {ACCEPTED: 1, "crash": 1}
