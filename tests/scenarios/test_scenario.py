"""The scenario framework itself: parts and their expectations, events, names, the catalogue."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.scenarios import runner
from lab.scenarios.checker import Processed, Produced, Verdict, check
from lab.scenarios.scenario import ANOMALIES, Check, Context, Part

PRODUCED = [Produced("t", 0, o) for o in range(4)]


def verdict_with(*anomalies: str) -> Verdict:
    """A verdict showing exactly `anomalies`, one entry each, as the checker would write them."""
    entries = {"lost": ("g", "t", 0, 3), "duplicated": ("g", "t", 0, 1, 2),
               "out_of_order": ("g", "c", "t", 0, 2, 1), "skipped": ("g", "c", "t", 0, 0, 2)}
    return Verdict(groups=["g"], **{kind: [entries[kind]] for kind in anomalies})  # type: ignore[arg-type]


def test_the_checker_and_the_parts_agree_on_a_real_history() -> None:
    # offset 1 twice in one session (duplicated, and not above the one before it), offset 3 never
    verdict = check(PRODUCED, [Processed("g", "c", "t", 0, o) for o in (0, 1, 1, 2)])
    everything = frozenset({"duplicated", "lost", "out_of_order"})
    assert Part("p", expect=everything, verdict=verdict).as_expected
    assert not Part("p", expect=frozenset({"duplicated", "lost"}), verdict=verdict).as_expected
    assert Part("p", verdict=verdict).totals() == {"lost": 1, "duplicated": 1, "out_of_order": 1, "skipped": 0}


def test_a_part_is_as_expected_only_with_exactly_its_anomalies() -> None:
    assert Part("clean", verdict=verdict_with()).as_expected
    assert Part("dup", expect=frozenset({"duplicated"}), verdict=verdict_with("duplicated")).as_expected
    assert not Part("dup", expect=frozenset({"duplicated"}), verdict=verdict_with()).as_expected
    assert not Part("dup", expect=frozenset({"duplicated"}), verdict=verdict_with("duplicated", "lost")).as_expected
    assert not Part("clean", verdict=verdict_with("lost")).as_expected


@given(st.sets(st.sampled_from(ANOMALIES)), st.sets(st.sampled_from(ANOMALIES)))
def test_shown_anomalies_are_the_verdicts(expected: set[str], shown: set[str]) -> None:
    part = Part("p", expect=frozenset(expected), verdict=verdict_with(*shown))
    assert part.shown() == shown
    assert part.as_expected == (expected == shown)


def test_a_failed_check_fails_the_part_and_unknown_anomalies_are_refused() -> None:
    assert not Part("p", checks=[Check("a", True), Check("b", False)]).as_expected
    with pytest.raises(ValueError, match="unknown anomalies"):
        Part("p", expect=frozenset({"reordered"}))


def test_events_names_and_checks_of_a_context(kafka_bootstrap: str, tmp_path: Path) -> None:
    seen = []
    ctx = Context("demo", kafka_bootstrap, backend="embedded", workdir=tmp_path, on_event=seen.append, run_id="r1")
    ctx.step("first")
    passed = ctx.check("it holds", True, "1 = 1")
    assert passed == Check("it holds", True, "1 = 1")
    assert [(e.kind, e.text) for e in seen] == [("step", "first"), ("check", "ok: it holds (1 = 1)")]
    with pytest.raises(ValueError, match="unknown event kind"):
        ctx.emit("gossip", "x")
    topic = ctx.topic("orders", 2)
    assert topic == "lab-demo-orders-r1" and ctx.short(topic) == "orders" and ctx.short("other") == "other"
    assert ctx.close() == []


def test_the_catalogue_loads_every_scenario_under_its_own_name() -> None:
    for name in runner.names():
        assert runner.get(name).name == name
    with pytest.raises(runner.UnknownScenario, match="choose one of group-scale"):
        runner.get("nope")
