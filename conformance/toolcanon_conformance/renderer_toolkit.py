"""Tools for renderer authors: the ``native_snapshot`` fixture, ``golden_bytes`` and ``check_renderer``.

A rendering's golden is ``snapshots/renderers/<family>/<case>.txt`` holding the exact UTF-8 bytes of the
text when the content is one text block whose text is valid Unicode, else
``snapshots/renderers/<family>/<case>.json`` holding the canonical JSON of the whole content list (several
blocks, image blocks, or a text with a lone surrogate, which UTF-8 cannot carry).
"""

from __future__ import annotations

import difflib
import itertools
import json
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pytest
from syrupy.assertion import SnapshotAssertion

from toolcanon.definition import Output
from toolcanon.jsonvalue import canonical_json, is_lossless_json, snapshot_json
from toolcanon.schema import compile_validator, compile_value_schema
from toolcanon_conformance.golden import GoldenFileExtension, golden_path

__all__ = [
    "NativeSnapshot",
    "RendererCheckError",
    "RendererFixture",
    "RendererNotLossless",
    "RendererNotPure",
    "RendererNotTotal",
    "check_renderer",
    "golden_bytes",
    "golden_diff",
    "golden_name",
    "load_json_text",
    "load_renderer_fixtures",
    "native_snapshot",
]

_SHOWN_CHARS: Final = 200
_DIFF_LINES: Final = 60
# Python's JSON reader recurses once per nesting level; value files may nest thousands of levels deep.
_DEEP_JSON_RECURSION_LIMIT: Final = 100_000


@contextmanager
def _deep_recursion() -> Iterator[None]:
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, _DEEP_JSON_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def load_json_text(text: str) -> Any:
    """Parse JSON text that may nest deeply (``ValueError`` when it is not JSON)."""
    with _deep_recursion():
        return json.loads(text)


@dataclass(frozen=True, slots=True)
class RendererFixture:
    """One renderer case: ``fixtures/renderers/<family>/<case>.json``.

    The file holds ``{"args", "value"}`` and optionally ``"config"`` (options of the family's factory,
    for example ``{"max_results": 2}``) and ``"finalize": true`` (apply the family's ``finalize_content``).
    """

    family: str
    case: str
    args: Any
    value: Any
    config: dict[str, Any] = field(default_factory=dict)
    finalize: bool = False

    @property
    def id(self) -> str:
        """``<family>/<case>``."""
        return f"{self.family}/{self.case}"


def load_renderer_fixtures(directory: Path) -> list[RendererFixture]:
    """Every ``<family>/<case>.json`` under ``directory``, sorted by family then case."""
    fixtures = []
    for path in sorted(Path(directory).glob("*/*.json")):
        data = load_json_text(path.read_text(encoding="utf-8"))
        fixtures.append(
            RendererFixture(
                family=path.parent.name,
                case=path.stem,
                args=data.get("args", {}),
                value=data["value"],
                config=dict(data.get("config", {})),
                finalize=bool(data.get("finalize", False)),
            )
        )
    return fixtures


def golden_bytes(content: Any) -> tuple[str, bytes]:
    """``(suffix, bytes)`` of the golden for rendered ``content`` (see the module docstring)."""
    if (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and set(content[0]) == {"type", "text"}
        and content[0]["type"] == "text"
        and isinstance(content[0]["text"], str)
    ):
        try:
            return ".txt", content[0]["text"].encode("utf-8")
        except UnicodeEncodeError:
            pass
    return ".json", canonical_json(content).encode("utf-8")


def golden_name(family: str, case: str, suffix: str) -> str:
    """The golden's path under ``snapshots/``: ``renderers/<family>/<case><suffix>``."""
    return f"renderers/{family}/{case}{suffix}"


def golden_diff(path: Path, data: bytes) -> str:
    """A unified diff (golden → rendering) whose lines are shown as Python literals, so \\r and \\t show."""
    if not path.exists():
        return "(no golden yet: create it with --snapshot-update)"
    expected = path.read_bytes().decode("utf-8", "backslashreplace").splitlines(keepends=True)
    actual = data.decode("utf-8", "backslashreplace").splitlines(keepends=True)
    lines = difflib.unified_diff(
        [repr(line) + "\n" for line in expected],
        [repr(line) + "\n" for line in actual],
        "golden",
        "rendered",
    )
    shown = list(itertools.islice(lines, _DIFF_LINES))
    return "".join(shown) if shown else "(the bytes differ only in ways lines cannot show)"


def _render(output: Output, value: Any, args: Any) -> Any:
    return output.render(snapshot_json({} if args is None else args), snapshot_json(value))


