"""The kit's own baselines name the kind of each known failure, and a deviation quotes the original's own words.

Under the policy of ``docs/edge-cases.md`` section 11, a known failure of the original is either a
*deviation*, where it contradicts a written intent of its own (its design note, its docs, a comment or a type),
quoted in the entry, or a *host limit* of its engine. The quotes are checked against the original's source when
``TOOLCANON_ORIGINAL_REPO`` names a git repository of it (``toninfo/deepseek-harness``, bare or not) that
holds :data:`ORIGINAL_COMMIT`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path, PurePosixPath

import pytest

from toolcanon_conformance.baseline import KINDS, Baseline, Intent, KnownFailure

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
try:
    import releases
finally:
    sys.path.remove(str(ROOT / "tools"))

BASELINES = sorted((ROOT / "implementations").glob("*/baseline.json")) + sorted(
    (ROOT / "implementations").glob("*/releases/*/baseline.json")
)
RENDERER_BASELINES = sorted((ROOT / "implementations").glob("*/renderer-baseline.json"))

ORIGINAL_COMMIT = "611615650f1bd789dc83cedc428acc17934614d3"
"""The commit of the original's source the contract's digest describes."""

DESIGN_NOTE = ".agents/notes/implemented/architecture/2026-07-20-canonical-tool-output-contract.md"
"""Where the original's repository keeps the design note, which an intent names as ``"design note"``."""

UNCLASSIFIED: dict[str, set[str]] = {}
"""Entries that are neither a deviation nor a host limit under the policy and stay as they are until their
scenario is settled: named here, so that no other entry goes without a kind and this list cannot go stale
(none now: what neither the note nor the original decides is marked ``optional`` in its scenario instead)."""

# Comment markers that begin a line (``//``, ``/**``, `` * ``, ``#``) and a closing ``*/``: a quote spans lines.
_LINE_MARKERS = re.compile(r"^\s*(?://+|/\*+|\*+/?|#+)?\s?|\s*\*/\s*$", re.MULTILINE)


def entries_of(file: Path) -> list[KnownFailure]:
    return list(Baseline.load(file).entries.values())


def flattened(text: str) -> str:
    """``text`` as one line: comment markers at line starts dropped, each run of white space one space."""
    return " ".join(_LINE_MARKERS.sub(" ", text).split())


def quoted_in(intent: Intent, source_text: str) -> bool:
    """Whether the intent's quote is in the source, verbatim but for line breaks and comment markers."""
    return flattened(intent.quote) in flattened(source_text)


def original_source(path: str) -> str:
    """The text of ``path`` in the original's repository at :data:`ORIGINAL_COMMIT` (the test skips without it)."""
    repo = os.environ.get("TOOLCANON_ORIGINAL_REPO", "")
    missing = "missing capability: the original's source mirror is not on this machine"
    if not repo or not Path(repo).is_dir():
        pytest.skip(f"{missing} (TOOLCANON_ORIGINAL_REPO names no git repository of toninfo/deepseek-harness)")
    if not _holds_commit(repo):
        pytest.skip(f"{missing} ({repo} does not hold commit {ORIGINAL_COMMIT[:10]})")
    text = _file_at_commit(repo, DESIGN_NOTE if path == "design note" else path)
    assert text is not None, f"{path} is no file of the original's source at {ORIGINAL_COMMIT[:10]}"
    return text


@cache
def _holds_commit(repo: str) -> bool:
    held = subprocess.run(
        ["git", "-C", repo, "cat-file", "-e", f"{ORIGINAL_COMMIT}^{{commit}}"], capture_output=True, check=False
    )
    return held.returncode == 0


@cache
def _file_at_commit(repo: str, path: str) -> str | None:
    """``path`` at :data:`ORIGINAL_COMMIT`, read once for all the deviations quoting it; ``None`` when absent."""
    shown = subprocess.run(["git", "-C", repo, "show", f"{ORIGINAL_COMMIT}:{path}"], capture_output=True, check=False)
    return shown.stdout.decode("utf-8") if shown.returncode == 0 else None


def deviations() -> list[tuple[str, KnownFailure]]:
    return [(file.parent.name, entry) for file in BASELINES for entry in entries_of(file) if entry.kind == "deviation"]


def test_there_are_baselines_and_deviations_to_check() -> None:
    assert BASELINES and deviations()


@pytest.mark.parametrize("file", BASELINES, ids=lambda file: file.parent.name)
def test_every_entry_names_its_kind(file: Path) -> None:
    unclassified = UNCLASSIFIED.get(file.parent.name, set())
    listed = {entry.scenario: entry for entry in entries_of(file)}
    assert unclassified <= set(listed), f"{sorted(unclassified - set(listed))} are no longer in {file.name}"
    for entry in listed.values():
        if entry.scenario in unclassified:
            assert entry.kind is None, f"{entry.scenario} has its kind now: take it out of UNCLASSIFIED"
            continue
        assert entry.kind in KINDS, f"{entry.scenario}: an entry of the kit's baseline names its kind, one of {KINDS}"
        if entry.kind == "predates":
            assert entry.change is not None and entry.change.quote.strip(), f"{entry.scenario} quotes no change"
        if entry.kind == "host-limit":
            assert re.search(r"\b(Node|V8)\b", entry.reason), f"{entry.scenario}: a host limit names the engine"
            measured = re.search(r"\b(past|beyond|up to|over) (about )?\d", entry.reason)
            assert measured, f"{entry.scenario}: a host limit names the limit it measured"


