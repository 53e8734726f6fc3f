"""`Pregel(...)` refuses a node that reads a channel nobody declared, whichever node it is.

Read lists shared by many nodes are checked once (compiling a wide graph is otherwise
O(nodes × keys)); a bad channel must still be named for the node that reads it.
"""

import pytest

from lgnb.channels import LastValue
from lgnb.pregel import NodeBuilder, Pregel


def _pregel(nodes: dict, *channels: str) -> None:
    """A `Pregel` over `nodes` with `LastValue` channels "a", "out" and `channels`."""
    Pregel(
        nodes=nodes,
        channels={c: LastValue(int) for c in ("a", "out", *channels)},
        input_channels="a",
        output_channels="out",
    )


def _echo(name: str, reads: str) -> object:
    return NodeBuilder().subscribe_only(reads).do(lambda x: x).write_to("out").build(name)


def test_a_bare_channel_read_by_a_late_node_is_still_checked():
    nodes = {f"n{i}": _echo(f"n{i}", "a") for i in range(50)}
    nodes["late"] = _echo("late", "missing")
    with pytest.raises(ValueError, match=r"Node late reads channel 'missing' not in known channels"):
        _pregel(nodes)


def test_nodes_sharing_one_read_list_are_each_accepted_when_it_is_valid():
    shared = ["a", "b"]
    nodes = {}
    for i in range(3):
        node = (
            NodeBuilder().subscribe_to("a").read_from("b").do(lambda d: d["a"] + d["b"])
            .write_to(f"out{i}").build(f"n{i}")
        )
        node.channels = shared
        nodes[f"n{i}"] = node
    outs = {f"out{i}": LastValue(int) for i in range(3)}
    app = Pregel(
        nodes=nodes,
        channels={"a": LastValue(int), "b": LastValue(int), **outs},
        input_channels=["a", "b"],
        output_channels=list(outs),
    )
    assert app.invoke({"a": 3, "b": 4}) == {"out0": 7, "out1": 7, "out2": 7}


def test_a_shared_read_list_with_an_unknown_channel_names_the_first_node_reading_it():
    shared = ["a", "nope"]
    nodes = {}
    for i in range(3):
        node = NodeBuilder().subscribe_to("a").do(lambda d: d).write_to("out").build(f"n{i}")
        node.channels = shared
        nodes[f"n{i}"] = node
    with pytest.raises(ValueError, match=r"Node n0 reads channel 'nope'"):
        _pregel(nodes)
