"""The reference implementation of the canonical tool output contract.

A tool body returns one canonical JSON *value*; the registry snapshots it losslessly, validates it against the
tool's output schema, deep-freezes it, and renders the deterministic Native *content* the model sees.
"""

from toolcontract.decisions import Accept, Allow, ApprovalRequest, Ask, Block, Deny
from toolcontract.definition import Output, ToolDefinition, define_tool
from toolcontract.errors import (
    HarnessError,
    JsonSchemaError,
    ToolArgsError,
    ToolNotFoundError,
    ToolOutputError,
)
from toolcontract.execution import Call, ToolExecution
from toolcontract.frozen import FrozenDict, FrozenError, FrozenList
from toolcontract.jsonvalue import NotLosslessJson, Rejection, canonical_json, snapshot_json
from toolcontract.registry import Registry
from toolcontract.result import (
    ABSENT,
    DispatchToken,
    ErrorInfo,
    ToolError,
    ToolFailure,
    ToolResult,
    ToolSuccess,
)
from toolcontract.signal import AbortController, AbortSignal

__version__ = "0.1.0"

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
