"""Deeply immutable JSON containers: the only dict/list subclasses a JSON value may contain."""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenError", "FrozenList"]


class FrozenError(TypeError):
    """Raised by every attempt to change a frozen JSON container."""


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise FrozenError(f"{type(self).__name__} is frozen and cannot be modified")


class FrozenDict(dict[str, Any]):
    """A JSON object that refuses every public mutation.

    It is a real ``dict``: it compares equal to the plain dict it came from, is a ``Mapping``, and is
    written by ``json.dumps`` unchanged. Bypassing it through ``dict.__setitem__`` is out of scope.
    """

    __slots__ = ()

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    __setattr__ = _refuse
    __delattr__ = _refuse
    update = _refuse
    pop = _refuse
    popitem = _refuse
    clear = _refuse
    setdefault = _refuse

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, Any]]]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenDict:
        return self

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


class FrozenList(list[Any]):
    """A JSON array that refuses every public mutation (see :class:`FrozenDict`)."""

    __slots__ = ()

    __setitem__ = _refuse
    __delitem__ = _refuse
    __iadd__ = _refuse
    __imul__ = _refuse
    __setattr__ = _refuse
    __delattr__ = _refuse
    append = _refuse
    extend = _refuse
    insert = _refuse
    pop = _refuse
    remove = _refuse
    clear = _refuse
    sort = _refuse
    reverse = _refuse

    def __reduce__(self) -> tuple[type[FrozenList], tuple[list[Any]]]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenList:
        return self

    def __repr__(self) -> str:
        return f"FrozenList({list.__repr__(self)})"
