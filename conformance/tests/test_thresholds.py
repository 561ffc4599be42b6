"""The kit's thresholds are the reference's: each constant the generator draws around is the one the engine uses."""

from __future__ import annotations

import inspect

from toolcanon import _fused, _schema_deep, jsonvalue, timeout
from toolcanon_conformance import thresholds
from toolcanon_conformance.thresholds import THRESHOLDS, side_of


def test_the_constants_are_the_references() -> None:
    assert thresholds.FAST_DEPTH == jsonvalue._FAST_DEPTH
    assert thresholds.FUSED_SCHEMA_DEPTH == _fused._MAX_SCHEMA_DEPTH
    assert thresholds.UNROLLED_PROPERTIES == _fused._UNROLLED_PROPERTIES
    assert thresholds.CLOSURE_HEIGHT == _schema_deep.CLOSURE_HEIGHT
    assert thresholds.MAX_TIMER_DELAY_MS == timeout.MAX_TIMER_DELAY_MS
    default = inspect.signature(_fused.FusedNormalization).parameters["threshold"].default
    assert default == thresholds.FUSED_THRESHOLD


def test_each_threshold_has_a_name_of_its_own() -> None:
    names = [threshold.name for threshold in THRESHOLDS]
    assert len(names) == len(set(names))


def test_a_measure_is_below_at_or_above_only_within_one_of_the_last() -> None:
    (depth,) = (threshold for threshold in THRESHOLDS if threshold.name == "snapshot-depth")
    assert depth.last_within == 401  # levels 0 to 400 below the root: 401 containers
    assert [side_of(measure, depth) for measure in (399, 400, 401, 402, 403)] == [None, "below", "at", "above", None]
    (budget,) = (threshold for threshold in THRESHOLDS if threshold.name == "timer-delay")
    assert side_of(2147483647.5, budget) == "above"
    assert side_of(2147483646.5, budget) == "below"


def test_the_fused_walk_switches_where_the_thresholds_say() -> None:
    # the first value whose root holds one item more than fused-items' last is normalized by the fused walk
    (items,) = (threshold for threshold in THRESHOLDS if threshold.name == "fused-items")
    within = _fused.FusedNormalization({"type": "array"})
    within.normalize(list(range(items.last_within)))
    assert within._normalizer is None
    past = _fused.FusedNormalization({"type": "array"})
    past.normalize(list(range(items.last_within + 1)))
    assert past._normalizer is not None
    # an array schema as deep as fused-schema-depth's last is fused, one level more is not
    (depth,) = (threshold for threshold in THRESHOLDS if threshold.name == "fused-schema-depth")
    schema: dict[str, object] = {"type": "integer"}
    for _ in range(depth.last_within):
        schema = {"type": "array", "items": schema}
    assert _fused.compile_normalizer(schema) is not None
    assert _fused.compile_normalizer({"type": "array", "items": schema}) is None
