"""The golden extension never lets ``--snapshot-update`` delete goldens it did not write."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolcanon_conformance.golden import GoldenNameError, golden_path

DEMO_TEST = textwrap.dedent(
    """
    import pytest
    from toolcanon_conformance.golden import GoldenFileExtension

    @pytest.mark.parametrize("case", ["a", "b"])
    def test_case(case, snapshot):
        golden = snapshot.use_extension(GoldenFileExtension)
        assert golden(name=f"renderers/demo/{case}.txt") == f"value {case}".encode()
    """
)


def _pytest(project: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """pytest in ``project`` with syrupy as its one plugin: the guard is the extension's, and the other installed
    plugins (hypothesis's first) would cost seconds of start-up per run."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "syrupy", *arguments],
        cwd=project,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    (tmp_path / "test_demo.py").write_text(DEMO_TEST, encoding="utf-8")
    return tmp_path


def test_update_of_one_node_keeps_siblings_and_foreign_goldens(project: Path) -> None:
    """Creating, then updating one node id and the whole file, never removes another golden."""
    goldens = project / "snapshots" / "renderers" / "demo"
    created = _pytest(project, "--snapshot-update")
    assert created.returncode == 0, created.stdout + created.stderr
    assert sorted(path.name for path in goldens.iterdir()) == ["a.txt", "b.txt"]
    (goldens / "foreign.txt").write_bytes(b"written by another test")
    (goldens / "b.txt").write_bytes(b"value b")

    one_node = _pytest(project, "test_demo.py::test_case[a]", "--snapshot-update")
    assert one_node.returncode == 0, one_node.stdout + one_node.stderr
    whole_file = _pytest(project, "--snapshot-update")
    assert whole_file.returncode == 0, whole_file.stdout + whole_file.stderr

    assert sorted(path.name for path in goldens.iterdir()) == ["a.txt", "b.txt", "foreign.txt"]
    assert (goldens / "a.txt").read_bytes() == b"value a"
    assert "deleted" not in (one_node.stdout + whole_file.stdout).lower()


def test_a_changed_golden_fails_without_update(project: Path) -> None:
    """Without ``--snapshot-update`` a differing golden fails and is left as it was."""
    assert _pytest(project, "--snapshot-update").returncode == 0
    golden = project / "snapshots" / "renderers" / "demo" / "a.txt"
    golden.write_bytes(b"value A")
    checked = _pytest(project)
    assert checked.returncode == 1
    assert golden.read_bytes() == b"value A"


@pytest.mark.parametrize("name", [None, "", "/abs.txt", "../escape.txt", "no-suffix", "a\\b.txt"])
def test_golden_names_stay_inside_the_directory(name: object, tmp_path: Path) -> None:
    """A golden is a relative path with a suffix under ``snapshots/``."""
    with pytest.raises(GoldenNameError):
        golden_path(tmp_path, name)


def test_golden_path_layout(tmp_path: Path) -> None:
    """``renderers/<family>/<case>.txt`` maps to that exact file."""
    assert golden_path(tmp_path, "renderers/grep/one.txt") == tmp_path / "renderers" / "grep" / "one.txt"
