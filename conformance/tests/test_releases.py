"""Every published release of the original is judged in a folder of its own, through the same adapter.

``tools/releases.py`` derives each release folder's ``package.json`` from the judged folder's: the registry and
its peers at the release, everything else as the judged lock holds it. The lock of each folder then differs from
the judged lock in those packages alone, and ``adapter.mjs --release VERSION`` runs that folder's packages and no
other's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
try:
    import original_node
    import releases
finally:
    sys.path.remove(str(ROOT / "tools"))

ADAPTER = releases.JUDGED / "adapter.mjs"


def _lock(folder: Path) -> dict[str, Any]:
    packages: dict[str, Any] = json.loads((folder / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    return packages


def test_the_release_folders_hold_what_tools_releases_derives() -> None:
    assert releases.main(["--check"]) == 0


def test_the_releases_are_every_one_the_registry_holds_oldest_first() -> None:
    assert releases.RELEASES == ("0.0.1-rc.1", "0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8")
    assert releases.RELEASES[-1] == releases.JUDGED_RELEASE
    manifest = json.loads((releases.JUDGED / "package.json").read_text(encoding="utf-8"))
    assert manifest["dependencies"][releases.REGISTRY] == releases.JUDGED_RELEASE


@pytest.mark.parametrize("release", releases.OTHER_RELEASES)
def test_a_release_lock_differs_from_the_judged_lock_in_the_varied_packages_alone(release: str) -> None:
    judged, own = _lock(releases.JUDGED), _lock(releases.release_folder(release))
    assert set(own) - {""} == set(judged) - {""}
    changed = {
        key.removeprefix("node_modules/"): own[key]["version"]
        for key in judged
        if key and own[key].get("version") != judged[key].get("version")
    }
    assert changed == releases.pins(release)
    manifest = json.loads((releases.release_folder(release) / "package.json").read_text(encoding="utf-8"))
    assert own[""]["dependencies"] == manifest["dependencies"]


def test_a_release_whose_peers_cannot_be_composed_varies_the_registry_alone() -> None:
    assert releases.pins("0.0.1-rc.1") == {releases.REGISTRY: "0.0.1-rc.1"}
    assert set(releases.pins("0.1.0-rc.7")) == {releases.REGISTRY, *releases.PEERS}


def _node(folder: Path) -> str:
    try:
        return str(original_node.original_node(folder))
    except original_node.NodeUnavailable as error:
        pytest.skip(f"missing capability: {error}")


def _adapter(*arguments: str, folder: Path = releases.JUDGED) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_node(folder), str(ADAPTER), *arguments],
        input='{"cmd": "start", "version": 1}\n{"cmd": "stop"}\n',
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("release", releases.RELEASES)
def test_the_adapter_runs_the_release_it_is_given(release: str) -> None:
    folder = releases.release_folder(release)
    if not (folder / "node_modules" / "@deepseek-ai" / "dsh-tools").is_dir():
        pytest.skip(f"missing capability: the original's packages are not installed in {folder} (npm ci there)")
    chosen = [] if release == releases.JUDGED_RELEASE else ["--release", release]
    done = _adapter(*chosen, folder=folder)
    assert done.returncode == 0, done.stderr
    started = json.loads(done.stdout.splitlines()[0])
    assert started["implementation"]["version"] == release


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--release"], "--release takes a version"),
        (["--release", "../x"], "--release takes a version"),
        (["--release", "9.9.9"], "--release 9.9.9: no such release folder"),
    ],
)
def test_a_release_the_adapter_cannot_run_is_one_line_and_exit_status_2(arguments: list[str], said: str) -> None:
    done = _adapter(*arguments)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(said), done.stderr
