"""Byte-exact golden files under the top-level ``snapshots/`` directory, checked through syrupy.

A golden is addressed by its path relative to ``snapshots/`` (``renderers/grep/one-match.txt``,
``scenarios/<id>.json``), passed as the snapshot's name::

    def test_case(snapshot):
        golden = snapshot.use_extension(GoldenFileExtension)
        assert golden(name="renderers/grep/one-match.txt") == rendered_bytes

Syrupy deletes the snapshots it discovers and believes unused when it runs with ``--snapshot-update``;
running one node id would then delete the goldens of every other case. This extension never lets syrupy
discover anything, so each assertion reads and writes its own file and nothing else is ever removed.
Orphaned goldens are found by the project's own tests instead (a golden without a fixture fails).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, ClassVar

from syrupy.data import SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

if TYPE_CHECKING:
    from syrupy.location import PyTestLocation
    from syrupy.types import SerializedData, SnapshotIndex

__all__ = ["GoldenFileExtension", "GoldenNameError", "golden_path"]


class GoldenNameError(ValueError):
    """A golden was asked for without a relative path as its name, or with a path leaving ``snapshots/``."""


def golden_path(root: Path, name: object) -> Path:
    """The file of the golden ``name`` (a relative POSIX path with a suffix) under ``root``."""
    if not isinstance(name, str) or not name:
        raise GoldenNameError(
            "a golden is addressed by its path under snapshots/: use snapshot(name='renderers/<family>/<case>.txt')"
        )
    relative = PurePosixPath(name)
    if relative.is_absolute() or ".." in relative.parts or "\\" in name or not relative.suffix:
        raise GoldenNameError(f"golden name {name!r} must be a relative path with a suffix, inside snapshots/")
    return root.joinpath(*relative.parts)


class GoldenFileExtension(SingleFileSnapshotExtension):
    """One golden file per assertion, raw bytes, at ``<root>/<name>``; ``root`` defaults to ``<rootdir>/snapshots``.

    Use :meth:`rooted_at` for another directory (for example the kit's packaged data).
    """

    _write_mode = WriteMode.BINARY
    # The golden's name carries its own suffix (``.txt`` or ``.json``).
    file_extension = ""
    root: ClassVar[Path | None] = None

    @classmethod
    def rooted_at(cls, root: Path) -> type[GoldenFileExtension]:
        """A subclass that keeps its goldens under ``root``."""
        return type(f"{cls.__name__}At", (cls,), {"root": Path(root)})

    @classmethod
    def snapshot_root(cls, test_location: PyTestLocation) -> Path:
        """The directory goldens are relative to."""
        if cls.root is not None:
            return cls.root
        return Path(test_location.item.config.rootpath) / "snapshots"

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(cls.snapshot_root(test_location))

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return cls.dirname(test_location=test_location)

    @classmethod
    def get_location(cls, *, test_location: PyTestLocation, index: SnapshotIndex) -> str:
        return str(golden_path(cls.snapshot_root(test_location), index))

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: SnapshotIndex = 0) -> str:
        return f"{test_location.snapshot_name}[{index}]"

    @classmethod
    def matches_test_location(cls, *, test_location: PyTestLocation, snapshot_location: str) -> bool:
        return True

    def discover_snapshots(
        self, *, test_location: PyTestLocation, ignore_extensions: list[str] | None = None
    ) -> SnapshotCollections:
        """Nothing is discovered, so syrupy never judges a golden unused and never deletes one."""
        return SnapshotCollections()

    def delete_snapshots(self, *, snapshot_location: str, snapshot_names: set[str]) -> None:
        """Never delete a golden (unreachable while discovery finds nothing; kept as a second guard)."""

    def diff_lines(self, serialized_data: SerializedData, snapshot_data: SerializedData) -> Iterator[str]:
        """Diff goldens as UTF-8 text (undecodable bytes as escapes), not as ``bytes`` reprs."""
        return super().diff_lines(_as_text(serialized_data), _as_text(snapshot_data))


def _as_text(data: Any) -> Any:
    if isinstance(data, bytes | bytearray):
        return bytes(data).decode("utf-8", "backslashreplace")
    return data
