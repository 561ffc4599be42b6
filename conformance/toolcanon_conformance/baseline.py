"""A baseline of known failures: listed deviations that do not fail a run, and that must not go stale.

A baseline file names the scenarios an implementation is known to fail, optionally narrowed to JSON paths::

    {"formatVersion": 1,
     "knownFailures": [
       {"scenario": "post-accept-value-rerenders", "reason": "issue 12"},
       {"scenario": "meta-direct-vs-nested", "paths": ["$.steps.outer.nested[0].result.meta"],
        "kind": "deviation", "reason": "a nested call gets no meta",
        "intent": {"source": "src/meta.ts", "quote": "Every call carries its meta."}},
       {"scenario": "log-deep-content", "kind": "host-limit",
        "reason": "Node 22.23.5: structuredClone overflows its stack past 1,601 levels"}]}

A failure of a listed scenario is *known* when every difference lies under one of its paths (any difference,
when it lists none; an errored scenario only matches an entry without paths). Everything else still fails the
run, and so does a stale entry: a listed scenario that now passes, a listed path where nothing differs any
more, or a scenario id that does not exist.

An entry may name its ``kind``: ``"deviation"``, where the implementation contradicts a written intent of its
own, quoted in ``intent`` (``source``: a file of its repository or ``"design note"``; ``quote``: the text),
``"host-limit"``, a limit of the engine it runs on, which its ``reason`` names with the measured limit, or
``"predates"``, a release published before the implementation adopted what a rule requires, which quotes in
``change`` the lines of the later release that bring it (``release``, ``source``: a file of that release's
package, ``quote``)::

       {"scenario": "nest-image-forwarded", "paths": ["$.steps.p.result.additionalContexts"], "kind": "predates",
        "reason": "0.1.0-rc.7 forwards a nested call's image content",
        "change": {"release": "0.1.0-rc.7", "source": "lib/index.js", "quote": "exec.deferContext(createUserMessage({"}}
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Any, Literal, TypeAlias

from toolcanon_conformance._schemas import schema_errors
from toolcanon_conformance.deepjson import NESTING_LIMIT, first_too_deep, loads
from toolcanon_conformance.diff import Difference, Path, format_path, is_under, parse_path

__all__ = [
    "BASELINE_FORMAT_VERSION",
    "KINDS",
    "Baseline",
    "BaselineError",
    "BaselineProblem",
    "Change",
    "Intent",
    "Kind",
    "KnownFailure",
    "Verdict",
]

BASELINE_FORMAT_VERSION = 1

Verdict: TypeAlias = Literal["known-failure", "unlisted", "stale"]
#: What a known failure is: the implementation contradicting its own written intent, its engine's limit, or a
#: release older than the change that brings what a rule requires.
Kind: TypeAlias = Literal["deviation", "host-limit", "predates"]
KINDS: tuple[Kind, ...] = ("deviation", "host-limit", "predates")


class BaselineError(ValueError):
    """A baseline file that cannot be read: not JSON, or not of the baseline schema."""


@dataclass(frozen=True, slots=True)
class Intent:
    """The written intent a deviation contradicts: where it is written, and its words."""

    source: str
    quote: str


@dataclass(frozen=True, slots=True)
class Change:
    """The change a release predates: the later release that brings it, the file of its package, and its lines."""

    release: str
    source: str
    quote: str


@dataclass(frozen=True, slots=True)
class KnownFailure:
    """One entry of a baseline: a scenario known to fail, optionally only at some JSON paths, and of which kind."""

    scenario: str
    paths: tuple[Path, ...] = ()
    reason: str = ""
    kind: Kind | None = None
    intent: Intent | None = None
    change: Change | None = None


@dataclass(frozen=True, slots=True)
class BaselineProblem:
    """Something wrong with the baseline itself, found by a run: it fails the run."""

    scenario: str
    kind: Literal["stale", "unknown-scenario"]
    message: str


@dataclass(frozen=True, slots=True)
class Baseline:
    """The known failures of one implementation, keyed by scenario id."""

    entries: dict[str, KnownFailure] = field(default_factory=dict)

    @classmethod
    def load(cls, file: str | FilePath) -> Baseline:
        """Read a baseline file, checked against ``schemas/baseline.schema.json``."""
        try:
            data = loads(FilePath(file).read_text(encoding="utf-8"), max_depth=NESTING_LIMIT)
        except (OSError, ValueError) as error:
            raise BaselineError(f"{file}: cannot read the baseline: {error}") from None
        return cls.from_json(data, source=str(file))

    @classmethod
    def from_json(cls, data: Any, source: str = "<baseline>") -> Baseline:
        """A baseline from its parsed JSON form (nested at most ``NESTING_LIMIT`` levels, as a file must be)."""
        too_deep = first_too_deep(data, NESTING_LIMIT)
        if too_deep is not None:
            raise BaselineError(f"{source}: not a baseline: nested deeper than {NESTING_LIMIT} levels")
        errors = _kind_problems(data) or schema_errors("baseline.schema.json", data)
        if errors:
            raise BaselineError(f"{source}: not a baseline: " + "; ".join(errors))
        entries: dict[str, KnownFailure] = {}
        for item in data["knownFailures"]:
            try:
                paths = tuple(parse_path(text) for text in item.get("paths", ()))
            except ValueError as error:
                raise BaselineError(f"{source}: {item['scenario']}: {error}") from None
            if item["scenario"] in entries:
                raise BaselineError(f"{source}: {item['scenario']} is listed twice")
            intent, change = item.get("intent"), item.get("change")
            entries[item["scenario"]] = KnownFailure(
                item["scenario"],
                paths,
                item.get("reason", ""),
                item.get("kind"),
                None if intent is None else Intent(intent["source"], intent["quote"]),
                None if change is None else Change(change["release"], change["source"], change["quote"]),
            )
        return cls(entries)

    def to_json(self) -> dict[str, Any]:
        """The file form of this baseline."""
        items: list[dict[str, Any]] = []
        for entry in self.entries.values():
            item: dict[str, Any] = {"scenario": entry.scenario}
            if entry.paths:
                item["paths"] = [format_path(path) for path in entry.paths]
            if entry.kind is not None:
                item["kind"] = entry.kind
            if entry.reason:
                item["reason"] = entry.reason
            if entry.intent is not None:
                item["intent"] = {"source": entry.intent.source, "quote": entry.intent.quote}
            if entry.change is not None:
                change = entry.change
                item["change"] = {"release": change.release, "source": change.source, "quote": change.quote}
            items.append(item)
        return {"formatVersion": BASELINE_FORMAT_VERSION, "knownFailures": items}

    def unknown_scenarios(self, known_ids: Collection[str]) -> list[BaselineProblem]:
        """A problem for each listed scenario that is not among ``known_ids``."""
        return [
            BaselineProblem(scenario, "unknown-scenario", f"the baseline lists {scenario!r}, which is no scenario")
            for scenario in self.entries
            if scenario not in known_ids
        ]

    def judge(self, scenario: str, status: str, differences: Iterable[Difference] = ()) -> tuple[Verdict | None, str]:
        """How the baseline sees one scenario's outcome: ``(verdict, explanation)``.

        ``None`` for a scenario the baseline does not list or that did not run. ``"known-failure"``: the
        failure is listed. ``"unlisted"``: it fails at a place the entry does not list. ``"stale"``: the entry
        lists a failure that is gone.
        """
        entry = self.entries.get(scenario)
        if entry is None or status == "skipped":
            return None, ""
        if status == "passed":
            return "stale", f"{scenario} is listed as a known failure but passes: remove it from the baseline"
        if not entry.paths:
            return "known-failure", entry.reason
        if status != "failed":
            return "unlisted", f"{scenario} is {status}, not failing at the listed paths"
        found = list(differences)
        outside = [d for d in found if not any(is_under(d.path, prefix) for prefix in entry.paths)]
        if outside:
            return "unlisted", "differs outside the listed paths, at " + ", ".join(d.where for d in outside[:5])
        gone = [prefix for prefix in entry.paths if not any(is_under(d.path, prefix) for d in found)]
        if gone:
            return "stale", "no longer differs at " + ", ".join(format_path(prefix) for prefix in gone)
        return "known-failure", entry.reason


def _kind_problems(data: Any) -> list[str]:
    """The entries whose kind, intent or reason do not fit together, said in words (the schema says it in paths)."""
    items = data.get("knownFailures") if isinstance(data, dict) else None
    problems: list[str] = []
    for index, item in enumerate(items if isinstance(items, list) else ()):
        if not isinstance(item, dict) or not ("kind" in item or "intent" in item or "change" in item):
            continue
        name = item["scenario"] if isinstance(item.get("scenario"), str) else f"knownFailures[{index}]"
        kind, intent, reason = item.get("kind"), item.get("intent"), item.get("reason")
        if "kind" in item and kind not in KINDS:
            problems.append(
                f"{name}: kind {kind!r} is neither 'deviation' (it contradicts a written intent of its own), "
                "'host-limit' (a limit of its engine) nor 'predates' (a later release brings what it lacks)"
            )
        elif kind == "deviation" and intent is None:
            problems.append(f"{name}: a deviation quotes the intent it contradicts: no intent {{source, quote}}")
        elif kind == "predates" and "change" not in item:
            problems.append(f"{name}: a release that predates a change quotes it: no change {{release, source, quote}}")
        elif kind != "predates" and "change" in item:
            problems.append(f"{name}: only an entry of kind 'predates' quotes a change")
        elif kind != "deviation" and intent is not None:
            problems.append(f"{name}: only a deviation quotes an intent (kind: 'deviation')")
        elif kind not in ("deviation", "predates") and not (isinstance(reason, str) and reason.strip()):
            problems.append(f"{name}: a host limit names the engine and its measured limit in its reason")
        if isinstance(intent, dict) and not (isinstance(intent.get("quote"), str) and intent["quote"].strip()):
            problems.append(f"{name}: the intent's quote is missing or blank")
    return problems
