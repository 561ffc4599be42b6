"""Option types the kit's commands share: whole numbers from a minimum, as argparse ``type=`` callables."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["whole_number"]


def whole_number(minimum: int, noun: str) -> Callable[[str], int]:
    """An option type accepting a whole number of ``minimum`` or more, refusing anything else as not a ``noun``."""

    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            number = minimum - 1
        if number < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {noun} ({minimum} or more)")
        return number

    return parse
