"""lgnb's annotations are usable: mypy, run on a small user program, accepts the calls
LangGraph's types accept and rejects the same mistakes (a bad `stream_mode`, `durability`,
`checkpointer` or `interrupt_before`), and it reads lgnb as a typed package (py.typed).

The same program is checked twice, importing `lgnb` and importing `langgraph`, and the two
runs must flag the same lines: lgnb's annotations mirror LangGraph's.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# `{pkg}` is `lgnb` or `langgraph`; every line that must be a type error ends in `# BAD`.
PROGRAM = '''
from typing_extensions import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from {pkg}.graph import END, START, StateGraph
from {pkg}.graph.state import CompiledStateGraph


class State(TypedDict):
    topic: str
    joke: str


class In(TypedDict):
    topic: str


def write(state: State) -> dict[str, str]:
    return {{"joke": f"a joke about {{state['topic']}}"}}


builder = StateGraph(State, input_schema=In)
builder.add_node("write", write)
builder.add_edge(START, "write")
builder.add_edge("write", END)
graph: CompiledStateGraph[State, None, In, State] = builder.compile(checkpointer=InMemorySaver())
config = {{"configurable": {{"thread_id": "1"}}}}

# accepted
graph.invoke({{"topic": "cats"}}, {{"configurable": {{"thread_id": "1"}}}}, durability="sync")
graph.invoke({{"topic": "cats"}}, durability="exit", interrupt_before="*")
graph.invoke({{"topic": "cats"}}, interrupt_after=["write"], durability=None)
for chunk in graph.stream({{"topic": "cats"}}, stream_mode=["updates", "custom"], durability="async"):
    pass
for chunk in graph.stream({{"topic": "cats"}}, stream_mode="values", print_mode="updates"):
    pass
builder.compile(checkpointer=True)
builder.compile(checkpointer=None, interrupt_before="*", interrupt_after=["write"])
snapshot = graph.get_state({{"configurable": {{"thread_id": "1"}}}})
graph.update_state({{"configurable": {{"thread_id": "1"}}}}, {{"joke": "x"}}, as_node="write")


async def main() -> None:
    await graph.ainvoke({{"topic": "cats"}}, durability="sync")
    async for part in graph.astream({{"topic": "cats"}}, stream_mode="messages"):
        pass
    async for part in graph.astream({{"topic": "cats"}}, stream_mode="nonsense"):  # BAD
        pass


# rejected
graph.invoke({{"topic": "cats"}}, stream_mode="nonsense")  # BAD
graph.invoke({{"topic": "cats"}}, durability="later")  # BAD
graph.stream({{"topic": "cats"}}, stream_mode=["values", "everything"])  # BAD
graph.stream({{"topic": "cats"}}, interrupt_before=["write", 2])  # BAD
builder.compile(checkpointer="memory")  # BAD
builder.compile(interrupt_after="everything")  # BAD
wrong: CompiledStateGraph[In, None, In, In] = builder.compile()  # BAD
'''


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for both runs (langchain-core and langgraph are analysed once)."""
    return tmp_path_factory.mktemp("mypy-cache")


def mypy_errors(pkg: str, tmp_path: Path, cache_dir: Path) -> tuple[dict[int, str], str]:
    """Type-check PROGRAM importing `pkg` in `--strict` mode, outside the repository (so
    lgnb is found as the installed package, through its py.typed); {line: message}."""
    program = tmp_path / f"user_{pkg}.py"
    program.write_text(textwrap.dedent(PROGRAM.format(pkg=pkg)))
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", str(config), "--cache-dir", str(cache_dir),
         "--no-error-summary", "--hide-error-context", str(program)],
        cwd=tmp_path, capture_output=True, text=True, timeout=280,
    )
    errors: dict[int, str] = {}
    for line in proc.stdout.splitlines():
        m = re.match(rf".*user_{pkg}\.py:(\d+): error: (.*)", line)
        if m:
            errors[int(m.group(1))] = errors.get(int(m.group(1)), "") + m.group(2)
    return errors, proc.stdout + proc.stderr


