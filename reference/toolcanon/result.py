"""The result union (a success with a value, or a failure that never has one) and the dispatch token."""

from __future__ import annotations

import enum
import reprlib
from dataclasses import dataclass
from typing import Any, Final, Literal, NoReturn, TypeAlias

from toolcanon.content import error_content
from toolcanon.errors import ABORTED_BEFORE_DISPATCH, error_info, error_message
from toolcanon.jsonvalue import JsonValue, NotLosslessJson, plain_str, snapshot_json

__all__ = [
    "ABSENT",
    "Absent",
    "DispatchToken",
    "ErrorInfo",
    "ToolError",
    "ToolFailure",
    "ToolResult",
    "ToolSuccess",
    "aborted_result",
    "failure_fields",
    "plain_error",
    "success_fields",
    "tool_error_result",
]


class Absent(enum.Enum):
    """The type of :data:`ABSENT`: a key that is not there (``None`` is JSON ``null``, which is present)."""

    ABSENT = "ABSENT"

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Final = Absent.ABSENT
"""Marks an optional result field (``meta``, ``additional_contexts``) that is absent, as opposed to null."""


class _BoundedRepr(reprlib.Repr):
    """Bounded reprs: results can hold very large values, and asyncio may repr a task's result."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxstring = 60
        self.maxother = 60

    def repr_FrozenList(self, value: Any, level: int) -> str:
        return self.repr_list(value, level)

    def repr_FrozenDict(self, value: Any, level: int) -> str:
        return self.repr_dict(value, level)


def _repr_fields(record: Any, names: tuple[str, ...]) -> str:
    bounded = _BoundedRepr()  # one per repr, which is rare: its limits are the class's as it is now
    shown = ", ".join(f"{name}={bounded.repr(getattr(record, name))}" for name in names)
    return f"{type(record).__name__}({shown})"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """Structured failure info: present only when a :class:`~toolcanon.errors.HarnessError` was raised."""

    name: str
    code: str


@dataclass(frozen=True, slots=True)
class ToolError:
    """A failure's error: the message (always) and the info (``None`` for non-Harness errors).

    The message is a string, except for a denial whose reason is another JSON value, or a failure authored with
    one (kept as it is, digest 5.3): that frozen value.
    """

    message: JsonValue
    info: ErrorInfo | None = None


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True, repr=False)
class ToolSuccess:
    """A successful result: the canonical ``value`` and its Native ``content``.

    ``meta`` and ``additional_contexts`` are :data:`ABSENT` when the result has none. Results compare by
    identity: the registry trusts only the very object it built for a call (see :class:`DispatchToken`).
    """

    value: JsonValue
    content: Any
    meta: JsonValue | Absent = ABSENT
    additional_contexts: Any = ABSENT
    concludes_turn: bool = False

    def __repr__(self) -> str:
        return _repr_fields(self, ("value", "content", "meta", "additional_contexts", "concludes_turn"))

    @property
    def is_error(self) -> Literal[False]:
        """Always ``False``."""
        return False

    @property
    def has_meta(self) -> bool:
        """True when the result carries metadata (``None`` included)."""
        return self.meta is not ABSENT


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True, repr=False)
class ToolFailure:
    """A failed result: an ``error`` and the ``content`` shown to the model; never a value."""

    error: ToolError
    content: Any
    meta: JsonValue | Absent = ABSENT
    additional_contexts: Any = ABSENT

    def __repr__(self) -> str:
        return _repr_fields(self, ("error", "content", "meta", "additional_contexts"))

    @property
    def is_error(self) -> Literal[True]:
        """Always ``True``."""
        return True

    @property
    def has_meta(self) -> bool:
        """True when the result carries metadata (``None`` included)."""
        return self.meta is not ABSENT

    @property
    def concludes_turn(self) -> Literal[False]:
        """A failure never concludes the turn."""
        return False


ToolResult: TypeAlias = ToolSuccess | ToolFailure


def tool_error_result(thrown: object) -> ToolFailure:
    """The failure for a raised (or otherwise thrown) value: its message, ``info`` for HarnessErrors only,
    and the content ``Error: <message>`` (digest 4.7, 5.4, 5.5)."""
    message = error_message(thrown)
    coded = error_info(thrown)
    info = ErrorInfo(*coded) if coded is not None else None
    return ToolFailure(ToolError(message, info), error_content(message))


# A result, error or info of a foreign class (a subclass) is read through these slots, never through the
# subclass's own attributes: its properties may raise, change between reads, or lie.
def _slot(cls: type, name: str) -> Any:
    return cls.__dict__[name].__get__


_SUCCESS_VALUE: Final = _slot(ToolSuccess, "value")
_SUCCESS_CONTEXTS: Final = _slot(ToolSuccess, "additional_contexts")
_FAILURE_FIELDS: Final = tuple(_slot(ToolFailure, name) for name in ("error", "content", "meta", "additional_contexts"))
_ERROR_MESSAGE: Final = _slot(ToolError, "message")
_ERROR_INFO: Final = _slot(ToolError, "info")
_INFO_NAME: Final = _slot(ErrorInfo, "name")
_INFO_CODE: Final = _slot(ErrorInfo, "code")


def success_fields(result: ToolSuccess) -> tuple[Any, Any]:
    """``(value, additional_contexts)`` of a success of any subclass, read from its slots."""
    return _SUCCESS_VALUE(result), _SUCCESS_CONTEXTS(result)


def failure_fields(result: ToolFailure) -> tuple[Any, Any, Any, Any]:
    """``(error, content, meta, additional_contexts)`` of a failure of any subclass, read from its slots."""
    error, content, meta, contexts = (field(result) for field in _FAILURE_FIELDS)
    return error, content, meta, contexts


def plain_error(error: object) -> ToolError | None:
    """``error`` as a :class:`ToolError` of exact types, or ``None`` when it cannot be one.

    The message is a string or, since a failure's message is kept as it is (digest 5.3: the original checks no
    wrapper-authored message), any other lossless JSON value, held as its frozen snapshot; the info, when
    present, an :class:`ErrorInfo` whose name and code are strings (string subclasses are copied to ``str``).
    ``error`` itself is returned when it already is that.
    """
    kind = type(error)
    if not issubclass(kind, ToolError):
        return None
    raw_message, raw_info = _ERROR_MESSAGE(error), _ERROR_INFO(error)
    message: JsonValue = plain_str(raw_message)
    if message is None:
        try:
            message = snapshot_json(raw_message)
        except NotLosslessJson:
            return None
    info = raw_info
    if raw_info is not None:
        if not issubclass(type(raw_info), ErrorInfo):
            return None
        raw_name, raw_code = _INFO_NAME(raw_info), _INFO_CODE(raw_info)
        name, code = plain_str(raw_name), plain_str(raw_code)
        if name is None or code is None:
            return None
        if type(raw_info) is not ErrorInfo or name is not raw_name or code is not raw_code:
            info = ErrorInfo(name, code)
    if kind is ToolError and message is raw_message and info is raw_info:
        return error  # type: ignore[return-value]
    return ToolError(message, info)


def aborted_result(code: str, contexts: Any = ABSENT) -> ToolFailure:
    """The cancellation failure: ``ABORTED_BEFORE_DISPATCH`` or ``ABORTED``, named ``AbortError`` (digest 8.1)."""
    message = "tool call aborted before dispatch" if code == ABORTED_BEFORE_DISPATCH else "tool call aborted"
    return ToolFailure(ToolError(message, ErrorInfo("AbortError", code)), error_content(message), ABSENT, contexts)


class DispatchToken:
    """The opaque identity of one call: compared by identity only, never copied, pickled or serialized."""

    __slots__ = ("__weakref__",)

    def __reduce__(self) -> NoReturn:
        raise TypeError("a DispatchToken cannot be pickled or copied")

    def __copy__(self) -> NoReturn:
        raise TypeError("a DispatchToken cannot be copied")

    def __deepcopy__(self, memo: dict[int, object]) -> NoReturn:
        raise TypeError("a DispatchToken cannot be copied")

    def __repr__(self) -> str:
        return "<DispatchToken>"
