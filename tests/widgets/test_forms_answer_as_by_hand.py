"""A form's answer is what a user resuming by hand would pass to `Command(resume=...)`.

- An edited call carries what the reviewer changed and the call's own arguments: an
  optional argument the model did not send, left empty or at its default, is left out
  (the tool gets its own default), not sent as `""` or the schema's default.
- An Edit sent unchanged gives back the call's arguments exactly: an integer past a
  browser number's precision, a string in a JSON (union-typed) field, a list with an
  empty item.
- A pick among a payload's options resumes with the option itself (an enum member, a
  tuple), not its JSON copy.
- A HITL "Respond" needs text: an empty one would reach the model as an empty tool result.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest
from test_forms import answer, one_node

from lgnb.widgets import run
from lgnb.widgets._forms import FormInvalid, form_for, parse_inputs, schema_inputs


def test_an_optional_argument_the_model_did_not_send_is_left_out_when_left_as_shown() -> None:
    schema = {"type": "object", "required": ["to"], "properties": {
        "to": {"type": "string"}, "cc": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "urgent": {"type": "boolean", "default": False}, "copies": {"type": "integer", "default": 1}}}
    inputs = schema_inputs(schema, {"to": "bob"})
    raw = {"to": "alice", "cc": "", "urgent": False, "copies": "1"}  # what the page sends back
    assert parse_inputs(inputs, raw) == {"to": "alice"}
    changed = {"to": "alice", "cc": "carol", "urgent": True, "copies": "2"}
    assert parse_inputs(inputs, changed) == {"to": "alice", "cc": "carol", "urgent": True, "copies": 2}
    # the call's own arguments stay, even when equal to a default
    given = schema_inputs(schema, {"to": "bob", "urgent": False, "cc": ""})
    assert parse_inputs(given, {"to": "bob", "cc": "", "urgent": False, "copies": "1"}) == {
        "to": "bob", "cc": "", "urgent": False}


def test_an_edit_sent_unchanged_gives_back_the_calls_arguments_exactly() -> None:
    schema = {"type": "object", "properties": {
        "channel_id": {"type": "integer"}, "value": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "tags": {"type": "array", "items": {"type": "string"}}}}
    args = {"channel_id": 1234567890123456789, "value": "abc", "tags": ["x", "", "y, z"]}
    inputs = schema_inputs(schema, args)
    # what the page shows and sends back untouched (a JS number loses the last digits)
    raw = {"channel_id": "1234567890123456800", "value": "abc", "tags": "x\n\ny, z"}
    assert parse_inputs(inputs, raw) == args
    with pytest.raises(FormInvalid):  # typed by hand, a JSON field still needs JSON
        parse_inputs(inputs, {**raw, "value": "abd"})


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@pytest.mark.parametrize("options, picked", [(list(Color), Color.BLUE), ([(1, 2), (3, 4)], (3, 4))],
                         ids=["enum", "tuple"])
def test_a_pick_among_options_resumes_with_the_option_itself(eng: Any, options: list, picked: Any) -> None:
    got = []

    def ask(state: Any) -> Any:
        got.append(eng.interrupt({"question": "Pick one", "options": options}))
        return {"messages": [("ai", "picked")]}

    r = run(one_node(eng, ask), {"messages": []}, display=False)
    r.wait(timeout=30)
    (form,) = r.view.forms
    assert form["kind"] == "options"
    assert answer(r, form["id"], [{"part": 0, "choice": "1", "inputs": {}}])["ok"]
    r.wait(timeout=30)
    assert r.status == "done" and got[-1] == picked and type(got[-1]) is type(picked)


def test_a_hitl_respond_needs_text() -> None:
    value = {"action_requests": [{"name": "search", "args": {"q": "x"}, "description": ""}],
             "review_configs": [{"action_name": "search", "allowed_decisions": ["approve", "respond"]}]}
    from lgnb.widgets._forms import answer_for

    interrupt = {"id": "i", "value": value}
    assert form_for(interrupt)["kind"] == "hitl"
    with pytest.raises(FormInvalid, match="a response is needed"):
        answer_for(interrupt, [{"part": 0, "choice": "respond", "inputs": {"__message": "  "}}])
    decision, _ = answer_for(interrupt, [{"part": 0, "choice": "respond", "inputs": {"__message": "done"}}])
    assert decision == {"decisions": [{"type": "respond", "message": "done"}]}


