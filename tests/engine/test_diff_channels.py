"""Channel classes used directly (the public `.channels` API): update/get/consume/finish,
checkpoint round-trips and errors, on LangGraph and lgnb.

Each scenario replays a script of operations on a fresh channel and records every result
(or the exception class + message).  `EmptyChannelError` lives in `.errors` on both sides.
"""

import operator

from _diff import capture


def _play(ch, script):
    """script: list of (op, *args); returns one observation per op."""
    out = []
    for op, *args in script:
        if op == "update":
            out.append(("update", args[0], capture(lambda: ch.update(args[0]))))
        elif op == "get":
            out.append(("get", capture(ch.get)))
        elif op == "available":
            out.append(("available", capture(ch.is_available)))
        elif op == "consume":
            out.append(("consume", capture(ch.consume)))
        elif op == "finish":
            out.append(("finish", capture(ch.finish)))
        elif op == "roundtrip":
            # checkpoint of a non-empty channel, restored into a fresh copy
            cp = ch.checkpoint()
            restored = ch.from_checkpoint(cp)
            out.append(("roundtrip", cp, capture(restored.get)))
        else:  # pragma: no cover
            raise AssertionError(op)
    return out


def test_last_value_single_update_get_and_conflict(differential):
    def scenario(E):
        ch = E.channels.LastValue(int)
        ch.key = "k"
        return _play(ch, [("get",), ("available",), ("update", []), ("update", [1]), ("get",),
                          ("roundtrip",), ("update", [2, 3]), ("get",), ("update", [4]), ("get",)])

    differential(scenario)


def test_binary_operator_aggregate_folds_updates(differential):
    def scenario(E):
        ch = E.channels.BinaryOperatorAggregate(int, operator.add)
        ch.key = "total"
        return _play(ch, [("get",), ("update", [1, 2, 3]), ("get",), ("update", []), ("get",),
                          ("roundtrip",), ("update", [10]), ("get",)])

    differential(scenario)


def test_binary_operator_aggregate_list_starts_empty(differential):
    def scenario(E):
        ch = E.channels.BinaryOperatorAggregate(list, operator.add)
        return _play(ch, [("get",), ("available",), ("update", [["a"], ["b"]]), ("get",)])

    differential(scenario)


def test_binary_operator_aggregate_with_overwrite(differential):
    def scenario(E):
        ch = E.channels.BinaryOperatorAggregate(list, operator.add)
        ch.key = "xs"
        return _play(ch, [("update", [["a"]]), ("update", [E.Overwrite(["o"]), ["b"]]), ("get",),
                          ("update", [E.Overwrite(["1"]), E.Overwrite(["2"])]), ("get",)])

    # lgnb adds help to LangGraph's message and keeps its text: compare with exc="extends"
    differential(scenario, exc="extends")


def test_topic_collects_values_of_one_step(differential):
    def scenario(E):
        ch = E.channels.Topic(str)
        return _play(ch, [("get",), ("update", ["a", ["b", "c"]]), ("get",), ("update", ["d"]),
                          ("get",), ("update", []), ("get",), ("available",)])

    differential(scenario)


def test_topic_accumulate_keeps_values_across_steps(differential):
    def scenario(E):
        ch = E.channels.Topic(str, accumulate=True)
        return _play(ch, [("update", ["a"]), ("update", ["b"]), ("get",), ("update", []),
                          ("get",), ("roundtrip",)])

    differential(scenario)


def test_ephemeral_value_clears_on_empty_update_and_guards_multiple(differential):
    def scenario(E):
        ch = E.channels.EphemeralValue(str)
        ch.key = "e"
        return _play(ch, [("update", ["x"]), ("get",), ("update", []), ("get",),
                          ("update", ["a", "b"]), ("get",)])

    differential(scenario)


def test_ephemeral_value_without_guard_keeps_last(differential):
    def scenario(E):
        ch = E.channels.EphemeralValue(str, guard=False)
        return _play(ch, [("update", ["a", "b"]), ("get",)])

    differential(scenario)


def test_named_barrier_value_waits_for_all_names(differential):
    def scenario(E):
        ch = E.channels.NamedBarrierValue(str, {"a", "b"})
        ch.key = "join"
        return _play(ch, [("get",), ("update", ["a"]), ("available",), ("get",), ("update", ["a"]),
                          ("update", ["b"]), ("available",), ("get",), ("consume",), ("available",),
                          ("update", ["zzz"])])

    differential(scenario)


def test_untracked_value(differential):
    def scenario(E):
        ch = E.channels.UntrackedValue(str)
        ch.key = "u"
        return _play(ch, [("get",), ("update", ["a"]), ("get",), ("update", ["b", "c"]), ("get",)])

    differential(scenario, exc="class")


def test_channel_copy_is_independent(differential):
    def scenario(E):
        ch = E.channels.BinaryOperatorAggregate(list, operator.add)
        ch.update([["a"]])
        cp = ch.copy()
        cp.update([["b"]])
        return ch.get(), cp.get()

    differential(scenario, expect=(["a"], ["a", "b"]))


def test_empty_channel_error_class(differential):
    def scenario(E):
        ch = E.channels.LastValue(int)
        try:
            ch.get()
        except Exception as e:
            return type(e).__name__, isinstance(e, E.errors.EmptyChannelError)
        return "no error"

    differential(scenario, expect=("EmptyChannelError", True))
