"""Mutation testing of the reference: how many of its bugs the scenario suite (and the unit tests) catch.

``python -m mutation`` (or ``nox -s mutation``) mutates the reference's core modules with mutmut, runs a seeded
sample of the mutants against the conformance scenarios and against the reference's unit tests, and prints a
score per module. ``docs/mutation.md`` says how to run it, how to read a survivor, and triages the survivors.
"""

from __future__ import annotations
