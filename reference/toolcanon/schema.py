"""The value-schema DSL, the supported raw JSON Schema subset, and the compiled subset validator."""

from __future__ import annotations

from toolcanon._schema_dsl import compile_parameters, compile_value_schema
from toolcanon._schema_subset import (
    assert_object_schema,
    assert_supported_schema,
    schema_violations,
    supported_copy,
)
from toolcanon._schema_validate import Validator, compile_validator

__all__ = [
    "Validator",
    "assert_object_schema",
    "assert_supported_schema",
    "compile_parameters",
    "compile_validator",
    "compile_value_schema",
    "schema_violations",
    "supported_copy",
]
