"""lgnb's control-flow exceptions are caught by code written against LangGraph's classes
(`except langgraph.errors.GraphBubbleUp: raise` in LangChain's middleware), and stay lgnb's."""

from __future__ import annotations

import pickle
import subprocess
import sys

import langgraph.errors as lg_errors

from lgnb.errors import GraphBubbleUp, GraphDrained, GraphInterrupt, ParentCommand
from lgnb.types import Command, Interrupt


def _caught_by_langgraph_clause(exc: BaseException) -> str:
    try:
        raise exc
    except lg_errors.GraphBubbleUp:
        return "let through"
    except Exception:  # noqa: BLE001 - what a retry middleware does with everything else
        return "swallowed"


def test_an_interrupt_passes_a_clause_that_lets_langgraphs_signals_through() -> None:
    exc = GraphInterrupt((Interrupt(value="ok?", id="i1"),))
    assert _caught_by_langgraph_clause(exc) == "let through"
    assert isinstance(exc, lg_errors.GraphInterrupt) and isinstance(exc, GraphInterrupt)
    assert repr(exc).startswith("GraphInterrupt(") and exc.args[0][0].value == "ok?"


def test_a_parent_command_is_langgraphs_parent_command_too() -> None:
    exc = ParentCommand(Command(goto="billing", graph=Command.PARENT))
    assert isinstance(exc, lg_errors.ParentCommand) and exc.args[0].goto == "billing"
    assert _caught_by_langgraph_clause(exc) == "let through"


def test_other_bubble_ups_keep_their_own_arguments() -> None:
    exc = GraphDrained("shutdown")
    # (LangGraph's class of the same name: its ToolNode lets a drain through, as an interrupt)
    assert isinstance(exc, lg_errors.GraphDrained)
    assert str(exc) == "Graph drained: shutdown" and exc.reason == "shutdown"


def test_a_pickled_interrupt_comes_back_as_lgnbs() -> None:
    back = pickle.loads(pickle.dumps(GraphInterrupt((Interrupt(value=1, id="i"),))))
    assert isinstance(back, GraphInterrupt) and back.args[0][0].id == "i"


def test_without_langgraph_loaded_nothing_is_imported_and_the_class_is_plain() -> None:
    code = ("import sys; from lgnb.errors import GraphInterrupt, GraphBubbleUp; e = GraphInterrupt(());"
            "assert type(e) is GraphInterrupt, type(e).__mro__;"
            "assert 'langgraph.errors' not in sys.modules and 'langgraph.types' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert issubclass(GraphInterrupt, GraphBubbleUp)


class _Carrying(GraphBubbleUp):
    """A user's bubble-up with a constructor of its own and the `__reduce__` it needs."""

    def __init__(self, what: str, extra: int) -> None:
        super().__init__(what)
        self.extra = extra

    def __reduce__(self) -> tuple:
        return (_Carrying, (self.args[0], self.extra))


def test_a_subclass_that_defines_its_own_reduce_pickles_and_copies_by_it() -> None:
    import copy

    exc = _Carrying("up", 3)
    for back in (pickle.loads(pickle.dumps(exc)), copy.copy(exc), copy.deepcopy(exc)):
        assert isinstance(back, _Carrying) and isinstance(back, lg_errors.GraphBubbleUp)
        assert back.args == ("up",) and back.extra == 3


def test_threads_raising_a_class_for_the_first_time_at_once_share_one_twin() -> None:
    import threading

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # interleave the threads as much as possible
    try:
        for n in range(50):
            cls = type(f"Fresh{n}", (GraphInterrupt,), {"__module__": __name__})
            barrier, kinds = threading.Barrier(8), []

            def first() -> None:
                barrier.wait()
                kinds.append(type(cls(())))

            threads = [threading.Thread(target=first) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(set(kinds)) == 1, n
    finally:
        sys.setswitchinterval(switch)


class _Coded(Exception):
    """A user's cooperative mixin: its `__init__` takes a keyword and passes the rest up."""

    def __init__(self, *args: object, code: int = 0) -> None:
        super().__init__(*args)
        self.code = code


def test_a_users_error_mixing_an_lgnb_error_with_a_cooperative_mixin_keeps_the_mixins_init() -> None:
    from lgnb.errors import InvalidUpdateError, NodeCancelledError

    class Mine(InvalidUpdateError, _Coded):
        pass

    class Cancelled(NodeCancelledError, _Coded):
        pass

    e = Mine("bad", code=3)
    assert e.code == 3 and e.args == ("bad",) and isinstance(e, lg_errors.InvalidUpdateError)
    assert Mine("bad").code == 0
    c = Cancelled("node")  # lgnb's own __init__ first, then the mixin's (LangGraph's is passed over)
    assert c.node == "node" and c.code == 0 and isinstance(c, lg_errors.NodeCancelledError)
