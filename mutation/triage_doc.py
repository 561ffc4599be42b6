"""The triage as ``docs/mutation.md`` shows it: a section made from ``mutation/triage.json``, never by hand.

``python -m mutation.triage_doc`` rewrites the section (between its two marker lines) after the triage file
changed; a test checks that the two agree.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from mutation.triage import BLIND_SPOTS, TRIAGE_FILE, VERDICTS, Triage, load_triage

__all__ = ["BEGIN", "DOC", "END", "main", "render", "replace_section"]

DOC: Final = Path(__file__).resolve().parents[1] / "docs" / "mutation.md"
BEGIN: Final = "<!-- triage: made by python -m mutation.triage_doc from mutation/triage.json -->"
END: Final = "<!-- end of triage -->"

_HEADINGS: Final = {
    "equivalent": "Equivalent (left out of the score)",
    "needs a scenario": "Needs a scenario",
    "unit test": "Unit test (a Python-API detail no scenario can see)",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(entries: Sequence[Triage]) -> list[str]:
    lines = ["| mutant | why |", "|---|---|"]
    lines += [f"| `{entry.name}` | {_cell(entry.why)} |" for entry in sorted(entries, key=lambda e: e.name)]
    return lines


def render(triage: Mapping[str, Triage]) -> str:
    """The section's text (without the marker lines)."""
    lines: list[str] = []
    for verdict in VERDICTS:
        entries = [entry for entry in triage.values() if entry.verdict == verdict]
        lines += ["", f"### {_HEADINGS[verdict]}: {len(entries)}", ""]
        if verdict != "needs a scenario":
            lines += _table(entries) if entries else ["(none)"]
            continue
        for spot in BLIND_SPOTS:
            group = [entry for entry in entries if entry.blind_spot == spot]
            if group:
                lines += [f"#### {spot}: {len(group)}", "", *_table(group), ""]
        if not entries:
            lines += ["(none)"]
    return "\n".join(lines).rstrip("\n") + "\n\n"


def replace_section(text: str, section: str) -> str:
    """``text`` with what lies between the marker lines replaced by ``section``."""
    head, begin, rest = text.partition(BEGIN + "\n")
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"the document has no section between {BEGIN!r} and {END!r}")
    return head + begin + section + end + tail


def main(arguments: Sequence[str] | None = None) -> int:
    """Rewrite the triage section of ``docs/mutation.md``."""
    del arguments
    section = render(load_triage(TRIAGE_FILE))
    DOC.write_text(replace_section(DOC.read_text(encoding="utf-8"), section), encoding="utf-8")
    print(f"{DOC}: the triage section rewritten from {TRIAGE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
