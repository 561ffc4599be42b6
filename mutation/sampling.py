"""The mutants a run measures: a stratified sample, spread over the modules in proportion, drawn by a seed.

Within a module, mutants are ranked by a hash of the seed and their name, and the first ones taken. The sample
of one commit is the same on every run, and after a change elsewhere in a module the mutants of its unchanged
functions keep their ranks: a later run measures mostly the same mutants.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from mutation.errors import UsageError

__all__ = ["allocate", "rank", "sample"]


def rank(seed: int, name: str) -> bytes:
    """The position of a mutant in its module's draw: the SHA-256 of the seed and the name."""
    return hashlib.sha256(f"{seed}\x00{name}".encode()).digest()


def allocate(sizes: Mapping[str, int], total: int) -> dict[str, int]:
    """How many of ``total`` mutants each module gives, in proportion to its ``sizes`` (largest remainder;
    a tie goes to the module listed first). ``total`` at least the sum takes everything."""
    if total < 0:
        raise UsageError(f"--sample {total}: not a number of mutants")
    whole = sum(sizes.values())
    if total >= whole:
        return dict(sizes)
    shares = {module: divmod(size * total, whole) for module, size in sizes.items()}
    counts = {module: share[0] for module, share in shares.items()}
    order = list(sizes)
    by_remainder = sorted(order, key=lambda module: (-shares[module][1], order.index(module)))
    for module in by_remainder[: total - sum(counts.values())]:
        counts[module] += 1
    return counts


def sample(names: Mapping[str, Sequence[str]], size: int | None, seed: int) -> dict[str, list[str]]:
    """The sampled mutant names of each module, sorted (``size`` ``None``: every mutant)."""
    if size is None:
        return {module: sorted(module_names) for module, module_names in names.items()}
    counts = allocate({module: len(module_names) for module, module_names in names.items()}, size)
    return {
        module: sorted(sorted(module_names, key=lambda name: rank(seed, name))[: counts[module]])
        for module, module_names in names.items()
    }
