"""The result types as Python code sees them: bounded reprs, a dispatch token that cannot be copied, and the
plain copy of a failure's error."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

import pytest

from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.result import ABSENT, DispatchToken, ErrorInfo, ToolError, ToolFailure, ToolSuccess, plain_error


def test_a_success_shows_every_field_in_its_repr() -> None:
    success = ToolSuccess(FrozenDict({"n": 1}), [{"type": "text", "text": "1"}], None)
    assert repr(success) == (
        "ToolSuccess(value={'n': 1}, content=[{'text': '1', 'type': 'text'}], meta=None, "
        "additional_contexts=ABSENT, concludes_turn=False)"
    )


def test_a_failure_shows_every_field_in_its_repr() -> None:
    failure = ToolFailure(ToolError("boom"), [{"type": "text", "text": "Error: boom"}])
    assert repr(failure) == (
        "ToolFailure(error=ToolError(message='boom', info=None), "
        "content=[{'text': 'Error: boom', 'type': 'text'}], meta=ABSENT, additional_contexts=ABSENT)"
    )


def test_a_result_s_repr_is_bounded_however_large_its_value() -> None:
    long_text = "x" * 1_000_000
    deep: object = "leaf"
    for _ in range(100):
        deep = FrozenList([deep])
    success = ToolSuccess(FrozenList([long_text, deep]), [])
    # a string shows in at most 60 characters, its quotes included, and nesting to 3 levels below the field
    shown = f"'{'x' * 27}...{'x' * 28}'"
    assert len(shown) == 60
    assert repr(success) == (
        f"ToolSuccess(value=[{shown}, [[[...]]]], content=[], meta=ABSENT, "
        "additional_contexts=ABSENT, concludes_turn=False)"
    )


def test_a_field_shown_by_its_own_repr_is_cut_past_60_characters() -> None:
    """A field that is neither a string nor a container (an error) shows whole up to 60 characters, cut past."""
    whole, cut = ToolError("x" * 28), ToolError("x" * 29)
    assert (len(repr(whole)), len(repr(cut))) == (60, 61)
    assert repr(ToolFailure(whole, [])).startswith(f"ToolFailure(error={whole!r}, content=[]")
    shown = f"ToolError(message='{'x' * 9}...{'x' * 16}', info=None)"
    assert len(shown) == 60
    assert repr(ToolFailure(cut, [])).startswith(f"ToolFailure(error={shown}, content=[]")


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_a_dispatch_token_cannot_be_copied(copier: Callable[[object], object]) -> None:
    token = DispatchToken()
    with pytest.raises(TypeError, match=r"^a DispatchToken cannot be copied$"):
        copier(token)
    with pytest.raises(TypeError, match=r"^a DispatchToken cannot be pickled or copied$"):
        pickle.dumps(token)
    assert repr(token) == "<DispatchToken>"


def test_an_error_of_exact_types_is_its_own_plain_copy() -> None:
    error = ToolError("m", ErrorInfo("E", "C"))
    assert plain_error(error) is error
    bare = ToolError("m")
    assert plain_error(bare) is bare


def test_a_message_that_is_other_lossless_json_is_kept_frozen() -> None:
    """digest 5.3: a failure's message is not checked to be a string; a JSON scalar is kept as the very object,
    a container as its frozen snapshot."""
    number = ToolError(5)
    assert plain_error(number) is number
    copied = plain_error(ToolError([1, {"a": None}], ErrorInfo("E", "C")))
    assert copied is not None and copied.info == ErrorInfo("E", "C")
    assert copied.message == [1, {"a": None}] and type(copied.message) is not list


class Text(str):
    pass


class Info(ErrorInfo):
    pass


@pytest.mark.parametrize(
    "info",
    [ErrorInfo(Text("E"), "C"), ErrorInfo("E", Text("C")), Info("E", "C")],
    ids=["name-subclass", "code-subclass", "info-subclass"],
)
def test_an_error_info_of_foreign_types_is_copied_to_exact_ones(info: ErrorInfo) -> None:
    copied = plain_error(ToolError("m", info))
    assert copied is not None and copied.info is not None and copied.info is not info
    assert (type(copied.info), type(copied.info.name), type(copied.info.code)) == (ErrorInfo, str, str)
    assert (copied.message, copied.info.name, copied.info.code) == ("m", "E", "C")


@pytest.mark.parametrize(
    "error",
    [
        ToolError("m", ErrorInfo("E", 5)),  # type: ignore[arg-type]
        ToolError("m", ErrorInfo(5, "C")),  # type: ignore[arg-type]
        ToolError("m", "E"),  # type: ignore[arg-type]
        ToolError(float("nan")),
        ToolError(object()),
        "m",
    ],
    ids=[
        "code-not-a-string",
        "name-not-a-string",
        "info-not-an-error-info",
        "message-nan",
        "message-an-object",
        "not-an-error",
    ],
)
def test_an_error_that_cannot_be_plain_has_no_plain_copy(error: object) -> None:
    assert plain_error(error) is None


def test_absent_is_falsy_and_shows_as_its_name() -> None:
    assert not ABSENT and repr(ABSENT) == "ABSENT"


def test_the_plain_copy_of_an_error_with_a_str_subclass_message_holds_a_plain_str() -> None:
    """plain_error copies a message held in a ``str`` subclass as the exact ``str`` it spells."""

    class Text(str):
        pass

    copied = plain_error(ToolError(Text("m")))
    assert copied is not None
    assert copied.message == "m"
    assert type(copied.message) is str