class NativeSnapshot:
    """Stores and checks the byte-exact rendering of a value as a golden file (see :func:`native_snapshot`)."""

    def __init__(self, snapshot: SnapshotAssertion) -> None:
        self._snapshot = snapshot.use_extension(GoldenFileExtension)

    def match(self, content: Any, *, family: str, case: str) -> None:
        """Assert that already-rendered ``content`` equals its golden ``renderers/<family>/<case>.*``."""
        suffix, data = golden_bytes(content)
        name = golden_name(family, case, suffix)
        if self._snapshot(name=name) != data:
            root = GoldenFileExtension.snapshot_root(self._snapshot.test_location)
            raise AssertionError(
                f"rendering differs from snapshots/{name}\n{golden_diff(golden_path(root, name), data)}"
            )

    def __call__(self, output: Output, value: Any, args: Any = None, *, family: str, case: str) -> Any:
        """Render ``value`` with ``output`` (frozen inputs, as the registry passes them) and check the golden.

        Returns the rendered content.
        """
        content = snapshot_json(_render(output, value, args))
        self.match(content, family=family, case=case)
        return content


@pytest.fixture
def native_snapshot(snapshot: SnapshotAssertion) -> NativeSnapshot:
    """A :class:`NativeSnapshot` bound to the test: ``native_snapshot(output, value, family=…, case=…)``.

    Goldens live in ``<rootdir>/snapshots/renderers/``; create or refresh one on purpose with
    ``pytest <node id> --snapshot-update`` (no other golden is touched).
    """
    return NativeSnapshot(snapshot)


class RendererCheckError(AssertionError):
    """A renderer broke one of the properties :func:`check_renderer` checks; the message names the value."""


class RendererNotTotal(RendererCheckError):
    """The renderer (or its metadata projector) raised for a schema-valid value."""


class RendererNotPure(RendererCheckError):
    """Two renderings of the same inputs differ, or the renderer tried to change its inputs."""


class RendererNotLossless(RendererCheckError):
    """The renderer returned something that is not a lossless JSON list of content blocks."""


def _shown(value: Any) -> str:
    try:
        text = canonical_json(value)
    except ValueError:
        text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"


def _call(kind: str, function: Any, args: Any, value: Any, where: str) -> Any:
    try:
        return function(args, value)
    except TypeError as error:
        if "frozen" in str(error).lower():
            raise RendererNotPure(f"{kind} tried to modify its frozen input for {where}: {error}") from error
        raise RendererNotTotal(f"{kind} raised {type(error).__name__}: {error} for {where}") from error
    except Exception as error:
        raise RendererNotTotal(f"{kind} raised {type(error).__name__}: {error} for {where}") from error


def _check_one(output: Output, value: Any, args: Any, where: str) -> None:
    frozen_args = snapshot_json({} if args is None else args)
    frozen_value = snapshot_json(value)
    before = canonical_json([frozen_args, frozen_value])
    projections = [("render", output.render)]
    if output.presentation_meta is not None:
        projections.append(("presentation_meta", output.presentation_meta))
    for kind, function in projections:
        first = _call(kind, function, frozen_args, frozen_value, where)
        if not is_lossless_json(first):
            raise RendererNotLossless(f"{kind} returned a value that is not lossless JSON for {where}")
        if kind == "render" and not isinstance(first, list):
            raise RendererNotLossless(f"render returned {type(first).__name__}, not a list of blocks, for {where}")
        second = _call(kind, function, frozen_args, frozen_value, where)
        if not is_lossless_json(second) or canonical_json(first) != canonical_json(second):
            raise RendererNotPure(f"{kind} gave different results for the same inputs for {where}")
    if canonical_json([frozen_args, frozen_value]) != before:
        raise RendererNotPure(f"the inputs changed while rendering {where}")


def check_renderer(output: Output, values: Iterable[Any], args: Any = None) -> int:
    """Check that ``output`` renders every value of ``values``: total, pure and lossless-JSON.

    ``output.schema`` is the value-schema DSL; each value must be valid for it (a ``ValueError`` says which
    is not). The renderer (and the metadata projector, when there is one) is called twice per value with
    frozen inputs, as the registry calls it. Raises a :class:`RendererCheckError` subclass naming the value;
    returns the number of values checked.
    """
    validator = compile_validator(compile_value_schema(output.schema))
    count = 0
    for index, value in enumerate(values):
        where = f"value #{index} {_shown(value)}" + ("" if args is None else f" with args {_shown(args)}")
        violations = validator.violations(snapshot_json(value), root="value")
        if violations:
            raise ValueError(f"{where} is not valid for the schema: {'; '.join(violations)}")
        _check_one(output, value, args, where)
        count += 1
    return count
