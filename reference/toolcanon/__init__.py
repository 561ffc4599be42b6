"""The reference implementation of the canonical tool output contract.

A tool body returns one canonical JSON *value*; the registry snapshots it losslessly, validates it against the
tool's output schema, deep-freezes it, and renders the deterministic Native *content* the model sees.
"""

from toolcanon.decisions import Accept, Allow, ApprovalRequest, Ask, Block, Deny
from toolcanon.definition import Output, ToolDefinition, define_tool
from toolcanon.errors import (
    HarnessError,
    JsonSchemaError,
    ToolArgsError,
    ToolNotFoundError,
    ToolOutputError,
)
from toolcanon.execution import Call, ToolExecution
from toolcanon.frozen import FrozenDict, FrozenError, FrozenList
from toolcanon.jsonvalue import NotLosslessJson, Rejection, canonical_json, snapshot_json
from toolcanon.registry import Registry
from toolcanon.result import (
    ABSENT,
    DispatchToken,
    ErrorInfo,
    ToolError,
    ToolFailure,
    ToolResult,
    ToolSuccess,
)
from toolcanon.signal import AbortController, AbortSignal

__version__ = "0.2.0"

__all__ = [
    "ABSENT",
    "AbortController",
    "AbortSignal",
    "Accept",
    "Allow",
    "ApprovalRequest",
    "Ask",
    "Block",
    "Call",
    "Deny",
    "DispatchToken",
    "ErrorInfo",
    "FrozenDict",
    "FrozenError",
    "FrozenList",
    "HarnessError",
    "JsonSchemaError",
    "NotLosslessJson",
    "Output",
    "Registry",
    "Rejection",
    "ToolArgsError",
    "ToolDefinition",
    "ToolError",
    "ToolExecution",
    "ToolFailure",
    "ToolNotFoundError",
    "ToolOutputError",
    "ToolResult",
    "ToolSuccess",
    "canonical_json",
    "define_tool",
    "snapshot_json",
]
