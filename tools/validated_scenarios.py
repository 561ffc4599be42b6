"""Write (or ``--check``) the kit's list of the bundled scenario texts that pass every check of the format.

``toolcanon check`` and the plugin load the whole suite, and checking each file against the JSON Schema is most
of that load; a text on this list, made with the same schema, is not checked again. The list holds only digests of
texts that passed every check when it was written, so a scenario that changes, or one of a user's own, is checked in
full. ``conformance/tests/test_scenarios.py`` fails while the list is not current.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from toolcanon_conformance.locations import scenarios_dir
from toolcanon_conformance.scenario import VALIDATED_SCENARIOS, scenario_from_data, schema_digest, text_digest

LIST = Path(__file__).resolve().parents[1] / "conformance" / "toolcanon_conformance" / "data" / VALIDATED_SCENARIOS


def current_list() -> str:
    """The list's text for the scenarios as they are: each file checked in full first (a ScenarioError if not)."""
    texts = []
    for path in sorted(scenarios_dir().glob("*.json")):
        text = path.read_text("utf-8")
        scenario_from_data(json.loads(text), str(path), path)
        texts.append(text_digest(text).hex())
    return json.dumps({"schema": schema_digest(), "texts": sorted(texts)}, indent=1) + "\n"


def main(arguments: list[str] | None = None) -> int:
    """Write the list, or with ``--check`` say whether it is current (exit 1 when not)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the list is not current")
    options = parser.parse_args(arguments)
    wanted = current_list()
    if options.check:
        if not LIST.is_file() or LIST.read_text("utf-8") != wanted:
            print(f"{LIST} is not current: run python tools/validated_scenarios.py", file=sys.stderr)
            return 1
        return 0
    LIST.write_text(wanted, encoding="utf-8")
    print(f"wrote {LIST}: {len(json.loads(wanted)['texts'])} scenario texts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
