"""What the first read of a thread LangGraph's own SqliteSaver saved costs on lgnb's saver.

Why: a program ported from `langgraph.checkpoint.sqlite` opens its old file with lgnb's
saver, whose first read of each thread copies it into lgnb's tables
(`lgnb/checkpoint/sqlite/_langgraph_tables.py`). This prints that one-time cost next to
what LangGraph spent saving the same checkpoints, and the reads after it.

How: LangGraph's `StateGraph` runs a chat-like graph (a message list that grows by two per
turn, a counter, a 1 KB value rewritten each turn) for `--turns` turns on its
`SqliteSaver` in a fresh file; then lgnb's saver opens the file and reads the thread
(`get_tuple`: the copy), then reads it again. CPU time of this process.

    .venv/bin/python bench/bench_copy.py --turns 300
"""

from __future__ import annotations

import argparse
import operator
import os
import tempfile
import time
from typing import Annotated, Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite import SqliteSaver


class Chat(TypedDict):
    messages: Annotated[list, add_messages]
    turns: Annotated[int, operator.add]
    note: str


def _reply(state: Chat) -> dict[str, Any]:
    return {"messages": [AIMessage("reply " * 20)], "turns": 1, "note": "x" * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300, help="turns (3 checkpoints each)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lgnb-bench-copy-") as workdir:
        _measure(os.path.join(workdir, "threads.sqlite"), args.turns)


def _measure(path: str, turns: int) -> None:
    config = {"configurable": {"thread_id": "chat"}}
    builder = StateGraph(Chat)
    builder.add_node("reply", _reply)
    builder.add_edge(START, "reply")
    with LangGraphSqliteSaver.from_conn_string(path) as saver:
        graph = builder.compile(checkpointer=saver)
        began = time.process_time()
        for i in range(turns):
            graph.invoke({"messages": [HumanMessage(f"turn {i}")]}, config)
        wrote = time.process_time() - began
        checkpoints = sum(1 for _ in saver.list(config))
        began = time.process_time()
        saver.get_tuple(config)
        lg_read = time.process_time() - began
    size = os.path.getsize(path)
    with SqliteSaver.from_conn_string(path) as saver:
        began = time.process_time()
        saver.get_tuple(config)
        copied = time.process_time() - began
        began = time.process_time()
        saver.get_tuple(config)
        again = time.process_time() - began
    print(f"{checkpoints} checkpoints LangGraph saved ({size // 1024} KB, {turns} turns)")
    print(f"LangGraph: saving them {wrote * 1000:.0f} ms CPU, reading the latest "
          f"{lg_read * 1000:.2f} ms")
    print(f"lgnb: first read (the copy) {copied * 1000:.0f} ms = "
          f"{copied / checkpoints * 1e6:.0f} µs per checkpoint, "
          f"{copied / wrote:.2f}x LangGraph's saving; next read {again * 1000:.2f} ms")
    print(f"file after the copy: {os.path.getsize(path) // 1024} KB")


if __name__ == "__main__":
    main()
