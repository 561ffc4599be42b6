"""The original TypeScript registry measured live: ``bench/upstream.mjs`` run by Node on the benchmark's inputs."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

from axes import Figures
from data import SHA256, generate, schema

HERE: Final = Path(__file__).parent
SCRIPT: Final = HERE / "upstream.mjs"
INSTALLED: Final = HERE.parent / "implementations" / "typescript-dsh-tools" / "node_modules" / "@deepseek-ai"

sys.path.insert(0, str(HERE.parent / "tools"))
from original_node import NodeUnavailable, original_node  # noqa: E402  (the one place that picks the Node)


def unavailable() -> str | None:
    """Why the original cannot be measured here (no Node in its engine range, packages not installed), or
    ``None``."""
    missing = [name for name in ("dsh-tools", "cordis", "dsh-system-prompt") if not (INSTALLED / name).is_dir()]
    if missing:
        return f"implementations/typescript-dsh-tools/node_modules lacks {', '.join(missing)} (run npm ci there)"
    try:
        original_node()
    except NodeUnavailable as error:
        return str(error)
    return None


GROUPS: Final = ("trivial", "value", "arguments", "items", "wide")
"""The groups of figures ``bench/upstream.mjs`` measures, each on its own when asked."""


def measure(runs: int, calls: int, groups: tuple[str, ...] = GROUPS) -> tuple[str, Figures]:
    """Node's version and the original's figures of ``groups``; the benchmark value is handed over as its exact
    bytes."""
    value_text = json.dumps(generate(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with tempfile.TemporaryDirectory(prefix="toolcanon-bench-") as directory:
        value_path = Path(directory) / "value.json"
        value_path.write_bytes(value_text)
        (Path(directory) / "schema.json").write_text(json.dumps(schema()), encoding="utf-8")
        # stderr passes through: the script reports each figure as it is measured
        completed = subprocess.run(
            [str(original_node()), str(SCRIPT), str(value_path), SHA256, str(runs), str(calls), ",".join(groups)],
            stdout=subprocess.PIPE,
            text=True,
            check=True,
        )
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    return report["node"], {name: float(seconds) for name, seconds in report["figures"].items()}
