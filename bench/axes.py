"""The scaling axes: their inputs, and the reference's figures on them, named as ``bench/upstream.mjs`` names its own.

Each axis is a place where the cost of one call once grew faster than its input: arguments nested deep, an
``items`` chain (schema and value as deep), a wide output schema (registration and the first call), and a value
that is invalid or not lossless JSON where the valid one is cheap. A figure is seconds: the median of ``runs``
timed runs after a warm-up.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import statistics
import time
from collections.abc import Callable
from typing import Any, Final

from data import generate, schema

from toolcanon import Call, Output, Registry, ToolDefinition, define_tool

ARGUMENT_DEPTHS: Final = (10_000, 100_000)
CHAIN_DEPTHS: Final = (5_000, 40_000)
# the same axis from just past the closures' reach (a schema taller than 100 takes the iterative engine) upwards
LOWER_CHAIN_DEPTHS: Final = (2_000, 20_000)
# the original's validation of an items chain grows with the square of its depth (one execute of a
# 5,000-deep chain takes it about a minute), so the side-by-side figures use shorter chains
SHORT_CHAIN_DEPTHS: Final = (500, 1_000)
WIDTHS: Final = (10_000, 100_000)

Figures = dict[str, float]


def median_of(function: Callable[[], Any], runs: int, warmup: int = 1) -> float:
    """Median wall time of ``function()`` over ``runs`` runs after ``warmup`` untimed runs."""
    for _ in range(warmup):
        function()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def _summary(args: Any, value: Any) -> list[dict[str, str]]:
    return [{"type": "text", "text": "summary"}]


def register_returning(registry: Registry, name: str, raw_schema: Any, holder: dict[str, Any]) -> None:
    """Register a raw tool ``name`` whose body returns ``holder["value"]``."""
    registry.register(
        ToolDefinition(
            name=name,
            description="Return the benchmark value.",
            parameters={"type": "object"},
            output=Output(raw_schema, _summary),
            execute=lambda args, run: holder["value"],
        )
    )


def execute(registry: Registry, name: str, arguments: Any = None) -> Any:
    """One call of ``name`` through the whole pipeline, in a fresh event loop."""
    return asyncio.run(registry.execute(Call("bench", name, {} if arguments is None else arguments)))


def execute_ok(registry: Registry, name: str, arguments: Any = None) -> Any:
    result = execute(registry, name, arguments)
    assert not result.is_error, result.error.message
    return result


def execute_rejected(registry: Registry, name: str) -> Any:
    result = execute(registry, name)
    assert result.is_error, f"{name}: the value was accepted"
    return result


def nested(depth: int) -> Any:
    """``"leaf"`` inside ``depth`` one-item arrays."""
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def items_chain(depth: int) -> dict[str, Any]:
    """``depth`` array schemas, each the ``items`` of the one above, around a string schema."""
    chain: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        chain = {"type": "array", "items": chain}
    return chain


def wide_schema(count: int, run: int) -> dict[str, Any]:
    """A closed object schema of ``count`` required integer properties, its text distinct for each ``run``."""
    properties = {f"p{index}": {"type": "integer"} for index in range(count)}
    # a text never seen before: the reference compiles each distinct schema text once
    return {
        "type": "object",
        "description": f"run {run}",
        "additionalProperties": False,
        "properties": properties,
        "required": list(properties),
    }


def wide_value(count: int) -> dict[str, int]:
    return {f"p{index}": index for index in range(count)}


def broken_copies(value: list[Any]) -> tuple[list[Any], list[Any]]:
    """The value made invalid (``tier`` 7) and not lossless (``score`` NaN) in its last record; fresh copies."""
    invalid, not_lossless = generate(), generate()
    assert len(invalid) == len(value)
    invalid[-1]["tier"] = 7
    not_lossless[-1]["score"] = math.nan
    return invalid, not_lossless


def trivial_registry() -> Registry:
    """The echo tool: the smallest call through the whole pipeline."""

    def render(args: Any, value: Any) -> list[dict[str, str]]:
        return [{"type": "text", "text": value}]

    registry = Registry()
    registry.register(
        define_tool(
            name="echo",
            description="",
            parameters={"text": {"type": "string"}},
            output=Output({"type": "string"}, render),
            execute=lambda args, run: args["text"],
        )
    )
    return registry


def per_call(registry: Registry, calls: int, runs: int) -> float:
    """Seconds per call of ``calls`` echo calls in a row in one event loop (median over ``runs``)."""
    call = Call("c", "echo", {"text": "hi"})

    async def loop() -> None:
        execute_call = registry.execute
        for _ in range(calls):
            await execute_call(call)

    return median_of(lambda: asyncio.run(loop()), runs) / calls


def trivial(runs: int, calls: int) -> Figures:
    return {"trivial call": per_call(trivial_registry(), calls, runs)}


def bench_value(runs: int) -> Figures:
    """One execute of the benchmark value; the same value invalid, and not lossless, in its last record."""
    value = generate()
    holder = {"value": value}
    registry = Registry()
    register_returning(registry, "records", schema(), holder)
    figures = {"execute": median_of(lambda: execute_ok(registry, "records"), runs)}
    invalid, not_lossless = broken_copies(value)
    for name, broken in (("execute invalid", invalid), ("execute not lossless", not_lossless)):
        holder["value"] = broken
        figures[name] = median_of(lambda: execute_rejected(registry, "records"), runs)
    return figures


def arguments(runs: int) -> Figures:
    """Calls whose arguments are nested deep, through a tool that ignores them."""
    registry = Registry()
    register_returning(registry, "ignore", {"type": "string"}, {"value": "ok"})
    figures = {}
    for depth in ARGUMENT_DEPTHS:
        call_arguments = {"nested": nested(depth)}
        figures[f"arguments {depth}"] = median_of(
            lambda call_arguments=call_arguments: execute_ok(registry, "ignore", call_arguments), runs
        )
    return figures


def chains(runs: int, depths: tuple[int, ...] = CHAIN_DEPTHS) -> Figures:
    """One execute of a tool whose schema is an ``items`` chain and whose value is nested as deep."""
    figures = {}
    for depth in depths:
        registry = Registry()
        register_returning(registry, "chain", items_chain(depth), {"value": nested(depth)})
        figures[f"items {depth}"] = median_of(lambda registry=registry: execute_ok(registry, "chain"), runs)
    return figures


def rebuild(value: Any) -> Any:
    """Walk down a nesting of one-item arrays and build it again: a copy's reads and allocations, no checks."""
    spine = []
    while type(value) is list:
        spine.append(value)
        value = value[0]
    for _ in spine:
        value = [value]
    return value


