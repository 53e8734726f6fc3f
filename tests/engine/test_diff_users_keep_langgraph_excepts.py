"""A program ported to lgnb that kept LangGraph's `except` clauses (agent code written
against `langgraph.errors`, a library's retry wrapper) catches lgnb's errors with them:
once LangGraph is loaded, each lgnb error is also an instance of LangGraph's class of the
same name (`lgnb/_internal/langgraph_twins.py`)."""

from __future__ import annotations

import operator
import pickle
from typing import Annotated

import langgraph.errors as lg_errors
import pytest
from typing_extensions import TypedDict


class S(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def _loop(E):
    g = E.StateGraph(S)
    g.add_node("again", lambda s: {"n": s["n"] + 1})
    g.add_edge(E.START, "again")
    g.add_edge("again", "again")
    return g.compile()


def _clash(E):
    g = E.StateGraph(S)
    g.add_node("a", lambda s: {"n": 1})
    g.add_node("b", lambda s: {"n": 2})
    g.add_edge(E.START, "a")
    g.add_edge(E.START, "b")
    return g.compile()


def test_langgraphs_except_clauses_catch_the_recursion_limit_and_a_bad_update(differential):
    def scenario(E):
        caught = []
        try:
            _loop(E).invoke({"n": 0, "log": []}, {"recursion_limit": 5})
        except lg_errors.GraphRecursionError as e:
            caught.append(("recursion", type(e).__name__, str(e).splitlines()[0]))
        try:
            _clash(E).invoke({"n": 0, "log": []})
        except lg_errors.InvalidUpdateError as e:
            caught.append(("update", type(e).__name__))
        try:
            _loop(E).invoke(None)
        except lg_errors.EmptyInputError as e:
            caught.append(("empty", type(e).__name__))
        return caught

    differential(scenario)


@pytest.mark.parametrize("name", ["GraphRecursionError", "InvalidUpdateError", "EmptyInputError", "TaskNotFound"])
def test_an_lgnb_error_stays_lgnb_s_class_when_pickled_and_for_its_own_excepts(name):
    import lgnb.errors as errors

    cls = getattr(errors, name)
    e = cls("boom")
    assert isinstance(e, cls) and isinstance(e, getattr(lg_errors, name))
    assert type(e).__name__ == name and type(e).__module__ == "lgnb.errors"
    back = pickle.loads(pickle.dumps(e))
    assert isinstance(back, cls) and type(back).__name__ == name and back.args == ("boom",)
