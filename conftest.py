"""Settings of the whole test suite: the hypothesis profiles, and which tests are exhaustive.

``HYPOTHESIS_PROFILE`` chooses the profile (``dev`` when unset):

- ``dev`` — quick local runs: few examples, failures kept in the local example database.
- ``ci`` — ``nox -s tests``: more examples, derandomized (a run is reproducible), no database.
- ``thorough`` — ``nox -s tests-thorough``: the long runs, and the exhaustive tests (marked ``thorough``),
  which every other profile leaves out unless ``-m`` asks for them.

A property test that needs more (or fewer) examples than others states it relative to the profile, as
``max_examples=3 * settings().max_examples``, so each profile scales every test alike.
"""

from __future__ import annotations

import gc
import os

import pytest
from hypothesis import HealthCheck, settings

#: The examples per property test of each profile (``thorough`` is what the tests ran before profiles existed).
EXAMPLES = {"dev": 20, "ci": 40, "thorough": 100}

# No deadlines: the suite checks what code answers, not how fast, and runs on loaded, shared machines.
settings.register_profile("dev", max_examples=EXAMPLES["dev"], deadline=None, print_blob=True)
settings.register_profile(
    "ci",
    max_examples=EXAMPLES["ci"],
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=EXAMPLES["thorough"],
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
if PROFILE not in EXAMPLES:
    raise pytest.UsageError(f"HYPOTHESIS_PROFILE={PROFILE!r} is not a profile: choose one of {', '.join(EXAMPLES)}")
settings.load_profile(PROFILE)


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``thorough`` marker."""
    config.addinivalue_line("markers", "thorough: an exhaustive check, run under the thorough profile")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Exempt what collection made (thousands of items, every module) from the garbage collector's passes: they
    live until the end anyway, and every full pass would walk them again."""
    gc.freeze()


def pytest_report_header(config: pytest.Config) -> str:
    """Say which profile the run has."""
    return f"hypothesis profile: {PROFILE} ({settings().max_examples} examples per property test)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the exhaustive tests unless the profile is ``thorough`` or a ``-m`` expression chooses."""
    if PROFILE == "thorough" or config.getoption("markexpr"):
        return
    kept = [item for item in items if item.get_closest_marker("thorough") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("thorough")])
        items[:] = kept
