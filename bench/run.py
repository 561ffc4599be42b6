"""Benchmarks: normalization, scaling, the cliffs, dispatch overhead, suite throughput, and the original beside us.

Every figure is the median of at least five timed runs after a warm-up, measured in this one process on the
same data; the original's figures come from Node in the same run (``bench/upstream.mjs``). Run with
``nox -s bench`` (``--quick`` for a shorter run with fewer repetitions).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import json
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).parent))

import itertools

import axes
import original
from data import RECORDS, SHA256, generate, schema, sha256_of

from toolcanon import Call, Output, Registry, ToolDefinition
from toolcanon.decisions import Accept, Allow
from toolcanon.jsonvalue import canonical_json, snapshot_json
from toolcanon.result import DispatchToken
from toolcanon.schema import compile_validator

Row = tuple[str, float, str]


median_time = axes.median_of


def count_nodes(value: Any) -> int:
    """Every JSON value is a node, the root included."""
    count, stack = 0, [value]
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def render_summary(args: Any, value: Any) -> list[dict[str, str]]:
    """A renderer that reads the value lightly, as a real summary would."""
    return [{"type": "text", "text": f"{len(value)} records"}]


def bench_registry(raw_schema: Any) -> Registry:
    registry = Registry()
    holder: dict[str, Any] = {}
    registry.register(
        ToolDefinition(
            name="records",
            description="Return the benchmark value.",
            parameters={"type": "object"},
            output=Output(raw_schema, render_summary),
            execute=lambda args, run: holder["value"],
        )
    )
    registry.holder = holder  # type: ignore[attr-defined]
    return registry


def execute_once(registry: Registry, value: Any) -> Any:
    registry.holder["value"] = value  # type: ignore[attr-defined]
    result = asyncio.run(registry.execute(Call("bench", "records", {})))
    assert not result.is_error, result.error.message  # type: ignore[union-attr]
    return result


def normalization(runs: int) -> list[Row]:
    """Throughput on the large value, with its baselines measured in the same run."""
    value = generate()
    digest = sha256_of(value)
    assert digest == SHA256, f"benchmark value differs from bench-data.md: {digest}"
    raw_schema = schema()
    validator = compile_validator(raw_schema)
    registry = bench_registry(raw_schema)
    frozen = snapshot_json(value)
    rows: list[Row] = []

    def add(label: str, seconds: float, note: str = "") -> float:
        rows.append((label, seconds, note))
        return seconds

    add("snapshot (lossless check + frozen copy)", median_time(lambda: snapshot_json(value), runs))
    add("validation (compiled subset validator)", median_time(lambda: validator.violations(frozen), runs))
    add("freeze (frozen copy of a snapshot)", median_time(lambda: snapshot_json(frozen), runs))
    whole = add("whole normalization: one execute", median_time(lambda: execute_once(registry, value), runs))
    roundtrip = add("baseline json.loads(json.dumps(v))", median_time(lambda: json.loads(json.dumps(value)), runs))
    add("baseline copy.deepcopy(v)", median_time(lambda: copy.deepcopy(value), runs))
    import jsonschema

    draft2020 = jsonschema.Draft202012Validator(raw_schema)
    slow = add(
        "baseline jsonschema Draft 2020-12 is_valid", median_time(lambda: draft2020.is_valid(value), max(runs, 5))
    )
    fast: float | None = None
    try:
        import fastjsonschema
        import orjson
    except ImportError:
        rows.append(("baseline orjson / fastjsonschema", float("nan"), "install the bench extra"))
    else:
        add("baseline orjson round trip", median_time(lambda: orjson.loads(orjson.dumps(value)), runs))
        draft07 = fastjsonschema.compile({"$schema": "http://json-schema.org/draft-07/schema#", **raw_schema})
        fast = add("baseline fastjsonschema draft-07 validate", median_time(lambda: draft07(value), runs))
    rows.append(("ratio execute / fastjsonschema (target <= 0.75)", whole / fast if fast else float("nan"), "ratio"))
    rows.append(("ratio jsonschema / execute (target >= 15)", slow / whole, "ratio"))
    rows.append(("ratio execute / json round trip", whole / roundtrip, "ratio"))
    return rows


def scaling(runs: int) -> list[Row]:
    """Time per node across sizes, a 100,000-deep value, and peak memory against the value's own size."""
    raw_schema = schema()
    registry = bench_registry(raw_schema)
    rows: list[Row] = []
    per_node: dict[int, float] = {}
    for records in (RECORDS // 100, RECORDS // 10, RECORDS, RECORDS * 4):
        value = generate(records)
        nodes = count_nodes(value)
        seconds = median_time(lambda value=value: execute_once(registry, value), runs if records <= RECORDS else 5)
        per_node[records] = seconds / nodes
        rows.append((f"execute {records:,} records ({nodes:,} nodes)", seconds, f"{seconds / nodes * 1e9:.0f} ns/node"))
    sizes = sorted(per_node)
    worst = max(per_node[b] / per_node[a] for a, b in itertools.pairwise(sizes))
    rows.append(("ratio worst per-node growth between sizes (target <= 1.1)", worst, "ratio"))
    # the same growth for C-level copies, to tell the machine's memory hierarchy from the walk's own cost
    small, large = generate(RECORDS // 10), generate(RECORDS)
    baselines: list[tuple[str, Callable[[Any], Any]]] = [
        ("json.loads(json.dumps(v))", lambda v: json.loads(json.dumps(v))),
        ("copy.deepcopy(v)", copy.deepcopy),
    ]
    for label, copy_of in baselines:
        per_small = median_time(lambda copy_of=copy_of: copy_of(small), 5) / count_nodes(small)
        per_large = median_time(lambda copy_of=copy_of: copy_of(large), 5) / count_nodes(large)
        rows.append((f"ratio per-node growth 2,800 → 28,000 records, baseline {label}", per_large / per_small, "ratio"))

    deep: Any = "leaf"
    for _ in range(100_000):
        deep = [deep]
    any_json = bench_registry({})
    rows.append(("execute a 100,000-deep nested value", median_time(lambda: execute_once(any_json, deep), 5), ""))

    gc.collect()
    tracemalloc.start()
    value = generate()
    own_size, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    before, _ = tracemalloc.get_traced_memory()
    result = execute_once(registry, value)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    ratio = (peak - before) / own_size
    rows.append(("peak memory of one execute / value's own size (target <= 3)", ratio, "ratio"))
    return rows


def dispatch(runs: int, calls: int) -> list[Row]:
    """Per-call overhead of a trivial tool, with and without hooks, against the bare contract steps."""

    def render(args: Any, value: Any) -> list[dict[str, str]]:
        return [{"type": "text", "text": value}]

    def body(args: Any, run: Any) -> str:
        return args["text"]

    def per_call(registry: Registry) -> float:
        return axes.per_call(registry, calls, runs)

    plain = axes.trivial_registry()
    hooked = axes.trivial_registry()

    async def pre(run: Any, nxt: Any) -> Any:
        return await nxt()

    async def around(run: Any, nxt: Any) -> Any:
        return await nxt()

    async def post(run: Any, result: Any, nxt: Any) -> Any:
        return await nxt()

    hooked.on_pre_execute(pre)
    hooked.add_guard(lambda run: None)
    hooked.on_execute(around)
    hooked.on_post_execute(post)
    hooked.on_result(lambda run, result: None)
    replacing = axes.trivial_registry()
    replacing.on_post_execute(lambda run, result, nxt: Accept(value="replaced"))

    validator = compile_validator({"type": "string"})

    def bare_steps() -> None:
        for _ in range(calls):
            arguments = snapshot_json({"text": "hi"})
            value = snapshot_json(body(arguments, None))
            if validator.violations(value, "value"):
                raise AssertionError
            content = snapshot_json(render(arguments, value))
            bound = {id(content): DispatchToken()}
            del bound

    def direct() -> None:
        arguments = {"text": "hi"}
        for _ in range(calls):
            render(arguments, body(arguments, None))

    rows: list[Row] = [
        ("pipeline, no hooks", per_call(plain), "per call"),
        ("pipeline, one hook of each kind", per_call(hooked), "per call"),
        ("pipeline, post-execute value replacement", per_call(replacing), "per call"),
        ("baseline body + render called directly", median_time(direct, runs) / calls, "per call"),
        ("baseline bare contract steps", median_time(bare_steps, runs) / calls, "per call"),
    ]
    rows.append(("ratio no hooks / bare steps", rows[0][1] / rows[4][1], "ratio"))
    _ = Allow
    return rows


# Linear growth: per unit, no more than 1.25 times the growth of code that checks nothing on the same sizes (the
# machine's memory hierarchy alone makes a copy of a 100,000-deep nesting dearer per level than a 10,000-deep one).
GROWTH_TARGET = 1.25


def cliffs(runs: int) -> list[Row]:
    """Where one call's cost once grew faster than its input: cost per unit at two sizes, and invalid values."""
    figures = {
        **axes.arguments(runs),
        **axes.chains(runs, axes.LOWER_CHAIN_DEPTHS),
        **axes.chains(runs),
        **axes.wide(runs),
        **axes.bench_value(runs),
    }
    base = axes.baselines(runs)
    rows: list[Row] = []

    def axis(label: str, name: str, sizes: tuple[int, ...], unit: str, baseline: tuple[str, str]) -> None:
        scale = 1e9 if unit == "level" else 1e6
        per_unit = [figures[f"{name} {size}"] / size for size in sizes]
        for size, cost in zip(sizes, per_unit, strict=True):
            shown = f"{cost * scale:,.2f} {'ns' if unit == 'level' else 'µs'}/{unit}"
            rows.append((label.format(size=f"{size:,}"), figures[f"{name} {size}"], shown))
        growth = per_unit[-1] / per_unit[0]
        base_name, base_label = baseline
        base_growth = (base[f"{base_name} {sizes[-1]}"] / sizes[-1]) / (base[f"{base_name} {sizes[0]}"] / sizes[0])
        span = f"{sizes[0]:,} → {sizes[-1]:,}"
        rows.append((f"ratio per-{unit} growth {span}", growth, "ratio"))
        rows.append((f"ratio per-{unit} growth {span}, baseline {base_label}", base_growth, "ratio"))
        rows.append((f"ratio of the two growths (target <= {GROWTH_TARGET})", growth / base_growth, "ratio"))

    rebuilt = ("rebuild", "rebuilding the nesting")
    axis("execute with arguments nested {size} deep", "arguments", axes.ARGUMENT_DEPTHS, "level", rebuilt)
    chain = "execute an items chain {size} deep (schema and value)"
    axis(chain, "items", axes.LOWER_CHAIN_DEPTHS, "level", rebuilt)
    axis(chain, "items", axes.CHAIN_DEPTHS, "level", rebuilt)
    schema_copy = ("json schema", "json.loads(json.dumps(schema))")
    axis("register an output schema of {size} properties", "register", axes.WIDTHS, "property", schema_copy)
    value_copy = ("json value", "json.loads(json.dumps(value))")
    axis("its first call, {size} properties", "first call", axes.WIDTHS, "property", value_copy)
    valid = figures["execute"]
    rows.append(("execute the benchmark value, valid", valid, ""))
    rows.append(("the same, invalid in its last record", figures["execute invalid"], ""))
    rows.append(("the same, not lossless JSON in its last record", figures["execute not lossless"], ""))
    rows.append(("ratio invalid / valid (target <= 2)", figures["execute invalid"] / valid, "ratio"))
    rows.append(("ratio not lossless / valid (target <= 2)", figures["execute not lossless"] / valid, "ratio"))
    return rows


ComparisonRow = tuple[str, float, float, str, float]
"""A label, our figure, the original's, the unit, and the median of the rounds' original / ours."""


# What each group of bench/upstream.mjs measures, as we measure it: each group is timed on our side right after
# the original's, so that both sides of a ratio meet the machine in the same state.
OUR_GROUPS: Final[dict[str, Callable[[int, int], axes.Figures]]] = {
    "trivial": lambda runs, calls: axes.trivial(runs, calls),
    "value": lambda runs, calls: axes.bench_value(runs),
    "arguments": lambda runs, calls: axes.arguments(runs),
    "items": lambda runs, calls: axes.chains(runs, axes.SHORT_CHAIN_DEPTHS),
    "wide": lambda runs, calls: axes.wide(runs),
}


def upstream(runs: int, calls: int, rounds: int) -> str:
    """The original measured live on the same inputs, each group in turn with ours, ``rounds`` times: the
    figures are medians over the rounds, and each ratio the median of the rounds' ratios."""
    reason = original.unavailable()
    if reason is not None:
        return f"## upstream\n\n(the original is not measured: {reason})"
    node = ""
    samples: dict[str, list[tuple[float, float]]] = {}
    for _ in range(rounds):
        for group, measure in OUR_GROUPS.items():
            node, theirs = original.measure(min(runs, 5), min(calls, 2_000), (group,))
            ours = measure(runs, calls)
            missing = set(theirs) - set(ours)
            assert not missing, f"the original reported figures we do not measure: {missing}"
            for name, seconds in theirs.items():
                samples.setdefault(name, []).append((ours[name], seconds))

    def median_of(name: str, side: int) -> float:
        return statistics.median(pair[side] for pair in samples[name])

    def ratio_of(name: str) -> float:
        return statistics.median(theirs / ours for ours, theirs in samples[name])

    def growth_of(small: str, large: str, factor: float, side: int) -> float:
        pairs = zip(samples[small], samples[large], strict=True)
        return statistics.median(big[side] / little[side] / factor for little, big in pairs)

    rows: list[ComparisonRow] = []

    def same(label: str, name: str, unit: str = "ms") -> None:
        rows.append((label, median_of(name, 0), median_of(name, 1), unit, ratio_of(name)))

    def growth(label: str, small: str, large: str, factor: float) -> None:
        ours, theirs = growth_of(small, large, factor, 0), growth_of(small, large, factor, 1)
        rows.append((label, ours, theirs, "ratio", float("nan")))

    def of_valid(name: str, side: int) -> float:
        pairs = zip(samples[name], samples["execute"], strict=True)
        return statistics.median(broken[side] / valid[side] for broken, valid in pairs)

    same("a trivial call (per call)", "trivial call", "µs")
    same("one full execute of the benchmark value", "execute")
    same("the same, invalid in its last record", "execute invalid")
    same("the same, not lossless JSON in its last record", "execute not lossless")
    for name in ("execute invalid", "execute not lossless"):
        label = f"ratio {name.removeprefix('execute ')} / valid"
        rows.append((label, of_valid(name, 0), of_valid(name, 1), "ratio", float("nan")))
    for depth in axes.ARGUMENT_DEPTHS:
        same(f"execute with arguments nested {depth:,} deep", f"arguments {depth}")
    growth("ratio per-level growth, arguments 10,000 → 100,000 deep", "arguments 10000", "arguments 100000", 10)
    for depth in axes.SHORT_CHAIN_DEPTHS:
        same(f"execute an items chain {depth:,} deep", f"items {depth}")
    growth("ratio per-level growth, items chain 500 → 1,000 deep", "items 500", "items 1000", 2)
    for count in axes.WIDTHS:
        same(f"register an output schema of {count:,} properties", f"register {count}")
        same(f"its first call, {count:,} properties", f"first call {count}")
    growth("ratio per-property growth of registration, 10,000 → 100,000", "register 10000", "register 100000", 10)
    growth("ratio per-property growth of the first call, 10,000 → 100,000", "first call 10000", "first call 100000", 10)
    title = f"upstream (the original on Node {node}, each group in turn with ours, {rounds} round(s), medians)"
    return format_comparison(title, rows)


def format_comparison(title: str, rows: list[ComparisonRow]) -> str:
    lines = [f"## {title}", "", "| measurement | ours | original | original / ours |", "|---|---:|---:|---:|"]
    for label, ours, theirs, unit, ratio in rows:
        if unit == "ratio":
            lines.append(f"| {label} | {ours:.2f}× | {theirs:.2f}× | |")
            continue
        scale = 1e6 if unit == "µs" else 1e3
        lines.append(f"| {label} | {ours * scale:,.2f} {unit} | {theirs * scale:,.2f} {unit} | {ratio:.2f}× |")
    return "\n".join(lines)


def judge_million_keys(runs: int) -> Row:
    """Judging a transcript of a million keys that differs from its golden at the last one (linear: the target)."""
    from toolcanon_conformance.runner import judge

    keys = 1_000_000
    members = ",".join(f'"c{index}":{index}' for index in range(keys))
    golden = ('{"formatVersion":1,"scenario":"s","steps":{' + members + "}}").encode()
    transcript = golden.decode().replace(f'"c{keys - 1}":{keys - 1}', f'"c{keys - 1}":-1')
    seconds = median_time(lambda: judge({"id": "s"}, transcript, golden), min(runs, 3), warmup=0)
    return (f"judge a {len(golden) / 1e6:.0f} MB transcript of 1,000,000 keys, one differing", seconds, "")


def suite(runs: int) -> list[Row]:
    """Scenarios per second through the kit's runner, in-process and through the subprocess adapter."""
    from toolcanon_conformance.adapters.inprocess import InProcess
    from toolcanon_conformance.adapters.subprocess import Subprocess
    from toolcanon_conformance.locations import goldens_dir
    from toolcanon_conformance.runner import golden_directory, run_suite
    from toolcanon_conformance.scenario import load_scenarios

    scenarios = [scenario.data for scenario in load_scenarios()]
    goldens = golden_directory(goldens_dir())
    command = f"{sys.executable} -m toolcanon_conformance.adapters.reference"

    def run(make: Callable[[], Any]) -> Any:
        result = run_suite(make(), scenarios, goldens)
        # a scenario needing a capability the reference does not declare is skipped, not failed
        failing = [item for item in result.results if item.status in ("failed", "errored")]
        assert not failing, f"{len(failing)} scenario(s) failed or errored"
        return result

    def start_and_stop() -> None:
        adapter = Subprocess(command)
        adapter.start()
        adapter.stop()

    in_process = median_time(
        lambda: run(lambda: InProcess("toolcanon_conformance.adapters.reference:implementation")), runs
    )
    subprocess = median_time(lambda: run(lambda: Subprocess(command)), runs)
    start_up = median_time(start_and_stop, runs)
    count = len(scenarios)
    return [
        (f"suite in-process ({count} scenarios)", in_process, f"{count / in_process:,.0f} scenarios/s"),
        (
            f"suite through the subprocess adapter ({count} scenarios)",
            subprocess,
            f"{count / subprocess:,.0f} scenarios/s",
        ),
        ("ratio subprocess / in-process (target <= 1.5)", subprocess / in_process, "ratio"),
        ("subprocess adapter start-up alone (spawn, imports, handshake, stop)", start_up, ""),
        ("ratio subprocess without its start-up / in-process", (subprocess - start_up) / in_process, "ratio"),
        judge_million_keys(runs),
    ]


def format_rows(title: str, rows: list[Row]) -> str:
    lines = [f"## {title}", "", "| measurement | median | note |", "|---|---:|---|"]
    for label, seconds, note in rows:
        if note == "ratio":
            shown = f"{seconds:.2f}×"
        elif note == "per call":
            shown = f"{seconds * 1e6:.2f} µs"
        elif seconds != seconds:
            shown = "n/a"
        else:
            shown = f"{seconds * 1e3:.1f} ms"
        lines.append(f"| {label} | {shown} | {'' if note in ('ratio', 'per call') else note} |")
    return "\n".join(lines)


SECTIONS = ["normalization", "scaling", "cliffs", "dispatch", "suite", "fuzz", "upstream"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="five runs everywhere and fewer dispatch calls")
    parser.add_argument("--only", choices=SECTIONS, action="append")
    options = parser.parse_args(argv)
    runs = 5 if options.quick else 7
    calls = 5_000 if options.quick else 20_000
    sections = options.only or SECTIONS
    print(
        f"# toolcanon benchmarks — {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {time.strftime('%Y-%m-%d')}\n"
    )
    for section in sections:
        started = time.perf_counter()
        if section == "normalization":
            rows = normalization(runs)
        elif section == "scaling":
            rows = scaling(runs)
        elif section == "cliffs":
            rows = cliffs(runs)
        elif section == "dispatch":
            rows = dispatch(runs, calls)
        elif section == "suite":
            rows = suite(runs)
        elif section == "fuzz":
            import fuzz  # bench/fuzz.py: generated scenarios per second

            rows = fuzz.rows(runs, 200 if options.quick else 300)
        else:
            print(upstream(runs, calls, 1 if options.quick else 3))
            print(f"\n({section}: {time.perf_counter() - started:.0f} s)\n", flush=True)
            continue
        print(format_rows(section, rows))
        print(f"\n({section}: {time.perf_counter() - started:.0f} s)\n", flush=True)
    _ = canonical_json
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
