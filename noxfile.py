"""Every workflow of the project: tests, conformance, lint, typecheck, bench, docs."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests", "lint", "typecheck"]

PACKAGES = ["reference/toolcontract", "conformance/toolcontract_conformance"]


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
    session.install("-e", ".[test]", "mypy")
    session.run("mypy", "--strict", *PACKAGES)


@nox.session
def bench(session: nox.Session) -> None:
    """Print the benchmark table (medians and ratios measured in one run)."""
    session.install("-e", ".[bench]")
    session.run("python", "bench/run.py", *session.posargs)
