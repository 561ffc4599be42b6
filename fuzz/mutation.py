"""Byte-level mutations of seed inputs, for the engines that have no mutator of their own."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Final

__all__ = ["JSON_TOKENS", "mutants", "mutate"]

JSON_TOKENS: Final = (
    b"[",
    b"]",
    b"{",
    b"}",
    b'"',
    b"\\",
    b",",
    b":",
    b"null",
    b"true",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"-0",
    b"1e400",
    b"-1e-400",
    b"9007199254740993",
    b"123456789012345678901234567890",
    b'"\\ud800"',
    b'"\\udfff\\ud800"',
    b'"\\u0000"',
    b"\xed\xa0\x80",
    b"\xff",
    b"\r",
    b"\n",
    b'"seq":',
    b'"type":',
    b'"data":',
    b'"version":1',
    b'"transcript":',
    b'"skipped":true',
    b'"errored":true',
    b'"formatVersion":1',
    b'"$exotic":',
)
"""Tokens worth splicing into JSON text (and a libFuzzer dictionary for the JSON targets)."""

_INTERESTING_BYTES: Final = b'\x00\x01\x7f\x80\xff"\\[]{}:,0-9e.\n'


def mutate(
    data: bytes, rng: random.Random, tokens: Sequence[bytes] = JSON_TOKENS, others: Sequence[bytes] = ()
) -> bytes:
    """``data`` changed by one to four random edits (bit flips, tokens, cuts, copies, deep brackets, splices)."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        position = rng.randint(0, len(out))
        edit = rng.randrange(9)
        if edit == 0 and out:
            index = min(position, len(out) - 1)
            out[index] ^= 1 << rng.randrange(8)
        elif edit == 1 and out:
            out[min(position, len(out) - 1)] = rng.choice(_INTERESTING_BYTES)
        elif edit == 2 and tokens:
            out[position:position] = rng.choice(tokens)
        elif edit == 3:
            del out[position : position + rng.randint(1, 16)]
        elif edit == 4 and out:
            start = rng.randrange(len(out))
            out[position:position] = out[start : start + rng.randint(1, 64)]
        elif edit == 5:
            del out[position:]
        elif edit == 6:
            depth = rng.choice((10, 500, 1100, 5000))
            opener = rng.choice((b"[", b'{"k":', b"[[", b'{"0":['))
            at = 0 if rng.random() < 0.5 else position  # at the start, the nesting is read whatever follows
            out[at:at] = opener * depth
        elif edit == 7 and others:
            other = rng.choice(others)
            start = rng.randint(0, len(other))
            out[position:] = other[start:]
        else:
            out[position:position] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(out)


def mutants(
    seeds: Sequence[bytes], count: int, seed: int = 0, tokens: Sequence[bytes] = JSON_TOKENS
) -> Iterator[bytes]:
    """``count`` deterministic mutants of ``seeds`` (the same ``seed`` gives the same inputs)."""
    rng = random.Random(seed)
    for _ in range(count):
        yield mutate(rng.choice(seeds), rng, tokens, seeds)