def without_collection(function: Callable[[], Any]) -> Callable[[], Any]:
    """``function`` run with the cyclic collector off, as the walks it is compared with run."""

    def paused() -> Any:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return function()
        finally:
            if enabled:
                gc.enable()

    return paused


def baselines(runs: int) -> Figures:
    """The same sizes through code that checks nothing, to tell the memory hierarchy from our walks' own growth.

    ``rebuild N``: a nesting ``N`` deep rebuilt (collector off, as our deep walks run); ``json schema N`` and
    ``json value N``: the wide schema and its value through ``json.loads(json.dumps(...))``.
    """
    figures = {}
    for depth in sorted({*ARGUMENT_DEPTHS, *CHAIN_DEPTHS, *LOWER_CHAIN_DEPTHS}):
        value = nested(depth)
        figures[f"rebuild {depth}"] = median_of(without_collection(lambda value=value: rebuild(value)), runs)
    for count in WIDTHS:
        raw_schema, value = wide_schema(count, 0), wide_value(count)
        figures[f"json schema {count}"] = median_of(lambda data=raw_schema: json.loads(json.dumps(data)), runs)
        figures[f"json value {count}"] = median_of(lambda data=value: json.loads(json.dumps(data)), runs)
    return figures


def wide(runs: int) -> Figures:
    """Registering a wide output schema (a text never seen before), then its first call."""
    figures = {}
    for count in WIDTHS:
        value = wide_value(count)
        registrations, first_calls = [], []
        for run in range(runs + 1):  # run 0 is the warm-up
            registry = Registry()
            raw_schema = wide_schema(count, run)
            started = time.perf_counter()
            register_returning(registry, "wide", raw_schema, {"value": value})
            registration = time.perf_counter() - started
            started = time.perf_counter()
            execute_ok(registry, "wide")
            first_call = time.perf_counter() - started
            if run:
                registrations.append(registration)
                first_calls.append(first_call)
        figures[f"register {count}"] = statistics.median(registrations)
        figures[f"first call {count}"] = statistics.median(first_calls)
    return figures
