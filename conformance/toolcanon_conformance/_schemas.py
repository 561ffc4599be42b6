"""The JSON Schemas shipped with the kit (package data under ``schemas/``), loaded once."""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = ["load_schema", "schema_errors", "schema_names"]


@cache
def _load(file_name: str) -> str:
    return (files("toolcanon_conformance") / "schemas" / file_name).read_text(encoding="utf-8")


def schema_names() -> list[str]:
    """The file names of every shipped schema."""
    folder = files("toolcanon_conformance") / "schemas"
    return sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".schema.json"))


def load_schema(file_name: str) -> dict[str, Any]:
    """The schema ``schemas/<file_name>``, parsed afresh (the caller may change it)."""
    loaded: dict[str, Any] = json.loads(_load(file_name))
    return loaded


@cache
def _validator(file_name: str) -> Draft202012Validator:
    # imported here: an adapter imports the protocol module and must start fast; only validation needs it
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema(file_name))


def schema_errors(file_name: str, instance: object) -> list[str]:
    """Every violation of ``instance`` against ``schemas/<file_name>``, as ``path: reason``, in path order."""
    errors = sorted(_validator(file_name).iter_errors(instance), key=lambda error: list(error.absolute_path))
    return [f"{error.json_path}: {error.message}" for error in errors]
