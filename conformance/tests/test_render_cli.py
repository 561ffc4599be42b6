"""``toolcanon render FAMILY VALUE.json [--args ARGS.json]``."""

from __future__ import annotations

import io
import json
from pathlib import Path

from toolcanon_conformance.render_cli import EXIT_INVALID, EXIT_RENDER_FAILED, render_command


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = render_command(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _file(tmp_path: Path, name: str, data: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_prints_native_text(tmp_path: Path) -> None:
    """The text block's text, then a newline."""
    value = _file(tmp_path, "v.json", {"matches": [{"path": "a.ts", "lineNumber": 1, "line": "hit"}]})
    assert _run("grep", value) == (0, "Found 1 match\n\na.ts\nLine 1: hit\n", "")


def test_args_config_and_non_text_blocks(tmp_path: Path) -> None:
    """``--args`` reaches the renderer, ``--config`` the family's options; image blocks print as JSON."""
    edit = _file(tmp_path, "e.json", {"path": "/a", "before": "", "after": ""})
    args = _file(tmp_path, "a.json", {"file_path": "a", "replace_all": True})
    assert "All occurrences" in _run("edit", edit, "--args", args)[1]
    glob = _file(tmp_path, "g.json", {"root": ".", "paths": ["a", "b", "c"]})
    config = _file(tmp_path, "c.json", {"max_results": 1})
    assert _run("glob", glob, "--config", config)[1].startswith("a\n\n(Showing 1 of 3 paths.")
    image = {"attachmentId": "i", "mediaType": "image/png", "bytes": 1, "width": 1, "height": 1}
    code, out, _ = _run("read_image", _file(tmp_path, "i.json", {"path": "/p", "image": image}))
    assert code == 0 and out.endswith(
        '{"type":"image","attachment":' + json.dumps(image, separators=(",", ":")) + "}\n"
    )


def test_unknown_family_lists_known_ones(tmp_path: Path) -> None:
    """Exit 2 and the list of families."""
    code, _, err = _run("nope", _file(tmp_path, "v.json", {}))
    assert code == EXIT_INVALID and "unknown family 'nope'" in err and "terminal_read" in err


def test_value_file_not_json(tmp_path: Path) -> None:
    """Exit 2 for a file that is not JSON, or missing."""
    path = tmp_path / "v.json"
    path.write_text("{nope", encoding="utf-8")
    code, _, err = _run("grep", str(path))
    assert code == EXIT_INVALID and "is not JSON" in err
    assert _run("grep", str(tmp_path / "missing.json"))[0] == EXIT_INVALID


def test_schema_violations_are_listed(tmp_path: Path) -> None:
    """Exit 2 with the contract's violation messages."""
    code, _, err = _run("read", _file(tmp_path, "v.json", {"path": 1}))
    assert code == EXIT_INVALID
    assert '  - missing required property "value.offset"' in err and '  - "value.path" must be a string' in err


def test_render_failure(tmp_path: Path) -> None:
    """A renderer that throws exits 1 with the ``INVALID_TOOL_OUTPUT`` message."""
    value = _file(tmp_path, "v.json", {"path": "/f", "offset": 1, "lines": [], "totalLines": 0})
    code, _, err = _run("read", value, "--args", _file(tmp_path, "a.json", {"file_path": " "}))
    assert code == EXIT_RENDER_FAILED and 'tool "read" returned invalid output: output.render failed' in err


def test_bad_usage() -> None:
    """Missing arguments exit 2 (argparse's usage error)."""
    assert _run()[0] == EXIT_INVALID


def test_a_config_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    """A cap the family refuses (not a positive integer) is exit 2 and one line, never a traceback."""
    glob = _file(tmp_path, "g.json", {"root": ".", "paths": ["a"]})
    code, out, err = _run("glob", glob, "--config", _file(tmp_path, "c.json", {"max_results": 0}))
    assert (code, out) == (EXIT_INVALID, "")
    assert err.startswith("toolcanon render: bad config for glob: ") and err.count("\n") == 1
