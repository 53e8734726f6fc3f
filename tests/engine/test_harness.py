"""Checks of the differential harness itself (no lgnb needed)."""

import uuid

import pytest

import _diff
from _diff import DifferentialMismatch, Normalizer, compare, normalize


def test_distinct_ids_map_to_placeholders_by_first_appearance():
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    assert normalize([a, b, a]) == ["<id1>", "<id2>", "<id1>"]


def test_same_id_twice_is_still_checked():
    a, b, c = (str(uuid.uuid4()) for _ in range(3))
    compare([a, a], [b, b])
    with pytest.raises(DifferentialMismatch):
        compare([a, a], [b, c])


def test_hex_task_ids_run_ids_and_namespaces_are_normalized():
    n = Normalizer()
    hex_id = "0123456789abcdef0123456789abcdef"
    assert n(hex_id) == "<id1>"
    assert n("lc_run--" + str(uuid.uuid4())) == "<id2>"
    assert n({"checkpoint_ns": f"sub:{hex_id}|inner:xyz"}) == {"checkpoint_ns": "sub:<id1>|inner:<id3>"}
    assert n({"ns": ("sub:anything-goes",)}) == {"ns": ("sub:<id4>",)}


def test_timestamps_are_normalized_but_plain_values_are_not():
    n = Normalizer()
    assert n({"timestamp": "2026-01-01T00:00:00.123+00:00", "step": 3}) == {"timestamp": "<ts>", "step": 3}
    assert n("2026-01-01T00:00:00+00:00") == "<ts>"
    assert n("[debug] {'timestamp': '2026-01-01T00:00:00.5+00:00'}") == "[debug] {'timestamp': '<ts>'}"
    assert n({"id": "user-chosen"}) == {"id": "user-chosen"}  # not a task-like dict


def test_task_payload_ids_normalized_whatever_their_format():
    n = Normalizer()
    assert n({"id": "t1", "name": "a", "input": {}, "triggers": ()}) == {
        "id": "<id1>", "name": "a", "input": {}, "triggers": ()}
    assert n({"id": "t1", "name": "a", "error": None, "result": {}, "interrupts": []})["id"] == "<id1>"


def test_engine_objects_normalize_by_class_name():
    from langgraph.types import Command, Interrupt, Send

    n = Normalizer()
    assert n(Send("x", {"a": 1})) == ("Send", "x", {"a": 1})
    assert n(Command(goto="x")) == ("Command", None, None, None, "x")
    assert n(Interrupt(value=1, id="abc")) == ("Interrupt", 1, "<id1>")


def test_exceptions_compare_full_or_class_only():
    ref = ("raises", "ValueError", "one wording")
    cand = ("raises", "ValueError", "another wording")
    with pytest.raises(DifferentialMismatch):
        compare(ref, cand)
    compare(ref, cand, exc="class")
    with pytest.raises(DifferentialMismatch):
        compare(ref, ("raises", "TypeError", "one wording"), exc="class")


def test_mismatch_message_is_a_readable_diff():
    with pytest.raises(DifferentialMismatch) as info:
        compare({"a": [1, 2]}, {"a": [1, 3]}, cand_label="lgnb")
    assert "--- langgraph" in str(info.value) and "+++ lgnb" in str(info.value)


def test_selftest_flag_swaps_candidate(monkeypatch):
    monkeypatch.setenv("LGNB_DIFF_SELFTEST", "1")
    assert _diff.candidate_engine().root == "langgraph"
    monkeypatch.setenv("LGNB_DIFF_SELFTEST", "0")
    assert _diff.candidate_engine().root == "lgnb"


def test_missing_engine_name_is_not_captured_as_observable():
    e = _diff.Engine("lgnb_does_not_exist_pkg")

    def scenario(E):
        return E.StateGraph

    with pytest.raises(_diff.EngineMissing):
        _diff.run_scenario(scenario, e)


def test_multiset_grouping_ignores_id_values():
    chunks = [("values", 1), ("tasks", {"id": "zz", "name": "b", "result": 1}),
              ("tasks", {"id": "aa", "name": "a", "result": 1}), ("values", 2)]
    grouped = _diff.steps_as_multisets(chunks, lambda c: c[0] == "values")
    assert [c[1]["name"] for c in grouped[1][1]] == ["a", "b"]


def test_namespace_tuples_normalized_whatever_the_task_id_format():
    n = Normalizer()
    assert n((("sub:task-0001", "inner:task-0002"), "updates", {})) == (
        ("sub:<id1>", "inner:<id2>"), "updates", {})
    assert n({"value": 1, "id": "i-1", "response_schema": None})["id"] == "<id3>"
