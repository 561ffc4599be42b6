"""The contract's rules: their stable ids, MUST sentences and digest citations, as the kit uses them.

``docs/contract.md`` is the normative text; ``data/rules.json`` is its machine-readable copy shipped in the
package (a test keeps the two identical), used to check that every rule is exercised and to group reports.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Final

__all__ = ["Rule", "load_rules", "parse_contract", "rules_json"]

_RULE_LINE: Final = re.compile(r"^- \*\*(?P<id>R-[A-Z]+-[0-9]+)\*\* — (?P<text>.+) \*\(digest (?P<digest>[^)]+)\)\*$")
_SECTION: Final = re.compile(r"^## (?P<prefix>R-[A-Z]+) — (?P<title>.+)$")


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: its id (``R-<AREA>-<n>``), its section title, its MUST sentence and the digest items it cites."""

    id: str
    section: str
    text: str
    digest: str


def parse_contract(markdown: str) -> list[Rule]:
    """The rules of ``docs/contract.md``, in document order.

    Raises ``ValueError`` for a rule outside its section, a duplicate id, or a rule line that does not parse.
    """
    rules: list[Rule] = []
    seen: set[str] = set()
    prefix = section = ""
    for number, line in enumerate(markdown.splitlines(), start=1):
        heading = _SECTION.match(line)
        if heading:
            prefix, section = heading.group("prefix"), heading.group("title")
            continue
        if not line.startswith("- **R-"):
            continue
        match = _RULE_LINE.match(line)
        if match is None:
            raise ValueError(f"line {number}: a rule line must read '- **R-X-n** — sentence *(digest n.n)*'")
        rule_id = match.group("id")
        if not rule_id.startswith(prefix + "-"):
            raise ValueError(f"line {number}: {rule_id} is not in its section ({prefix})")
        if rule_id in seen:
            raise ValueError(f"line {number}: {rule_id} is defined twice")
        seen.add(rule_id)
        rules.append(Rule(rule_id, section, match.group("text"), match.group("digest")))
    return rules


def rules_json(rules: list[Rule]) -> str:
    """The text of ``data/rules.json`` for these rules (one object per rule, in order)."""
    entries = [{"id": r.id, "section": r.section, "text": r.text, "digest": r.digest} for r in rules]
    return json.dumps(entries, ensure_ascii=False, indent=1) + "\n"


@cache
def _load() -> tuple[Rule, ...]:
    text = resources.files("toolcanon_conformance").joinpath("data", "rules.json").read_text("utf-8")
    return tuple(Rule(**entry) for entry in json.loads(text))


def load_rules() -> list[Rule]:
    """Every rule of the contract, in document order (from the package's ``data/rules.json``)."""
    return list(_load())
