"""Which scenarios a run takes: ``-k`` patterns and ``--rule`` ids, the same for every command and the plugin.

A ``-k`` pattern matches a scenario whose id contains it, ignoring case; given several times, a scenario
matching any of them is taken (OR). A ``--rule`` id is read ignoring case (``r-post-4`` is ``R-POST-4``) and
must name a rule of the contract or of the scenarios loaded: an unknown id is :class:`UnknownRule`, whose
message names it and the closest known ids. Given several times, a scenario exercising any of them is taken.
Both together take the scenarios that match a pattern *and* exercise a rule.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

__all__ = ["UnknownRule", "closest", "known_rules", "matches", "resolve_names", "resolve_rules", "select"]

_S = TypeVar("_S", bound=Mapping[str, Any])


class UnknownRule(ValueError):
    """A ``--rule`` id that is no rule of the contract or of the scenarios: a usage error."""

    def __init__(self, rule: str, closest: Sequence[str]) -> None:
        self.rule = rule
        self.closest = tuple(closest)
        hint = f" (closest: {', '.join(self.closest)})" if self.closest else ""
        super().__init__(f"--rule {rule}: no such rule{hint}")


def known_rules(scenarios: Iterable[Mapping[str, Any]] = ()) -> list[str]:
    """The rule ids of the contract, in its order, then any other id the ``scenarios`` exercise."""
    from toolcanon_conformance.rules import load_rules

    ids = dict.fromkeys(rule.id for rule in load_rules())
    for scenario in scenarios:
        ids.update(dict.fromkeys(str(rule) for rule in scenario.get("rules", ())))
    return list(ids)


def resolve_names(
    requested: Iterable[str], known: Iterable[str], unknown: Callable[[str, str], Exception]
) -> tuple[str, ...]:
    """The ``requested`` names spelled as the ``known`` ones are (read ignoring case and surrounding space), each
    once, in order; a name that is none of them raises ``unknown(name, stripped name)``."""
    by_folded = {name.casefold(): name for name in known}
    resolved: dict[str, None] = {}
    for name in requested:
        found = by_folded.get(name.strip().casefold())
        if found is None:
            raise unknown(name, name.strip())
        resolved[found] = None
    return tuple(resolved)


def resolve_rules(requested: Iterable[str], known: Iterable[str]) -> tuple[str, ...]:
    """The ``requested`` ids spelled as the ``known`` ones are, each once; raises :class:`UnknownRule`."""
    known = tuple(known)
    return resolve_names(requested, known, lambda rule, word: UnknownRule(rule, closest(word.upper(), known)))


def closest(word: str, known: Iterable[str]) -> list[str]:
    """The (at most three) ``known`` names closest to ``word``, closest first: the hint of a usage error."""
    return difflib.get_close_matches(word, list(known), n=3, cutoff=0.6)


def matches(scenario: Mapping[str, Any], patterns: Sequence[str] = (), rules: Sequence[str] = ()) -> bool:
    """True when ``scenario`` matches one of ``patterns`` (or there is none) and exercises one of ``rules``
    (or there is none); ``rules`` already resolved (:func:`resolve_rules`)."""
    if patterns:
        scenario_id = str(scenario["id"]).casefold()
        if not any(pattern.casefold() in scenario_id for pattern in patterns):
            return False
    return not rules or any(str(rule) in rules for rule in scenario.get("rules", ()))


def select(scenarios: Iterable[_S], patterns: Sequence[str] = (), rules: Sequence[str] = ()) -> list[_S]:
    """The ``scenarios`` that :func:`matches` takes, in order."""
    return [scenario for scenario in scenarios if matches(scenario, patterns, rules)]
