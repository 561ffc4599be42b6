"""The published releases of the original's tool registry, and the manifest of each release's folder.

``implementations/typescript-dsh-tools/`` judges ``@deepseek-ai/dsh-tools`` 0.1.0-rc.8 in a deployment of the
original's packages (its ``package.json``). Every other release the npm registry holds is judged in a folder of its
own, ``implementations/typescript-dsh-tools/releases/<version>/``, by the same adapter (``adapter.mjs --release
<version>``), with its own lock and strict baseline. A release's folder holds the judged deployment with one change:
``@deepseek-ai/dsh-tools`` at that release, and each of the peers that release declares at the release of the same
train (the floor of the range it declares: ``^0.1.0-rc.7`` is ``0.1.0-rc.7``), so that what differs between two
releases comes from the registry and the peers it was published with, never from the rest of the deployment.

Every other package stays at the version the judged lock holds: the judged folder's dependencies, and the packages
its lock holds only as peers of those (``"peer": true``), pinned directly, since a release's folder installs with
``legacy-peer-deps`` (its ``.npmrc``): an older release's peers declare ranges of their own era (dsh-llm 0.0.1-rc.1
asks for dsh-attachment ``^0.0.1-rc.1``) that the deployment's packages do not satisfy, and npm would refuse the
tree (``ERESOLVE``) that the judged folder's ``overrides`` hold together for its own two older tool packages. The
lock starts as a copy of the judged lock (``--lock``), so that npm changes only the varied packages in it.

The peers are what ``npm view @deepseek-ai/dsh-tools@<version> peerDependencies`` answers; where the peers of a
release's era cannot be installed beside the deployment, the judged folder's pins stay and :data:`PEERS_KEPT` says
why.

    python tools/releases.py          # write each release folder's package.json and .npmrc
    python tools/releases.py --lock   # and its package-lock.json: the judged lock, then npm install (network)
    python tools/releases.py --check  # exit 1 when one differs from what this module derives
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]
JUDGED: Final = ROOT / "implementations" / "typescript-dsh-tools"
REGISTRY: Final = "@deepseek-ai/dsh-tools"

#: The judged release: the folder's own ``package.json`` pins it.
JUDGED_RELEASE: Final = "0.1.0-rc.8"

#: The peer dependencies of ``@deepseek-ai/dsh-tools``, as the registry lists them for every release (``cordis``,
#: ``^4.0.1`` in the 0.1.0 releases and ``^4.0.1-rc.1`` in 0.0.1-rc.1, is not varied: the judged 4.0.4 satisfies both).
PEERS: Final = (
    "@deepseek-ai/dsh-agent",
    "@deepseek-ai/dsh-code-runtime",
    "@deepseek-ai/dsh-invariants",
    "@deepseek-ai/dsh-llm",
    "@deepseek-ai/dsh-scope",
    "@deepseek-ai/dsh-session",
    "@deepseek-ai/dsh-system-prompt",
    "@deepseek-ai/dsh-user-approval",
)

#: Every release the registry holds (``npm view @deepseek-ai/dsh-tools versions``), oldest version first: the run
#: order of ``nox -s upstream``, so that its trend reads from the oldest release to the newest. 0.0.1-rc.1 was
#: published last (2026-09-23) but is the oldest code (the original's ``release(dsh): 0.0.1-rc.1``, 2026-08-11).
RELEASES: Final = ("0.0.1-rc.1", "0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8")

#: The releases judged beside the judged one, each in a folder of its own.
OTHER_RELEASES: Final = tuple(release for release in RELEASES if release != JUDGED_RELEASE)

#: Releases whose peers of their own era cannot be installed beside the deployment: their folder varies
#: ``@deepseek-ai/dsh-tools`` alone, for this reason.
PEERS_KEPT: Final[dict[str, str]] = {
    "0.0.1-rc.1": (
        "its peers' range ^0.0.1-rc.1 cannot be composed with any deployment the adapter drives: dsh-agent was "
        "never published in it (its first release is 0.1.0-rc.6), and dsh-session 0.0.1-rc.1 lacks the "
        "KNOWN_SESSION_EVENT_TYPES export that every published dsh-session-persistence imports (SyntaxError at "
        "load); so 0.0.1-rc.1 runs with the deployment's peers, and what differs is its own lib/index.js"
    ),
}


def release_folder(release: str) -> Path:
    """Where a release is judged: the judged folder itself, or its ``releases/<release>/``."""
    return JUDGED if release == JUDGED_RELEASE else JUDGED / "releases" / release


def pins(release: str) -> dict[str, str]:
    """The packages a release's folder pins differently from the judged one, and at which version."""
    varied = {REGISTRY: release}
    if release not in PEERS_KEPT:
        varied |= dict.fromkeys(PEERS, release)
    return varied


#: What a release's folder tells npm: no peer range refuses the tree (the module's docstring says why).
NPMRC: Final = "legacy-peer-deps=true\n"


def manifest(release: str, judged: dict[str, Any], lock: dict[str, Any]) -> dict[str, Any]:
    """The ``package.json`` of a release's folder, from the judged folder's manifest ``judged`` and its ``lock``."""
    varied = pins(release)
    peers_only = {
        key.removeprefix("node_modules/"): entry["version"]
        for key, entry in lock["packages"].items()
        if entry.get("peer") and key.count("node_modules/") == 1
    }
    pinned = {**judged["dependencies"], **peers_only}
    dependencies = {name: varied.get(name, pinned[name]) for name in sorted(pinned)}
    return {
        "name": f"{judged['name']}-{release}",
        "private": True,
        "description": f"{REGISTRY} {release} in the deployment of the judged release ({JUDGED_RELEASE}): "
        "tools/releases.py writes this file.",
        "license": judged["license"],
        "type": "module",
        "engines": judged["engines"],
        "dependencies": dependencies,
        "optionalDependencies": judged["optionalDependencies"],
    }


def manifest_text(release: str) -> str:
    """:func:`manifest` as the file holds it."""
    judged = json.loads((JUDGED / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((JUDGED / "package-lock.json").read_text(encoding="utf-8"))
    return json.dumps(manifest(release, judged, lock), indent=2) + "\n"


def write_lock(release: str) -> None:
    """The release folder's lock: the judged lock, re-resolved by npm for the varied packages alone."""
    folder = release_folder(release)
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("releases.py: npm is not installed")
    shutil.copyfile(JUDGED / "package-lock.json", folder / "package-lock.json")
    subprocess.run([npm, "install", "--package-lock-only", "--no-audit", "--no-fund"], cwd=folder, check=True)


def main(argv: list[str]) -> int:
    """Write (or with ``--check`` compare) each release folder's ``package.json`` and ``.npmrc``."""
    check, lock = argv == ["--check"], argv == ["--lock"]
    if argv and not (check or lock):
        print("usage: python tools/releases.py [--check | --lock]", file=sys.stderr)
        return 2
    stale: list[str] = []
    for release in OTHER_RELEASES:
        folder = release_folder(release)
        for file, text in ((folder / "package.json", manifest_text(release)), (folder / ".npmrc", NPMRC)):
            if check:
                if not file.is_file() or file.read_text(encoding="utf-8") != text:
                    stale.append(str(file.relative_to(ROOT)))
                continue
            folder.mkdir(parents=True, exist_ok=True)
            file.write_text(text, encoding="utf-8")
        if lock:
            write_lock(release)
    if stale:
        print(f"releases.py: not what tools/releases.py derives: {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
