"""``toolcanon report --format badge``: one implementation's verdict as a shields.io endpoint badge.

The badge is the JSON an endpoint badge reads (https://shields.io/badges/endpoint-badge):
``{"schemaVersion": 1, "label": "toolcanon", "message": "168/177 passed", "color": "brightgreen"}``.

- ``message``: ``<passed>/<scenarios> passed``, every scenario of the run counted (a skipped one is not a pass);
  ``, N known`` added when a baseline excused N failures; an interrupted run says ``interrupted`` instead.
- ``color``, by the verdict: PASS ``brightgreen``, PASS with failures excused by a baseline ``yellowgreen``,
  FAIL and NOTHING PASSED ``red``, INTERRUPTED ``lightgrey``.

A report holding several implementations names the one to show with its position (``--impl-index N``, from 1,
as the text output numbers them) or its name (``--impl-name NAME``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_LABEL", "BadgeError", "badge", "choose_run"]

#: The badge's label (left half) unless another is given.
DEFAULT_LABEL = "toolcanon"

_COLOURS = {"pass": "brightgreen", "fail": "red", "nothing-passed": "red", "interrupted": "lightgrey"}


class BadgeError(ValueError):
    """The report does not say which implementation the badge is for (a usage error)."""


def choose_run(report: dict[str, Any], index: int | None = None, name: str | None = None) -> dict[str, Any]:
    """The implementation entry of ``report`` at position ``index`` (from 1) or named ``name``; the only one
    when neither is given. Raises :class:`BadgeError` when that does not pick exactly one."""
    runs: list[dict[str, Any]] = report["implementations"]
    listing = ", ".join(f"#{n} {run['implementation']['name']}" for n, run in enumerate(runs, start=1))
    if index is not None:
        if not 1 <= index <= len(runs):
            raise BadgeError(f"--impl-index {index}: the report holds {len(runs)} implementation(s): {listing}")
        return runs[index - 1]
    if name is not None:
        named = [run for run in runs if run["implementation"]["name"] == name]
        if len(named) != 1:
            found = "no" if not named else f"{len(named)}"
            raise BadgeError(
                f"--impl-name {name}: {found} implementation(s) of that name in the report ({listing or 'none'})"
                + ("; give --impl-index" if named else "")
            )
        return named[0]
    if len(runs) != 1:
        raise BadgeError(
            f"the report holds {len(runs)} implementations ({listing or 'none'}): "
            "give --impl-index N or --impl-name NAME, one badge per implementation"
        )
    return runs[0]


def badge(run: dict[str, Any], label: str = DEFAULT_LABEL) -> dict[str, Any]:
    """The endpoint badge of one implementation's entry of a JSON report."""
    summary = run["summary"]
    verdict = run["verdict"]
    message = f"{summary['passed']}/{summary['total']} passed"
    if summary["knownFailures"]:
        message += f", {summary['knownFailures']} known"
    if verdict == "interrupted":
        message = "interrupted"
    colour = _COLOURS[verdict]
    if verdict == "pass" and summary["knownFailures"]:
        colour = "yellowgreen"
    return {"schemaVersion": 1, "label": label, "message": message, "color": colour}
