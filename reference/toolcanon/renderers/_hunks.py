"""Per-hunk old/new texts of a line diff, as the write and edit cards show them (renderers.md §3-4).

The original computes them with jsdiff's ``structuredPatch`` (context 3). This is a port of that algorithm:
jsdiff's line tokenizer, its Myers search with the same tie-breaking (prefer the path that went further in
the old text, else an insertion), and its hunk builder, so the hunks match for ordinary inputs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["HUNK_CONTEXT", "compute_hunk_diffs", "diff_lines", "hunk_lines"]

HUNK_CONTEXT: Final = 3
_LINE_BREAK: Final = re.compile("(\n|\r\n)")


def _tokenize(text: str) -> list[str]:
    """jsdiff's line tokens: each line with its own line break (``\\n`` or ``\\r\\n``)."""
    parts = _LINE_BREAK.split(text)
    if not parts[-1]:
        parts.pop()
    tokens: list[str] = []
    for index, part in enumerate(parts):
        if index % 2:
            tokens[-1] += part
        else:
            tokens.append(part)
    return [token for token in tokens if token]


@dataclass(slots=True)
class _Component:
    count: int
    added: bool
    removed: bool
    previous: _Component | None


@dataclass(slots=True)
class _Path:
    old_pos: int
    last: _Component | None


@dataclass(frozen=True, slots=True)
class Change:
    """A run of equal, added or removed line tokens."""

    lines: tuple[str, ...]
    added: bool
    removed: bool


def _add_to_path(path: _Path, added: bool, removed: bool, old_increment: int) -> _Path:
    last = path.last
    if last is not None and last.added == added and last.removed == removed:
        return _Path(path.old_pos + old_increment, _Component(last.count + 1, added, removed, last.previous))
    return _Path(path.old_pos + old_increment, _Component(1, added, removed, last))


def _extract_common(path: _Path, new: list[str], old: list[str], diagonal: int) -> int:
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while new_pos + 1 < len(new) and old_pos + 1 < len(old) and old[old_pos + 1] == new[new_pos + 1]:
        new_pos += 1
        old_pos += 1
        common += 1
    if common:
        path.last = _Component(common, False, False, path.last)
    path.old_pos = old_pos
    return new_pos


def _build(last: _Component | None, new: list[str], old: list[str]) -> list[Change]:
    components: list[_Component] = []
    while last is not None:
        components.append(last)
        last = last.previous
    components.reverse()
    changes: list[Change] = []
    new_pos = old_pos = 0
    for component in components:
        if component.removed:
            changes.append(Change(tuple(old[old_pos : old_pos + component.count]), False, True))
            old_pos += component.count
        else:
            changes.append(Change(tuple(new[new_pos : new_pos + component.count]), component.added, False))
            new_pos += component.count
            if not component.added:
                old_pos += component.count
    return changes


def diff_lines(before: str, after: str) -> list[Change]:
    """jsdiff ``diffLines(before, after)``: the shortest edit script over line tokens."""
    old, new = _tokenize(before), _tokenize(after)
    best: dict[int, _Path | None] = {0: _Path(-1, None)}
    start = best[0]
    assert start is not None
    new_pos = _extract_common(start, new, old, 0)
    if start.old_pos + 1 >= len(old) and new_pos + 1 >= len(new):
        return _build(start.last, new, old)
    min_diagonal, max_diagonal = -(10**18), 10**18
    edit_length = 1
    while edit_length <= len(old) + len(new):
        diagonal = max(min_diagonal, -edit_length)
        while diagonal <= min(max_diagonal, edit_length):
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = add_path is not None and 0 <= add_path.old_pos - diagonal < len(new)
            can_remove = remove_path is not None and remove_path.old_pos + 1 < len(old)
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            if not can_remove or (
                can_add and remove_path is not None and add_path is not None and remove_path.old_pos < add_path.old_pos
            ):
                assert add_path is not None
                base = _add_to_path(add_path, True, False, 0)
            else:
                assert remove_path is not None
                base = _add_to_path(remove_path, False, True, 1)
            new_pos = _extract_common(base, new, old, diagonal)
            if base.old_pos + 1 >= len(old) and new_pos + 1 >= len(new):
                return _build(base.last, new, old)
            best[diagonal] = base
            if base.old_pos + 1 >= len(old):
                max_diagonal = min(max_diagonal, diagonal - 1)
            if new_pos + 1 >= len(new):
                min_diagonal = max(min_diagonal, diagonal + 1)
            diagonal += 2
        edit_length += 1
    raise AssertionError("unreachable: an edit script always exists")  # pragma: no cover


def _split_change(lines: tuple[str, ...]) -> list[str]:
    # jsdiff re-splits each change's joined value on "\n", so a "\r\n" token keeps its "\r".
    text = "".join(lines)
    pieces = [piece + "\n" for piece in text.split("\n")]
    if text.endswith("\n"):
        pieces.pop()
    else:
        pieces[-1] = pieces[-1][:-1]
    return pieces


def hunk_lines(before: str, after: str, context: int = HUNK_CONTEXT) -> list[list[str]]:
    """The prefixed lines (``" "``, ``"-"``, ``"+"``, ``"\\ No newline…"``) of each hunk of ``structuredPatch``."""
    changes: list[tuple[list[str], bool, bool]] = [
        (_split_change(change.lines), change.added, change.removed) for change in diff_lines(before, after)
    ]
    changes.append(([], False, False))
    hunks: list[list[str]] = []
    in_hunk = False
    current: list[str] = []
    for index, (lines, added, removed) in enumerate(changes):
        if added or removed:
            if not in_hunk:
                in_hunk = True
                current = [" " + line for line in changes[index - 1][0][-context:]] if index and context else []
            current.extend(("+" if added else "-") + line for line in lines)
        elif in_hunk:
            if len(lines) <= context * 2 and index < len(changes) - 2:
                current.extend(" " + line for line in lines)
            else:
                current.extend(" " + line for line in lines[: min(len(lines), context)])
                hunks.append(current)
                in_hunk = False
                current = []
    for hunk in hunks:
        marked: list[str] = []
        for line in hunk:
            if line.endswith("\n"):
                marked.append(line[:-1])
            else:
                marked.extend((line, "\\ No newline at end of file"))
        hunk[:] = marked
    return hunks


def compute_hunk_diffs(path: Any, before: str, after: str) -> list[dict[str, Any]]:
    """``[{path, oldText, newText}]`` per hunk; ``oldText`` is ``None`` when the hunk has no old line."""
    diffs: list[dict[str, Any]] = []
    for hunk in hunk_lines(before, after):
        old: list[str] = []
        new: list[str] = []
        for line in hunk:
            if line.startswith("\\"):
                continue
            if line[0] in " -":
                old.append(line[1:])
            if line[0] in " +":
                new.append(line[1:])
        diffs.append({"path": path, "oldText": "\n".join(old) if old else None, "newText": "\n".join(new)})
    return diffs