def bad_lines(pkg: str) -> set[int]:
    lines = textwrap.dedent(PROGRAM.format(pkg=pkg)).splitlines()
    return {i for i, line in enumerate(lines, 1) if line.endswith("# BAD")}


def test_mypy_accepts_the_public_api_used_right_and_flags_exactly_the_misuses(tmp_path: Path, cache_dir: Path) -> None:
    errors, out = mypy_errors("lgnb", tmp_path, cache_dir)
    assert "py.typed" not in out and "import-untyped" not in out, out  # lgnb reads as a typed package
    assert set(errors) == bad_lines("lgnb"), out
    lines = textwrap.dedent(PROGRAM.format(pkg="lgnb")).splitlines()
    by_text = {lines[n - 1].split("#")[0].strip(): msg for n, msg in errors.items()}
    # the messages name the parameter and the accepted literals, so the fix is plain
    assert '"stream_mode"' in by_text['graph.invoke({"topic": "cats"}, stream_mode="nonsense")']
    assert "'values'" in by_text['graph.invoke({"topic": "cats"}, stream_mode="nonsense")']
    assert '"durability"' in by_text['graph.invoke({"topic": "cats"}, durability="later")']
    assert "'sync'" in by_text['graph.invoke({"topic": "cats"}, durability="later")']
    assert '"checkpointer"' in by_text['builder.compile(checkpointer="memory")']
    assert "BaseCheckpointSaver" in by_text['builder.compile(checkpointer="memory")']


def test_lgnb_and_langgraph_annotations_flag_the_same_lines_of_a_user_program(
    tmp_path: Path, cache_dir: Path
) -> None:
    ours, out_ours = mypy_errors("lgnb", tmp_path, cache_dir)
    theirs, out_theirs = mypy_errors("langgraph", tmp_path, cache_dir)
    assert set(theirs) == bad_lines("langgraph"), out_theirs  # the program itself is right about LangGraph
    assert set(ours) == set(theirs), f"lgnb:\n{out_ours}\nlanggraph:\n{out_theirs}"


VIEWS_PROGRAM = '''
from typing_extensions import TypedDict

import lgnb
from lgnb.graph import END, START, StateGraph


class State(TypedDict):
    topic: str


builder = StateGraph(State)
builder.add_node("echo", lambda state: {"topic": state["topic"]})
builder.add_edge(START, "echo")
builder.add_edge("echo", END)
graph = builder.compile()

# accepted
run = lgnb.run(graph, {"topic": "cats"}, display=False, durability="sync", interrupt_before="*")
queued = lgnb.run(graph, {"topic": "cats"}, display=False, multitask="enqueue")
lens = lgnb.lens(graph, {"topic": "cats"}, display=False, stream_mode=["updates"], context=None)
view = lgnb.show(graph)

# rejected
lgnb.run(graph, {"topic": "cats"}, durability="later")  # BAD
lgnb.lens(graph, {"topic": "cats"}, stream_mode="nonsense")  # BAD
lgnb.run(graph, {"topic": "cats"}, interupt_before=["echo"])  # BAD
lgnb.show(graph, expanded="all")  # BAD
lgnb.run(graph, {"topic": "cats"}, multitask="later")  # BAD
'''


def test_mypy_checks_the_options_lgnb_run_and_lens_pass_on_to_stream(tmp_path: Path, cache_dir: Path) -> None:
    program = tmp_path / "views.py"
    program.write_text(VIEWS_PROGRAM)
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", str(config), "--cache-dir", str(cache_dir),
         "--no-error-summary", "--hide-error-context", str(program)],
        cwd=tmp_path, capture_output=True, text=True, timeout=280,
    )
    flagged = {int(m.group(1)) for m in re.finditer(r"views\.py:(\d+): error", proc.stdout)}
    bad = {i for i, line in enumerate(VIEWS_PROGRAM.splitlines(), 1) if line.endswith("# BAD")}
    assert flagged == bad, proc.stdout + proc.stderr
    assert '"durability"' in proc.stdout and '"interupt_before"' in proc.stdout  # the message names the option
