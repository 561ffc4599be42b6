"""``glob`` and ``grep``: caps, sampling, grouping and the byte-capped card metadata (renderers.md §5-6)."""

from __future__ import annotations

from typing import Any

from toolcanon.jsonvalue import canonical_json
from toolcanon.renderers import output_for, render_native
from toolcanon.renderers._ecma import utf8_length
from toolcanon.renderers._meta_cap import SEARCH_META_MAX_BYTES
from toolcanon.renderers.glob import sample_across_top_level


def _meta(family: str, value: Any, **config: Any) -> Any:
    projector = output_for(family, **config).presentation_meta
    assert projector is not None
    return projector({}, value)


def test_glob_sampling_example() -> None:
    """§5 [T]: round-robin across top-level entries, shown in group order."""
    paths = ["vendor/a.ts", "vendor/b.ts", "vendor/c.ts", "src/d.ts", "guide/e.md", "top.txt"]
    assert sample_across_top_level(paths, 3, ".") == (["vendor/a.ts", "src/d.ts", "guide/e.md"], 3, 4)


def test_glob_sampling_root_slash() -> None:
    """§5: under root ``/`` every leading slash is dropped before taking the first segment."""
    page, shown, total = sample_across_top_level(["/a/1", "/a/2", "/b/3"], 2, "/")
    assert (page, shown, total) == (["/a/1", "/b/3"], 2, 2)


def test_glob_meta_over_cap() -> None:
    """§5 [T]: ``{shape: "paths", paths: <page>, truncated: true, total}``."""
    value = {"root": ".", "paths": ["a.ts", "b.ts", "c.ts"]}
    assert _meta("glob", value, max_results=2) == {
        "shape": "paths",
        "paths": ["a.ts", "b.ts"],
        "truncated": True,
        "total": 3,
    }
    assert _meta("glob", value)["truncated"] is False


def test_glob_meta_byte_cap() -> None:
    """§5: metadata over 65536 bytes of JSON drops trailing paths and says truncated."""
    paths = [f"{'d' * 200}/{index}" for index in range(1000)]
    meta = _meta("glob", {"root": ".", "paths": paths}, max_results=1000)
    assert meta["truncated"] is True
    assert utf8_length(canonical_json(meta)) <= SEARCH_META_MAX_BYTES
    longer = {**meta, "paths": paths[: len(meta["paths"]) + 1]}
    assert utf8_length(canonical_json(longer)) > SEARCH_META_MAX_BYTES


def test_glob_meta_keeps_one_path() -> None:
    """§5: the byte cap never drops the last path."""
    meta = _meta("glob", {"root": ".", "paths": ["p" * 70000, "q"]})
    assert meta["paths"] == ["p" * 70000]


def test_grep_meta_example() -> None:
    """§6 [T]: files with their retained, previewed matches; ``total`` is every match seen."""
    matches = [{"path": "a.ts", "lineNumber": n, "line": line} for n, line in ((1, "one"), (2, "two"), (3, "x"))]
    assert _meta("grep", {"matches": matches}, max_matches=2) == {
        "shape": "matches",
        "files": [{"path": "a.ts", "matches": [{"lineNumber": 1, "line": "one"}, {"lineNumber": 2, "line": "two"}]}],
        "truncated": True,
        "total": 3,
    }


def test_grep_meta_byte_cap_drops_file_groups() -> None:
    """§6: like glob, trailing file groups go first."""
    matches = [{"path": f"f{index}.ts", "lineNumber": 1, "line": "z" * 1900} for index in range(100)]
    meta = _meta("grep", {"matches": matches})
    assert meta["truncated"] is True and 1 <= len(meta["files"]) < 100
    assert utf8_length(canonical_json(meta)) <= SEARCH_META_MAX_BYTES


def test_grep_lone_surrogate_becomes_replacement() -> None:
    """§0.5.5 [D]: a line routed through the text retainer comes back well-formed even when not cut."""
    value = {"matches": [{"path": "a", "lineNumber": 1, "line": "x\ud800y"}]}
    assert render_native("grep", value)[0]["text"].endswith("Line 1: x\ufffdy")