@pytest.mark.parametrize(("implementation", "entry"), deviations(), ids=lambda value: getattr(value, "scenario", value))
def test_a_deviation_quotes_a_file_of_the_original(implementation: str, entry: KnownFailure) -> None:
    intent = entry.intent
    assert intent is not None and intent.quote.strip(), f"{implementation}: {entry.scenario} quotes no intent"
    if intent.source != "design note":
        where = PurePosixPath(intent.source)
        assert not where.is_absolute() and ".." not in where.parts, f"{intent.source} is not a path in the repository"
        assert where.suffix, f"{entry.scenario}: {intent.source} names no file"


@pytest.mark.parametrize(("implementation", "entry"), deviations(), ids=lambda value: getattr(value, "scenario", value))
def test_a_deviation_quotes_words_that_are_in_the_original(implementation: str, entry: KnownFailure) -> None:
    assert entry.intent is not None
    text = original_source(entry.intent.source)
    assert quoted_in(entry.intent, text), f"{entry.scenario}: the quote is not in {entry.intent.source}"
    words = entry.intent.quote.split()
    altered = Intent(entry.intent.source, " ".join([*words[:-1], "never", words[-1]]))
    assert not quoted_in(altered, text), "the check would accept words the source does not hold"


PUBLISHED = Path(__file__).resolve().parents[2] / "implementations" / "typescript-dsh-tools" / "node_modules"
PUBLISHED /= "@deepseek-ai"
"""The original's packages as the kit judges them (``npm ci`` there installs them): their READMEs and code keep
the comments and docs an intent quotes."""


@pytest.fixture(scope="module")
def published_text() -> str:
    """Every README, script and type file of the original's installed packages, flattened (the test skips
    without them): read once for the module, not once per deviation."""
    if not PUBLISHED.is_dir():
        pytest.skip(f"missing capability: the original's packages are not installed ({PUBLISHED} is absent)")
    files = sorted(path for pattern in ("*.md", "*.js", "*.d.ts") for path in PUBLISHED.rglob(pattern))
    return "\n".join(flattened(path.read_text("utf-8", errors="replace")) for path in files)


@pytest.mark.parametrize(("implementation", "entry"), deviations(), ids=lambda value: getattr(value, "scenario", value))
def test_a_deviation_quotes_words_the_judged_release_holds(
    implementation: str, entry: KnownFailure, published_text: str
) -> None:
    """The quote stands in the published packages the kit runs, so the intent is that release's, not only the
    repository's."""
    assert entry.intent is not None
    quote = flattened(entry.intent.quote)
    assert quote in published_text, f"{entry.scenario}: the quote is in no file of the judged release"
    words = entry.intent.quote.split()
    assert flattened(" ".join([*words[:-1], "never", words[-1]])) not in published_text


def predating() -> list[tuple[Path, KnownFailure]]:
    return [(file, entry) for file in BASELINES for entry in entries_of(file) if entry.kind == "predates"]


def test_there_are_releases_that_predate_a_rule() -> None:
    assert predating()


def _installed(folder: Path, source: str) -> str:
    """``source`` of the original's registry package as ``folder``'s ``npm ci`` installs it (skips without it)."""
    file = folder / "node_modules" / "@deepseek-ai" / "dsh-tools" / source
    if not file.is_file():
        pytest.skip(f"missing capability: the original's packages are not installed in {folder} ({file} is absent)")
    return flattened(file.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("file", "entry"), predating(), ids=lambda value: getattr(value, "scenario", None))
def test_a_release_that_predates_a_change_lacks_the_lines_a_later_release_brings(
    file: Path, entry: KnownFailure
) -> None:
    """The quoted lines stand in the release that brings them and not in the release whose entry quotes them."""
    assert entry.change is not None
    later = _installed(releases.release_folder(entry.change.release), entry.change.source)
    own = _installed(file.parent, entry.change.source)
    quote = flattened(entry.change.quote)
    assert quote in later, f"{entry.scenario}: the quote is not in {entry.change.release}'s {entry.change.source}"
    assert quote not in own, f"{entry.scenario}: {file.parent.name} holds the change it is said to predate"
    assert releases.RELEASES.index(file.parent.name) < releases.RELEASES.index(entry.change.release)


def test_a_quote_may_span_comment_lines_but_not_change_a_word() -> None:
    source = "      // The run-scoped abort: follows the\n      // outer signal in.\n/**\n * A type\n * comment. */\n"
    assert quoted_in(Intent("a.ts", "The run-scoped abort: follows the outer signal in."), source)
    assert quoted_in(Intent("a.ts", "A type comment."), source)
    assert not quoted_in(Intent("a.ts", "The run-scoped abort follows the outer signal in."), source)
    assert not quoted_in(Intent("a.ts", "follows the inner signal"), source)


@pytest.mark.parametrize("file", RENDERER_BASELINES, ids=lambda file: file.parent.name)
def test_the_renderer_baseline_lists_nothing_it_could_not_classify(file: Path) -> None:
    listed = json.loads(file.read_text(encoding="utf-8"))["deviations"]
    assert not listed, (
        f"{file.name} lists {sorted(listed)}, but its entries (an id and its reason) name no kind and quote no "
        "intent, as every known failure in the kit's baselines must"
    )
