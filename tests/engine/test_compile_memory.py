"""What a compiled graph holds in memory as nodes and state keys grow.

Every node reads and may write every state key, but the key lists and sets it needs are
the same for all nodes of one schema: a graph must hold them once, not once per node
(100 nodes over 20,000 keys held 240 MB of per-node copies).
"""

import tracemalloc

from typing_extensions import TypedDict

import lgnb

MB = 1 << 20


def _compiled_size(nodes: int, keys: int) -> int:
    schema = TypedDict("Wide", {f"k{i}": int for i in range(keys)})  # type: ignore[operator]
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        g = lgnb.StateGraph(schema)
        prev = lgnb.START
        for j in range(nodes):
            g.add_node(f"n{j}", lambda s, k=f"k{j}": {k: s[k] + 1})
            g.add_edge(prev, f"n{j}")
            prev = f"n{j}"
        g.add_edge(prev, lgnb.END)
        compiled = g.compile()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert compiled.invoke({f"k{i}": 0 for i in range(keys)})[f"k{nodes - 1}"] == 1
    return after - before


def test_a_wide_graphs_memory_grows_with_its_keys_not_with_nodes_times_keys():
    few, many = _compiled_size(10, 5000), _compiled_size(80, 5000)
    # 70 more nodes: each a node object, its writers and channels, not a copy of the
    # 5,000 keys (a set and two lists of them per node cost ~400 KB each)
    per_node = (many - few) / 70
    assert per_node < 40_000, f"each node holds {per_node / 1024:.0f} KB over a 5,000-key state"
