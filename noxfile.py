"""Every workflow of the project: tests, conformance, lint, typecheck, bench, docs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["conformance", "tests", "lint", "typecheck"]

PACKAGES = ["reference/toolcontract", "conformance/toolcontract_conformance"]

#: The original TypeScript implementation under test: its folder, adapter command and oldest supported Node.
UPSTREAM = Path("implementations/typescript-dsh-tools")
UPSTREAM_ADAPTER = f"node {UPSTREAM / 'adapter.mjs'}"
NODE_MAJOR = 20


@nox.session
def tests(session: nox.Session) -> None:
    """Run the whole test suite (reference and kit)."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """Register a tool, execute it, and print its value, content and a failure."""
    session.install("-e", ".")
    session.run("python", "-m", "toolcontract.demo", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style with ruff."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Check both packages with mypy --strict."""
    session.install("-e", ".[test]", "mypy", "types-jsonschema")
    session.run("mypy", "--strict", *PACKAGES)


@nox.session
def bench(session: nox.Session) -> None:
    """Print the benchmark table (medians and ratios measured in one run)."""
    session.install("-e", ".[bench]")
    session.run("python", "bench/run.py", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    """Check the bundled reference in-process and as a subprocess, print both tables, and compare the runs."""
    import json

    session.install("-e", ".")
    reports = Path(session.create_tmp())
    in_process, subprocess = reports / "in-process.json", reports / "subprocess.json"
    session.run("toolcontract", "check", "--report", str(in_process), *session.posargs)
    adapter = "python -m toolcontract_conformance.adapters.reference"
    session.run(
        "toolcontract",
        "check",
        "--impl-cmd",
        adapter,
        "--validate-protocol",
        "--report",
        str(subprocess),
        *session.posargs,
    )
    outcomes = [
        {s["id"]: s["status"] for s in json.loads(report.read_text())["implementations"][0]["scenarios"]}
        for report in (in_process, subprocess)
    ]
    if outcomes[0] != outcomes[1]:
        differing = sorted(
            key for key in outcomes[0].keys() | outcomes[1].keys() if outcomes[0].get(key) != outcomes[1].get(key)
        )
        session.error(f"in-process and subprocess runs differ on {len(differing)} scenario(s): {', '.join(differing)}")
    session.log(f"in-process and subprocess runs agree on all {len(outcomes[0])} scenarios")


@nox.session
def docs(session: nox.Session) -> None:
    """Check the docs against the code: every rule exercised, every cited test and path present."""
    session.install("-e", ".")
    session.run("python", "tools/check_docs.py")


def _node(session: nox.Session) -> str:
    """The path of a Node >= NODE_MAJOR on PATH; a one-line error naming what to install otherwise."""
    node = shutil.which("node")
    if node is None:
        session.error(
            f"node is not installed: install Node.js {NODE_MAJOR} or newer (Debian: apt-get install nodejs npm)"
        )
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    major = version.lstrip("v").split(".")[0]
    if not major.isdigit() or int(major) < NODE_MAJOR:
        session.error(f"node {version or '(unknown version)'} is too old: install Node.js {NODE_MAJOR} or newer")
    return node


def _node_modules(session: nox.Session) -> str:
    """Node (as :func:`_node`), with the upstream folder's packages installed as its lock file pins them."""
    node = _node(session)
    lock, installed = UPSTREAM / "package-lock.json", UPSTREAM / "node_modules" / ".package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        session.log(f"{UPSTREAM}/node_modules is current")
        return node
    if shutil.which("npm") is None:
        session.error("npm is not installed: install npm (Debian: apt-get install npm)")
    session.run("npm", "ci", "--no-audit", "--no-fund", "--prefix", str(UPSTREAM), external=True)
    return node


@nox.session
def upstream(session: nox.Session) -> None:
    """Check the original TypeScript implementation against its strict baseline, beside the reference.

    One run judges both (the baseline pairs with the original, the implementation before it) and writes their
    side-by-side report; ``-- ARGS`` are passed to ``toolcontract check`` (``-k``, ``--rule``, …).
    """
    _node_modules(session)
    session.install("-e", ".")
    report = Path(session.create_tmp()) / "upstream.html"
    session.run(
        "toolcontract",
        "check",
        "--impl",
        "toolcontract_conformance.adapters.reference:implementation",
        "--impl-cmd",
        UPSTREAM_ADAPTER,
        "--baseline",
        str(UPSTREAM / "baseline.json"),
        "--validate-protocol",
        "--report",
        str(report),
        *session.posargs,
    )
    session.log(f"side-by-side report: {report}")


@nox.session(name="upstream-renderers", venv_backend="none")
def upstream_renderers(session: nox.Session) -> None:
    """Render every renderer fixture with the original's own first-party renderers and compare with the goldens."""
    node = _node_modules(session)
    session.run(node, str(UPSTREAM / "render-fixtures.mjs"), *session.posargs, external=True)


@nox.session
def fuzz(session: nox.Session) -> None:
    """Fuzz the reference's and the kit's input readers: ``-- [--seconds N] [NAME ...]`` (300 s per target)."""
    session.install("-e", ".", "hypothesis")
    # atheris is built from source where no wheel fits; without it the same targets run on hypothesis
    session.run("python", "-m", "pip", "install", "--quiet", "atheris", success_codes=[0, 1])
    out = Path(session.create_tmp()) / "fuzz"
    session.run("python", "-m", "fuzz", "--out", str(out), *session.posargs)
