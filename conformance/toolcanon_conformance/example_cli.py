"""``toolcanon example DIR``: write the adapter tutorial's example into DIR.

``docs/writing-an-adapter.md`` starts here: ``DIR/minimal-registry.mjs`` is a tiny registry, the implementation
under test, and ``DIR/minimal-adapter.mjs`` the adapter the guide builds, finished (both plain ES modules for
Node.js 20). The files travel inside the kit's wheel, so the guide needs no checkout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO

from toolcanon_conformance.locations import data_root

__all__ = ["EXAMPLE_FILES", "ExampleError", "example_command", "examples_dir", "write_example"]

_PROG = "toolcanon example"

#: The files written, in the order the guide introduces them.
EXAMPLE_FILES = ("minimal-registry.mjs", "minimal-adapter.mjs")


class ExampleError(ValueError):
    """The example cannot be written where it was asked to (a usage error)."""


def examples_dir() -> Path:
    """The folder the example files are copied from: the installed package's, or ``docs/examples`` in a checkout.

    Raises :class:`FileNotFoundError` when neither place has it.
    """
    return data_root("docs/examples")


def write_example(destination: Path, *, force: bool = False) -> list[Path]:
    """Copy the example files, byte for byte, into ``destination``; the paths written, in order.

    ``destination`` may not exist yet (it is created, parents too) or be an empty folder; one that holds
    anything is refused with :class:`ExampleError` unless ``force``, and then files of the same name are
    replaced and others left alone.
    """
    from toolcanon_conformance.export import destination_problem

    problem = destination_problem(destination, force=force)
    if problem is not None:
        raise ExampleError(problem)
    source = examples_dir()
    written: list[Path] = []
    try:
        destination.mkdir(parents=True, exist_ok=True)
        for name in EXAMPLE_FILES:
            (destination / name).write_bytes((source / name).read_bytes())
            written.append(destination / name)
    except OSError as error:
        raise ExampleError(f"cannot write {destination}: {error}") from None
    return written


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Write the example of docs/writing-an-adapter.md into DIR: minimal-registry.mjs, a tiny "
        "registry (the implementation under test), and minimal-adapter.mjs, its adapter.",
        epilog="Exit status: 0 written, 2 usage error (DIR is a file, is not empty without --force, or cannot "
        "be written).",
    )
    parser.add_argument("directory", metavar="DIR", help="the folder to write into (created when missing)")
    parser.add_argument("--force", action="store_true", help="write into a folder that is not empty")
    return parser


def example_command(argv: list[str], *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    """Run ``toolcanon example`` with ``argv`` (the arguments after ``example``); return the exit status."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    try:
        options = _parser().parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    destination = Path(options.directory)
    try:
        written = write_example(destination, force=options.force)
    except (ExampleError, FileNotFoundError) as error:
        print(f"{_PROG}: {error}", file=err)
        return 2
    for path in written:
        print(path, file=out)
    print(f"wrote the example registry and its adapter to {destination}", file=out)
    return 0
