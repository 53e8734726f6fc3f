"""Programs written with `deepagents` (`create_deep_agent`), run on LangGraph and on lgnb.

`create_deep_agent` builds a LangChain `create_agent` graph (a LangGraph
`CompiledStateGraph`) with deepagents' middleware: the filesystem tools (`ls`,
`read_file`, `write_file`, `edit_file`, `delete`, `glob`, `grep`, `execute`), the `task`
tool running subagents inside a tool call, summarization, tool-call patching. A user
ports one to lgnb with `lgnb.graph.from_langgraph(agent)`. The default `StateBackend`
keeps files in the `files` state key and reaches it through LangGraph's private config
hooks (`configurable["__pregel_read"]` / `["__pregel_send"]`) from inside tools; the
subagents are LangGraph graphs the `task` tool invokes. The models are scripted.

Observables are raw: final states (with `files`), what each model was sent, streams with
`subgraphs=True`, `get_state(subgraphs=True)`, histories; only ids and timestamps are
normalized (by the harness), plus what a scenario says.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""


from typing import TypedDict

import pytest

pytest.importorskip("deepagents")

from _agent_scenarios import calls as _calls  # noqa: E402
from _agent_scenarios import on as _on
from _agent_scenarios import saver as _saver
from _agent_scenarios import say as _say
from _diff import acollect, collect, snapshot_summary, steps_as_multisets  # noqa: E402
from _scripted import Scripted  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

# --- helpers --------------------------------------------------------------------------------------


def _model(*replies, **kwargs):
    return Scripted(script=iter(list(replies)), seen=[], **kwargs)


def _cfg(tid="t"):
    return {"configurable": {"thread_id": tid}}


def _hi(text="hi", mid="h1", **extra):
    return {"messages": [HumanMessage(text, id=mid)], **extra}


def _file(content):
    """A file as a user puts it in the input (the `FileData` shape)."""
    return {"content": content, "encoding": "utf-8",
            "created_at": "2024-01-01T00:00:00+00:00", "modified_at": "2024-01-01T00:00:00+00:00"}


def _deep(E, model, **kwargs):
    from deepagents import create_deep_agent

    return _on(E, create_deep_agent(model=model, **kwargs))


class _UserCtx(TypedDict):
    """The run context of the per-user memory scenarios."""

    user_id: str


def _user_memories():
    """The context schema, an `InMemoryStore` and a `CompositeBackend` routing
    `/memories/` to it, namespaced by the user in the run's context (the namespace factory
    reads `Runtime.context`); every other path stays in the thread's state."""
    from deepagents.backends import CompositeBackend, StateBackend, StoreBackend
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore()
    backend = CompositeBackend(default=StateBackend(), routes={
        "/memories/": StoreBackend(namespace=lambda rt: (rt.context["user_id"], "memories"))})
    return _UserCtx, store, backend


def _msgs(state):
    """What a user prints of the conversation: type, name, content, tool calls and status."""
    return [(m.type, m.name, m.content, [(c["name"], c["args"]) for c in getattr(m, "tool_calls", [])],
             getattr(m, "status", None)) for m in state["messages"]]


def _contents(files):
    return {path: data["content"] for path, data in sorted((files or {}).items())}


def _stream(app, inp, cfg=None, modes=("updates", "values")):
    return collect(lambda: app.stream(inp, cfg, stream_mode=list(modes), subgraphs=True))


def _final(chunks):
    """The last root `values` chunk of a `subgraphs=True` stream."""
    return [c for ns, mode, c in chunks if not ns and mode == "values"][-1]


def _history(app, cfg):
    return [snapshot_summary(s) for s in app.get_state_history(cfg)]


# --- 1. filesystem tools on the default StateBackend ----------------------------------------------


def test_write_read_and_list_files_in_state(differential):
    """The README's first program: the agent writes a file, lists `/`, reads the file back."""
    def scenario(E):
        model = _model(
            _calls("m1", ("write_file", {"file_path": "/notes.md", "content": "line one\nline two\n"}, "w1")),
            _calls("m2", ("ls", {"path": "/"}, "l1")),
            _calls("m3", ("read_file", {"file_path": "/notes.md"}, "r1")),
            _say("The notes have two lines.", "m4"))
        agent = _deep(E, model, system_prompt="You keep notes.")
        out = agent.invoke(_hi("take a note"))
        return out, model.seen

    ref = differential(scenario)
    state = ref[0]
    assert state["files"]["/notes.md"]["content"] == "line one\nline two\n"


def test_input_files_read_with_offsets_limits_ls_glob_and_grep(differential):
    """Files given in the input: `read_file` pages with `offset`/`limit` (and a missing
    file is an error message), `ls` lists a directory (subdirectories end in `/`), `glob`
    and `grep` (each output mode) search the state's files; all in the model's turn order."""
    src = "".join(f"line {i}\n" for i in range(1, 13))

    def scenario(E):
        files = {"/src/app.py": _file("import os\nprint('hello')\n"), "/src/lib/util.py": _file("def helper():\n    return 'hello'\n"),
                 "/docs/guide.md": _file(src), "/README.md": _file("# Project\nhello world\n")}
        model = _model(
            _calls("m1", ("read_file", {"file_path": "/docs/guide.md", "offset": 3, "limit": 4}, "r1")),
            _calls("m2", ("read_file", {"file_path": "/docs/guide.md", "offset": 10}, "r2")),
            _calls("m3", ("read_file", {"file_path": "/missing.txt"}, "r3")),
            _calls("m4", ("ls", {"path": "/src"}, "l1")),
            _calls("m5", ("glob", {"pattern": "**/*.py"}, "g1")),
            _calls("m6", ("glob", {"pattern": "*.md", "path": "/docs"}, "g2")),
            _calls("m7", ("grep", {"pattern": "hello"}, "s1")),
            _calls("m8", ("grep", {"pattern": "hello", "output_mode": "content", "glob": "*.py"}, "s2")),
            _calls("m9", ("grep", {"pattern": "line 1", "path": "/docs", "output_mode": "count"}, "s3")),
            _say("Searched.", "m10"))
        agent = _deep(E, model)
        out = agent.invoke(_hi("look around", files=files))
        return _msgs(out), _contents(out["files"]), out["files"] == files

    ref = differential(scenario)
    tool_results = [m[2] for m in ref[0] if m[0] == "tool"]
    assert "line 4" in tool_results[0] and "line 8" not in tool_results[0]
    assert "not found" in tool_results[2]
    assert ref[2] is True  # reading does not touch the files


def test_edit_file_replaces_and_reports_failed_edits(differential):
    """`edit_file` replaces a unique string; a string not found, an ambiguous one without
    `replace_all`, and a missing file are error results that leave the file as it was;
    `replace_all` replaces every occurrence; `delete` removes a file."""
    def scenario(E):
        files = {"/config.ini": _file("mode = debug\nlevel = 1\nlevel = 1\n"), "/old.txt": _file("bye\n")}
        model = _model(
            _calls("m1", ("edit_file", {"file_path": "/config.ini", "old_string": "debug", "new_string": "release"}, "e1")),
            _calls("m2", ("edit_file", {"file_path": "/config.ini", "old_string": "verbose", "new_string": "quiet"}, "e2")),
            _calls("m3", ("edit_file", {"file_path": "/config.ini", "old_string": "level = 1", "new_string": "level = 2"}, "e3")),
            _calls("m4", ("edit_file", {"file_path": "/config.ini", "old_string": "level = 1", "new_string": "level = 2",
                                        "replace_all": True}, "e4")),
            _calls("m5", ("edit_file", {"file_path": "/nope.ini", "old_string": "a", "new_string": "b"}, "e5")),
            _calls("m6", ("delete", {"file_path": "/old.txt"}, "d1")),
            _say("Configured.", "m7"))
        agent = _deep(E, model)
        out = agent.invoke(_hi("switch to release", files=files))
        return _msgs(out), out["files"]

    ref = differential(scenario)
    statuses = [m[4] for m in ref[0] if m[0] == "tool"]
    assert statuses == ["success", "error", "error", "success", "error", "success"]
    assert ref[1]["/config.ini"]["content"] == "mode = release\nlevel = 2\nlevel = 2\n"
    assert "/old.txt" not in ref[1]


def test_parallel_file_tool_calls_in_one_model_turn(differential):
    """One model message with several file tool calls: each runs as a task of the same
    step, its `files` write merged by the dict-merge reducer. Two writes to different
    paths and an edit of an input file all land; a `read_file` of a path another call
    of the same step writes does not see that write (tasks see the step's input); a
    second mutation of the same path in one message is refused. The step's updates
    stream with `subgraphs=True`."""
    def scenario(E):
        model = _model(
            _calls("m1", ("write_file", {"file_path": "/a.txt", "content": "alpha\n"}, "w1"),
                   ("write_file", {"file_path": "/b.txt", "content": "beta\n"}, "w2"),
                   ("edit_file", {"file_path": "/base.txt", "old_string": "v1", "new_string": "v2"}, "e1"),
                   ("read_file", {"file_path": "/a.txt"}, "r1"),
                   ("write_file", {"file_path": "/b.txt", "content": "beta again\n"}, "w3")),
            _calls("m2", ("read_file", {"file_path": "/a.txt"}, "r2")),
            _say("All written.", "m3"))
        agent = _deep(E, model, checkpointer=E.InMemorySaver())
        chunks = _stream(agent, _hi("write a and b", files={"/base.txt": _file("version v1\n")}), _cfg(), modes=("updates",))
        # the tool tasks of a step finish in any order (LangGraph's thread pool): per step, a set
        chunks = steps_as_multisets(chunks, lambda c: "tools" not in c[2])
        state = agent.get_state(_cfg())
        return chunks, _msgs(state.values), _contents(state.values["files"]), model.seen[-1]

    ref = differential(scenario)
    assert ref[2] == {"/a.txt": "alpha\n", "/b.txt": "beta\n", "/base.txt": "version v2\n"}
    tool_results = {m[2] for m in ref[1] if m[0] == "tool"}
    assert "Error: parallel file mutations to the same path are not allowed." in tool_results
    assert any("not found" in r for r in tool_results)  # r1 ran before a.txt existed


def test_a_tool_reads_its_own_writes_through_the_state_backend(differential):
    """A user's tool uses `StateBackend` directly: it writes, edits and reads back in one
    call (`fresh` reads see the call's own queued writes), and writes two files in two
    `send`s merged at the end of the step. A parallel tool of the same step does not see
    them."""
    def scenario(E):
        from deepagents.backends import StateBackend

        backend = StateBackend()

        @tool
        def scaffold(name: str) -> str:
            """Create a project skeleton."""
            backend.write(f"/{name}/main.py", "print('v1')\n")
            backend.edit(f"/{name}/main.py", "v1", "v2")
            backend.write(f"/{name}/README.md", f"# {name}\n")
            main = backend.read(f"/{name}/main.py").file_data["content"]
            listing = [e["path"] for e in backend.ls(f"/{name}").entries]
            return f"main={main!r} files={listing}"

        @tool
        def peek(name: str) -> str:
            """Look for a project."""
            return repr(backend.read(f"/{name}/main.py").error)

        model = _model(_calls("m1", ("scaffold", {"name": "proj"}, "c1"), ("peek", {"name": "proj"}, "c2")),
                       _say("Scaffolded.", "m2"))
        agent = _deep(E, model, tools=[scaffold, peek])
        out = agent.invoke(_hi("scaffold proj"))
        return _msgs(out), _contents(out["files"])

    ref = differential(scenario)
    assert ref[1] == {"/proj/README.md": "# proj\n", "/proj/main.py": "print('v2')\n"}
    assert "main=\"print('v2')\\n\"" in ref[0][2][2]


def test_a_large_tool_result_is_evicted_to_a_file_and_paged_back(differential):
    """A tool result over the eviction limit (20000 tokens, about 80000 characters, by
    default) is saved under `/large_tool_results/<tool call id>` and the model gets a
    preview with the path; it then pages through the file with `read_file`."""
    def scenario(E):
        @tool
        def dump_logs() -> str:
            """Return all the logs."""
            return "".join(f"log line {i:05d} " + "x" * 60 + "\n" for i in range(1500))

        model = _model(_calls("m1", ("dump_logs", {}, "call_dump")),
                       _calls("m2", ("read_file", {"file_path": "/large_tool_results/call_dump", "offset": 1000,
                                                   "limit": 2}, "r1")),
                       _say("Line 1000 looks fine.", "m3"))
        agent = _deep(E, model, tools=[dump_logs])
        out = agent.invoke(_hi("check the logs"))
        return _msgs(out), sorted(out["files"]), model.seen[1][-1]

    ref = differential(scenario)
    assert ref[1] == ["/large_tool_results/call_dump"]
    assert "/large_tool_results/call_dump" in ref[2][1] and len(ref[2][1]) < 10000
    assert "log line 01000" in ref[0][-2][2]


def test_summarization_offloads_history_to_a_file(differential):
    """With a model profile giving its context window, deepagents' summarization middleware
    triggers at 85% of it: the older messages are written to
    `/conversation_history/session_<uuid>.md`, a separate call asks the model for a
    summary, and the next calls get the summary in their place. The session id is a fresh
    `uuid4` per run on LangGraph too, so it is renamed."""
    import re

    @tool
    def fetch(page: int) -> str:
        """Fetch a page of the report."""
        return f"page {page}: " + "lorem ipsum " * 300

    def scenario(E):
        turns = []

        def reply(messages):
            if messages[0].type == "human":  # the summarization call: one prompt, no system message
                return _say("Summary: pages 1 to 4 were fetched.", f"sum{len(turns)}")
            turns.append(None)
            if len(turns) < 7:
                return _calls(f"m{len(turns)}", ("fetch", {"page": len(turns)}, f"f{len(turns)}"))
            return _say("Read all pages.", "fin")

        model = Scripted(script=reply, seen=[], profile={"max_input_tokens": 8000})
        agent = _deep(E, model, tools=[fetch], checkpointer=E.InMemorySaver())
        out = agent.invoke(_hi("read the report"), _cfg())
        state = agent.get_state(_cfg())
        text = repr((_msgs(out), out["files"], model.seen, state.values))
        return re.sub(r"session_[0-9a-f]{32}", "session_<uuid>", text)

    ref = differential(scenario)
    assert "'/conversation_history/session_<uuid>.md'" in ref
    assert "Summary: pages 1 to 4 were fetched." in ref


# --- 2. subagents through the `task` tool ----------------------------------------------------------


def test_general_purpose_subagent_writes_a_file_the_parent_reads(differential):
    """`task(subagent_type="general-purpose")`: the default subagent (same model, same file
    tools) gets only the task description, writes a file, and answers; its `files` come
    back into the parent's state with its last message as the tool result. The stream
    with `subgraphs=True` shows the subagent's own steps under the tool's namespace."""
    def scenario(E):
        model = _model(
            _calls("p1", ("task", {"description": "Write a haiku about rain to /haiku.md",
                                   "subagent_type": "general-purpose"}, "t1"), content="Delegating."),
            _calls("s1", ("write_file", {"file_path": "/haiku.md", "content": "rain on the tin roof\n"}, "w1")),
            _say("Wrote the haiku to /haiku.md.", "s2"),
            _calls("p2", ("read_file", {"file_path": "/haiku.md"}, "r1")),
            _say("Here is your haiku: rain on the tin roof", "p3"))
        agent = _deep(E, model, system_prompt="You are a poet's assistant.")
        chunks = _stream(agent, _hi("a haiku please"))
        return chunks, model.seen

    ref = differential(scenario)
    final = _final(ref[0])
    assert final["files"]["/haiku.md"]["content"] == "rain on the tin roof\n"
    assert ref[1][1] == [("system", ref[1][1][0][1]), ("human", "Write a haiku about rain to /haiku.md")]
    assert any(ns for ns, _, _ in ref[0])  # the subagent's steps stream under a namespace


def test_custom_subagent_with_its_own_model_tools_and_prompt(differential):
    """A subagent dict (`name`, `description`, `system_prompt`, `tools`, `model`): it gets its
    own prompt and tools (plus the file tools), not the parent's; an unknown
    `subagent_type` is answered with the list of allowed ones."""
    @tool
    def web_search(query: str) -> str:
        """Search the web."""
        return f"results for {query}: LangGraph is a library for agents"

    @tool
    def parent_only(x: int) -> int:
        """A tool only the main agent has."""
        return x

    def scenario(E):
        research_model = _model(
            _calls("r1", ("web_search", {"query": "what is LangGraph"}, "q1")),
            _calls("r2", ("write_file", {"file_path": "/research/langgraph.md", "content": "LangGraph: agents\n"}, "w1")),
            _say("LangGraph is a library for agents (notes in /research/langgraph.md).", "r3"))
        main_model = _model(
            _calls("p1", ("task", {"description": "Research LangGraph", "subagent_type": "coder"}, "t0")),
            _calls("p2", ("task", {"description": "Research LangGraph", "subagent_type": "researcher"}, "t1")),
            _say("LangGraph is a library for agents.", "p3"))
        agent = _deep(E, main_model, tools=[parent_only], subagents=[{
            "name": "researcher", "description": "Researches topics on the web.",
            "system_prompt": "You are a thorough researcher.", "tools": [web_search], "model": research_model}])
        out = agent.invoke(_hi("what is LangGraph?"))
        return _msgs(out), _contents(out["files"]), main_model.seen, research_model.seen

    ref = differential(scenario)
    assert "`researcher`" in ref[0][2][2] and ref[0][2][4] == "success"  # the unknown type: a plain answer
    assert ref[3][0][0] == ("system", ref[3][0][0][1]) and ref[3][0][0][1].startswith("You are a thorough researcher.")
    assert ref[1] == {"/research/langgraph.md": "LangGraph: agents\n"}


@pytest.mark.parametrize("kind", ["create_agent", "state_graph"])
def test_compiled_subagent(differential, kind):
    """`CompiledSubAgent`: a prebuilt runnable as a subagent, either LangChain's
    `create_agent` graph or a user's own `StateGraph` (built with the engine's class) whose
    state has `messages` and `files`: the parent's files reach it and the ones it returns
    come back. A result without `messages` is an error."""
    def scenario(E):
        from deepagents import CompiledSubAgent
        from langchain.agents import create_agent

        if kind == "create_agent":
            inner_model = _model(_say("Checked: all good.", "c1"))
            runnable = create_agent(inner_model, [], system_prompt="You check things.", name="checker")
        else:
            from typing import Annotated, TypedDict

            def merge(left, right):
                return {**(left or {}), **(right or {})}

            class CheckState(TypedDict):
                messages: Annotated[list, E.add_messages]
                files: Annotated[dict, merge]

            def check(state: CheckState):
                names = sorted(state.get("files") or {})
                return {"messages": [AIMessage(f"Checked {names}.", id="c1")],
                        "files": {"/check.log": _file(f"checked {len(names)} files\n")}}

            g = E.StateGraph(CheckState)
            g.add_node("check", check)
            g.add_edge(E.START, "check")
            runnable = g.compile()
            inner_model = None
        spec = CompiledSubAgent(name="checker", description="Checks the files.", runnable=runnable)
        model = _model(_calls("p1", ("task", {"description": "check everything", "subagent_type": "checker"}, "t1")),
                       _say("The checker is done.", "p2"))
        agent = _deep(E, model, subagents=[spec])
        chunks = _stream(agent, _hi("check", files={"/data.csv": _file("a,b\n")}))
        return chunks, model.seen, inner_model.seen if inner_model else None

    ref = differential(scenario)
    final = _final(ref[0])
    assert final["messages"][-2][1]["type"] == "tool"
    if kind == "state_graph":
        assert sorted(final["files"]) == ["/check.log", "/data.csv"]
        assert final["messages"][-2][1]["content"] == "Checked ['/data.csv']."


def test_two_task_calls_in_one_turn_run_parallel_subagents(differential):
    """One model message with two `task` calls: the two subagents run as parallel tasks of
    one step, each writes its own file, and both files and both answers reach the parent.
    The subagents' models answer by the task they are given (the order they run in varies
    on LangGraph), so what they were sent is compared as a sorted list."""
    def subagent_reply(messages):
        topic = "cats" if "cats" in messages[-1].content or any("cats" in str(m.content) for m in messages) else "dogs"
        if messages[-1].type == "human":
            return _calls(f"{topic}1", ("write_file", {"file_path": f"/{topic}.md", "content": f"all about {topic}\n"},
                                        f"w_{topic}"))
        return _say(f"Wrote /{topic}.md.", f"{topic}2")

    def scenario(E):
        sub_model = Scripted(script=subagent_reply, seen=[])
        model = _model(
            _calls("p1", ("task", {"description": "Write about cats", "subagent_type": "writer"}, "t_cats"),
                   ("task", {"description": "Write about dogs", "subagent_type": "writer"}, "t_dogs")),
            _say("Both pieces are written.", "p2"))
        agent = _deep(E, model, subagents=[{"name": "writer", "description": "Writes pieces.",
                                            "system_prompt": "You write.", "model": sub_model, "tools": []}],
                      checkpointer=E.InMemorySaver())
        out = agent.invoke(_hi("cats and dogs"), _cfg())
        history = _history(agent, _cfg())
        return _msgs(out), _contents(out["files"]), model.seen, sorted(sub_model.seen, key=repr), history

    ref = differential(scenario)
    assert ref[1] == {"/cats.md": "all about cats\n", "/dogs.md": "all about dogs\n"}
    assert [m[2] for m in ref[0] if m[0] == "tool"] == ["Wrote /cats.md.", "Wrote /dogs.md."]


# --- 3. backends ------------------------------------------------------------------------------------


def _store_items(store, prefix=()):
    return [(item.namespace, item.key, item.value) for item in sorted(
        store.search(prefix, limit=100), key=lambda i: (i.namespace, i.key))]


def test_composite_backend_routes_memories_to_a_store_across_threads(differential):
    """`CompositeBackend(default=StateBackend(), routes={"/memories/": StoreBackend(...)})`
    with an `InMemoryStore` passed as `store=` (the same class on both engines): a file
    under `/memories/` goes to the store, namespaced by the user in the run's context (the
    namespace factory reads `Runtime.context`), the others to the thread's state. A second
    thread of the same user finds the memory and not the scratch file."""
    def scenario(E):
        Ctx, store, backend = _user_memories()
        model = _model(
            _calls("a1", ("write_file", {"file_path": "/memories/prefs.md", "content": "likes tea\n"}, "w1"),
                   ("write_file", {"file_path": "/scratch.md", "content": "draft\n"}, "w2")),
            _say("Noted.", "a2"),
            _calls("b1", ("read_file", {"file_path": "/memories/prefs.md"}, "r1"),
                   ("read_file", {"file_path": "/scratch.md"}, "r2")),
            _calls("b2", ("edit_file", {"file_path": "/memories/prefs.md", "old_string": "tea",
                                        "new_string": "green tea"}, "e1")),
            _calls("b3", ("ls", {"path": "/memories"}, "l1"), ("grep", {"pattern": "tea", "path": "/"}, "g1")),
            _say("You like green tea.", "b4"))
        agent = _deep(E, model, backend=backend, store=store, context_schema=Ctx, checkpointer=E.InMemorySaver())
        ctx = {"user_id": "alice"}
        first = agent.invoke(_hi("remember I like tea"), _cfg("t1"), context=ctx)
        after_first = _store_items(store)
        second = agent.invoke(_hi("what do I like?", "h2"), _cfg("t2"), context=ctx)
        return (_msgs(first), _contents(first.get("files")), after_first, _msgs(second),
                _contents(second.get("files")), _store_items(store), model.seen[-1])

    ref = differential(scenario)
    assert ref[1] == {"/scratch.md": "draft\n"}
    assert [(ns, key, value["content"]) for ns, key, value in ref[5]] == [
        (("alice", "memories"), "/prefs.md", "likes green tea\n")]
    assert [m[4] for m in ref[3] if m[0] == "tool"][:2] == ["success", "error"]


def test_store_backend_alone_gets_the_graphs_store(differential):
    """`StoreBackend` with no store of its own takes the graph's (`get_store()` inside the
    tool); files live in the store, none in the state."""
    def scenario(E):
        from deepagents.backends import StoreBackend
        from langgraph.store.memory import InMemoryStore

        store = InMemoryStore()
        model = _model(_calls("m1", ("write_file", {"file_path": "/todo.md", "content": "- buy milk\n"}, "w1")),
                       _calls("m2", ("glob", {"pattern": "*.md"}, "g1")),
                       _say("Saved.", "m3"))
        agent = _deep(E, model, backend=StoreBackend(namespace=lambda rt: ("shared",)), store=store)
        out = agent.invoke(_hi("save my todo"))
        return _msgs(out), out.get("files"), _store_items(store)

    ref = differential(scenario)
    assert ref[1] is None and ref[2][0][1] == "/todo.md"


def test_filesystem_backend_on_a_directory(differential, tmp_path):
    """`FilesystemBackend(root_dir=..., virtual_mode=True)`: the tools read and write real
    files under the directory (one per engine); nothing goes to the state."""
    def scenario(E):
        from deepagents.backends import FilesystemBackend

        root = tmp_path / E.label
        (root / "src").mkdir(parents=True)
        (root / "src" / "main.py").write_text("print('hi')\n")
        model = _model(_calls("m1", ("read_file", {"file_path": "/src/main.py"}, "r1")),
                       _calls("m2", ("edit_file", {"file_path": "/src/main.py", "old_string": "hi",
                                                   "new_string": "hello"}, "e1"),
                              ("write_file", {"file_path": "/NOTES.md", "content": "edited main\n"}, "w1")),
                       _calls("m3", ("ls", {"path": "/"}, "l1")),
                       _say("Edited.", "m4"))
        agent = _deep(E, model, backend=FilesystemBackend(root_dir=root, virtual_mode=True))
        out = agent.invoke(_hi("say hello"))
        disk = {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}
        return _msgs(out), out.get("files"), disk

    ref = differential(scenario)
    assert ref[2] == {"NOTES.md": "edited main\n", "src/main.py": "print('hello')\n"}


# --- 4. streams ---------------------------------------------------------------------------------


_META_KEYS = ("langgraph_node", "langgraph_step", "langgraph_triggers", "langgraph_path",
              "langgraph_checkpoint_ns", "checkpoint_ns", "thread_id", "lc_agent_name", "ls_agent_type",
              "ls_integration", "ls_provider", "ls_model_type", "ls_model_name", "tags")


def test_messages_stream_with_a_subagent_carries_its_metadata(differential):
    """`stream_mode=["messages", "updates"]` with subgraphs on a checkpointed thread: the
    parent's and the subagent's token chunks and tool messages, each with the node, step,
    path, checkpoint namespaces and the agent names deepagents sets (`lc_agent_name`,
    `ls_agent_type="subagent"` inside `task`: in the config the subagent's tools see, not in
    the stream's metadata, on LangGraph)."""
    @tool
    def whoami() -> str:
        """Say which agent runs this tool."""
        from langgraph.config import get_config

        cfg = get_config()
        return (f"{cfg['configurable'].get('ls_agent_type')} {cfg['metadata'].get('lc_agent_name')} "
                f"{sorted(k for k in cfg['configurable'] if not k.startswith('__'))}")

    def scenario(E):
        main_model = _model(
            _calls("p1", ("task", {"description": "Count the files", "subagent_type": "counter"}, "t1"),
                   content="Let me ask the counter."),
            _say("There is one file.", "p2"))
        counter_model = _model(_calls("c1", ("ls", {"path": "/"}, "l1"), content="Listing the root."),
                               _calls("c2", ("whoami", {}, "i1")), _say("One file: /x.txt", "c3"))
        agent = _deep(E, main_model, name="boss", subagents=[{
            "name": "counter", "description": "Counts files.", "system_prompt": "You count.",
            "model": counter_model, "tools": [whoami]}], checkpointer=E.InMemorySaver())
        out = []
        for ns, mode, chunk in agent.stream(_hi("how many files?", files={"/x.txt": _file("x\n")}), _cfg(),
                                            stream_mode=["messages", "updates"], subgraphs=True):
            if mode == "messages":
                msg, meta = chunk
                out.append((ns, mode, type(msg).__name__, msg.content, msg.id,
                            getattr(msg, "tool_call_chunks", None), {k: meta.get(k) for k in _META_KEYS}))
            else:
                out.append((ns, mode, chunk))
        return out

    ref = differential(scenario)
    metas = [c[-1] for c in ref if c[1] == "messages"]
    assert {m["lc_agent_name"] for m in metas} == {"boss", "counter"}
    assert [c[3] for c in ref if c[1] == "messages" and c[2] == "ToolMessage"][1].startswith("subagent counter ")
    assert all(c[0] and c[0][0].startswith("tools:") for c in ref if c[1] == "messages"
               and c[-1]["lc_agent_name"] == "counter")


def test_async_agent_with_a_subagent_and_files(differential):
    """Async: `astream` runs the async tools (the backend's `a*` methods run its sync ones
    in a worker thread, which must still see the task's config) and the subagent through
    `atask` / `ainvoke`; then `ainvoke` continues the thread."""
    async def scenario(E):
        model = _model(
            _calls("p1", ("write_file", {"file_path": "/plan.md", "content": "1. research\n2. write\n"}, "w1"),
                   ("task", {"description": "Do step 1 of /plan.md", "subagent_type": "general-purpose"}, "t1")),
            _calls("s1", ("read_file", {"file_path": "/plan.md"}, "r1"),
                   ("write_file", {"file_path": "/step1.md", "content": "researched\n"}, "w2")),
            _say("Step 1 done.", "s2"),
            _calls("p2", ("edit_file", {"file_path": "/plan.md", "old_string": "1. research",
                                        "new_string": "1. research (done)"}, "e1")),
            _say("Plan updated.", "p3"),
            _calls("p4", ("grep", {"pattern": "done", "output_mode": "content"}, "g1")),
            _say("Step 1 is done.", "p5"))
        agent = _deep(E, model, checkpointer=E.InMemorySaver())
        chunks = await acollect(lambda: agent.astream(_hi("follow the plan"), _cfg(),
                                                      stream_mode=["updates", "values"], subgraphs=True))
        second = await agent.ainvoke(_hi("what is done?", "h2"), _cfg())
        return steps_as_multisets(chunks, lambda c: "tools" not in c[2]), _msgs(second), \
            _contents(second["files"]), model.seen

    ref = differential(scenario)
    assert ref[2]["/plan.md"] == "1. research (done)\n2. write\n" and ref[2]["/step1.md"] == "researched\n"


# --- 5. threads: turns, state updates, history, human review ----------------------------------------


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_files_persist_across_turns_of_a_checkpointed_thread(differential, kind, tmp_path):
    """Two turns on one thread: the first writes a file, the second edits it and sees the
    first turn's messages. The state (with `subgraphs=True`) and the whole history (the
    `files` and `messages` channels are deepagents' `DeltaChannel`s, stored as deltas) are
    the same on both engines."""
    def scenario(E):
        model = _model(
            _calls("a1", ("write_file", {"file_path": "/todo.md", "content": "- milk\n"}, "w1")),
            _say("Added milk.", "a2"),
            _calls("b1", ("edit_file", {"file_path": "/todo.md", "old_string": "- milk\n",
                                        "new_string": "- milk\n- eggs\n"}, "e1")),
            _calls("b2", ("read_file", {"file_path": "/todo.md"}, "r1")),
            _say("Your list: milk, eggs.", "b3"))
        with _saver(E, kind, tmp_path) as saver:
            agent = _deep(E, model, checkpointer=saver)
            first = agent.invoke(_hi("add milk"), _cfg())
            second = _stream(agent, _hi("add eggs", "h2"), _cfg())
            state = agent.get_state(_cfg(), subgraphs=True)
            return (_msgs(first), second, snapshot_summary(state), _history(agent, _cfg()),
                    [len(s) for s in model.seen])

    ref = differential(scenario)
    assert ref[2]["values"]["files"]["/todo.md"]["content"] == "- milk\n- eggs\n"
    assert ref[-1] == [2, 4, 6, 8, 10]


def test_update_state_sets_and_deletes_files_by_hand(differential):
    """A user puts a file into a thread with `update_state` (and deletes another: a `None`
    value removes a path in deepagents' files reducer), then the agent reads and lists
    them; the history shows the update as its own checkpoint."""
    def scenario(E):
        model = _model(_say("Ready.", "a1"),
                       _calls("b1", ("read_file", {"file_path": "/spec.md"}, "r1"), ("ls", {"path": "/"}, "l1")),
                       _say("The spec says: build it.", "b2"))
        agent = _deep(E, model, checkpointer=E.InMemorySaver())
        agent.invoke(_hi("hello", files={"/old.md": _file("stale\n")}), _cfg())
        cfg = agent.update_state(_cfg(), {"files": {"/spec.md": _file("build it\n"), "/old.md": None}})
        after_update = agent.get_state(_cfg())
        out = agent.invoke(_hi("what does the spec say?", "h2"), _cfg())
        return (cfg, snapshot_summary(after_update), _msgs(out), _contents(out["files"]),
                [(s["step"], s["source"], s["next"], sorted(s["values"].get("files") or {}))
                 for s in _history(agent, _cfg())])

    ref = differential(scenario)
    assert ref[3] == {"/spec.md": "build it\n"}
    assert "build it" in ref[2][-3][2]


def test_human_approves_edits_and_rejects_a_write(differential):
    """`interrupt_on={"write_file": True, "edit_file": {...}}`: the run pauses before the
    file tools with the pending actions; the human edits the write's arguments and rejects
    the edit; only the edited write lands."""
    def scenario(E):
        model = _model(
            _calls("a1", ("write_file", {"file_path": "/draft.md", "content": "hello wrold\n"}, "w1"),
                   ("edit_file", {"file_path": "/keep.md", "old_string": "keep", "new_string": "drop"}, "e1")),
            _say("Done as you said.", "a2"))
        agent = _deep(E, model, checkpointer=E.InMemorySaver(),
                      interrupt_on={"write_file": True, "edit_file": {"allowed_decisions": ["approve", "reject"]}})
        first = agent.invoke(_hi("write the draft", files={"/keep.md": _file("keep\n")}), _cfg())
        paused = agent.get_state(_cfg())
        resume = {"decisions": [
            {"type": "edit", "edited_action": {"name": "write_file",
                                               "args": {"file_path": "/draft.md", "content": "hello world\n"}}},
            {"type": "reject", "message": "Leave /keep.md alone."}]}
        out = agent.invoke(E.Command(resume=resume), _cfg())
        return ([i.value for i in first["__interrupt__"]], snapshot_summary(paused), _msgs(out),
                _contents(out["files"]), _history(agent, _cfg()))

    ref = differential(scenario)
    assert ref[3] == {"/draft.md": "hello world\n", "/keep.md": "keep\n"}


def test_a_subagent_pauses_for_review_and_the_parent_resumes(differential):
    """A subagent inherits the top-level `interrupt_on`: its `write_file` pauses the whole
    run from inside the `task` tool; `get_state(subgraphs=True)` shows the pause, and
    `Command(resume=...)` reaches the subagent, whose file comes back to the parent."""
    def scenario(E):
        model = _model(
            _calls("p1", ("task", {"description": "Write /out.md", "subagent_type": "general-purpose"}, "t1")),
            _calls("s1", ("write_file", {"file_path": "/out.md", "content": "result\n"}, "w1")),
            _say("Wrote /out.md.", "s2"),
            _say("The subagent wrote /out.md.", "p2"))
        agent = _deep(E, model, checkpointer=E.InMemorySaver(), interrupt_on={"write_file": True})
        first = _stream(agent, _hi("produce the output"), _cfg())
        paused = agent.get_state(_cfg(), subgraphs=True)
        resumed = _stream(agent, E.Command(resume={"decisions": [{"type": "approve"}]}), _cfg())
        return (first, snapshot_summary(paused), resumed, _history(agent, _cfg()), len(model.seen))

    ref = differential(scenario)
    assert _final(ref[2])["files"]["/out.md"]["content"] == "result\n"
    assert ref[-1] == 4  # no model call is repeated on resume


# --- more programs users write ------------------------------------------------------------------


def test_memory_and_skills_load_from_state_files(differential):
    """`memory=["/AGENTS.md"]` and `skills=["/skills/"]` with the default backend: the
    middleware read the files given in the input in their `before_agent` nodes (through the
    state backend, outside any tool), the memory and the skill list reach the system prompt,
    and the model reads a skill's `SKILL.md` with `read_file`."""
    skill = ("---\nname: release-notes\ndescription: How to write release notes\n---\n"
             "# Release notes\nList changes by type.\n")

    def scenario(E):
        files = {"/AGENTS.md": _file("Always answer in French.\n"),
                 "/skills/release-notes/SKILL.md": _file(skill)}
        model = _model(_calls("m1", ("read_file", {"file_path": "/skills/release-notes/SKILL.md"}, "r1")),
                       _say("Voici les notes.", "m2"))
        agent = _deep(E, model, memory=["/AGENTS.md"], skills=["/skills/"], checkpointer=E.InMemorySaver())
        out = agent.invoke(_hi("write release notes", files=files), _cfg())
        state = agent.get_state(_cfg())
        return _msgs(out), model.seen, sorted(state.values), _history(agent, _cfg())

    ref = differential(scenario)
    system = str(ref[1][0][0][1])
    assert "Always answer in French." in system and "release-notes" in system


def test_an_error_inside_a_subagent_tool_reaches_the_caller(differential):
    """A subagent's tool raises: the error leaves the subagent, the `task` tool and the
    parent run (as on LangGraph, same class and message); the checkpointed thread keeps
    the step's state with the pending `tools` task."""
    @tool
    def deploy(env: str) -> str:
        """Deploy the service."""
        raise RuntimeError(f"deploy to {env} failed: cluster unreachable")

    def scenario(E):
        model = _model(
            _calls("p1", ("task", {"description": "Deploy to prod", "subagent_type": "ops"}, "t1")))
        ops_model = _model(_calls("o1", ("deploy", {"env": "prod"}, "d1")))
        agent = _deep(E, model, subagents=[{"name": "ops", "description": "Deploys.", "system_prompt": "You deploy.",
                                            "model": ops_model, "tools": [deploy]}],
                      checkpointer=E.InMemorySaver())
        chunks = _stream(agent, _hi("ship it"), _cfg())
        state = agent.get_state(_cfg())
        return chunks, snapshot_summary(state)

    ref = differential(scenario)
    assert ref[0][-1] == ("raises", "RuntimeError", "deploy to prod failed: cluster unreachable")


def test_a_long_thread_past_the_delta_snapshot_then_time_travel(differential, tmp_path):
    """deepagents stores `messages` and `files` as `DeltaChannel`s with a snapshot every 50
    steps. A SQLite thread of 30 file-writing turns crosses it; then the user goes back to
    an old checkpoint, reads its state (rebuilt from deltas) and forks a new turn from it."""
    def scenario(E):
        n_turns = 30

        def reply(messages):
            turn = sum(1 for m in messages if m.type == "human")
            if messages[-1].type == "human":
                return _calls(f"a{turn}", ("write_file", {"file_path": f"/log/{turn:02d}.txt",
                                                          "content": f"turn {turn}\n"}, f"w{turn}"))
            return _say(f"Logged turn {turn}.", f"b{turn}")

        model = Scripted(script=reply, seen=[])
        with _saver(E, "sqlite", tmp_path) as saver:
            agent = _deep(E, model, checkpointer=saver)
            for turn in range(1, n_turns + 1):
                agent.invoke(_hi(f"log {turn}", f"h{turn}"), _cfg())
            history = list(agent.get_state_history(_cfg()))
            old = next(s for s in history if s.metadata["step"] == 112)
            forked = agent.invoke(_hi("log again", "hx"), old.config)
            now = agent.get_state(_cfg())
            return (len(history), [(s.metadata["step"], len(s.values.get("files") or {}), len(s.values["messages"]))
                                   for s in history],
                    snapshot_summary(old), _msgs(forked), sorted(forked["files"]), len(now.values["files"]))

    ref = differential(scenario)
    assert ref[-1] == len(ref[4]) == ref[2]["values"]["files"].__len__() + 1


def test_stream_events_of_a_deep_agent(differential):
    """`astream_events(version="v2")`, what chat UIs consume: the tool and model start/end
    events of the parent and of a subagent, by name, with the node and agent they ran in."""
    async def scenario(E):
        model = _model(
            _calls("p1", ("task", {"description": "List /", "subagent_type": "general-purpose"}, "t1")),
            _calls("s1", ("ls", {"path": "/"}, "l1")),
            _say("Only /a.txt.", "s2"),
            _say("There is /a.txt.", "p2"))
        agent = _deep(E, model)
        out = []
        async for ev in agent.astream_events(_hi("what is there?", files={"/a.txt": _file("a\n")}), version="v2"):
            if ev["event"] in ("on_tool_start", "on_tool_end", "on_chat_model_start", "on_chat_model_end"):
                md = ev["metadata"]
                out.append((ev["event"], ev["name"], md.get("langgraph_node"), md.get("lc_agent_name"),
                            md.get("langgraph_checkpoint_ns", "").count("|")))
        return out

    ref = differential(scenario)
    assert ("on_tool_start", "ls", "tools", "general-purpose", 1) in ref


def test_execute_runs_shell_commands_with_a_local_shell_backend(differential, tmp_path):
    """`LocalShellBackend(root_dir=...)` adds the `execute` tool: the command runs in the
    directory (one per engine), writes a file the file tools then read."""
    def scenario(E):
        from deepagents.backends import LocalShellBackend

        root = tmp_path / E.label
        root.mkdir()
        model = _model(_calls("m1", ("execute", {"command": "printf 'x=1\\n' > conf.txt && echo made"}, "x1")),
                       _calls("m2", ("read_file", {"file_path": "/conf.txt"}, "r1")),
                       _say("x is 1.", "m3"))
        agent = _deep(E, model, backend=LocalShellBackend(root_dir=root, virtual_mode=True))
        out = agent.invoke(_hi("make a config"))
        return _msgs(out), (root / "conf.txt").read_text()

    ref = differential(scenario)
    assert ref[1] == "x=1\n" and "made" in ref[0][2][2]


def test_parallel_subagents_stream_under_their_own_namespaces(differential):
    """Two `task` calls streamed with `subgraphs=True`: each subagent's chunks come under
    its own tool task's namespace. LangGraph interleaves the two (its pool runs them at
    once), so the observable is each subagent's own sequence, keyed by the task it was
    given, plus the root chunks with the tool step as a set."""
    def subagent_reply(messages):
        topic = "red" if any("red" in str(m.content) for m in messages if m.type == "human") else "blue"
        if messages[-1].type == "human":
            return _calls(f"{topic}1", ("write_file", {"file_path": f"/{topic}.txt", "content": topic}, f"w_{topic}"))
        return _say(f"{topic} done", f"{topic}2")

    def scenario(E):
        sub_model = Scripted(script=subagent_reply, seen=[])
        model = _model(
            _calls("p1", ("task", {"description": "Paint it red", "subagent_type": "painter"}, "t_red"),
                   ("task", {"description": "Paint it blue", "subagent_type": "painter"}, "t_blue")),
            _say("Painted both.", "p2"))
        agent = _deep(E, model, subagents=[{"name": "painter", "description": "Paints.", "system_prompt": "Paint.",
                                            "model": sub_model, "tools": []}])
        chunks = _stream(agent, _hi("paint"))
        by_ns = {}
        for ns, mode, chunk in chunks:
            if ns:
                by_ns.setdefault(ns, []).append((len(ns), mode, chunk))
        labelled = {}
        for parts in by_ns.values():
            first = next(c for _, mode, c in parts if mode == "values")
            labelled[first["messages"][0].content] = parts
        root = steps_as_multisets([c for c in chunks if not c[0]], lambda c: c[1] != "updates" or "tools" not in c[2])
        return sorted(labelled.items()), root

    ref = differential(scenario)
    assert [label for label, _ in ref[0]] == ["Paint it blue", "Paint it red"]


def test_parallel_subagents_both_pause_and_resume_by_interrupt_id(differential):
    """Two subagents in one step both reach a reviewed `edit_file`: the run pauses with
    two interrupts; the user answers each by its id (approve one, reject the other) in
    one `Command(resume={...})`."""
    def subagent_reply(messages):
        name = "one" if any("one" in str(m.content) for m in messages if m.type == "human") else "two"
        if messages[-1].type == "human":
            return _calls(f"{name}1", ("edit_file", {"file_path": f"/{name}.txt", "old_string": "old",
                                                     "new_string": "new"}, f"e_{name}"))
        return _say(f"{name}: {messages[-1].content}", f"{name}2")

    def scenario(E):
        sub_model = Scripted(script=subagent_reply, seen=[])
        model = _model(
            _calls("p1", ("task", {"description": "Update file one", "subagent_type": "editor"}, "t1"),
                   ("task", {"description": "Update file two", "subagent_type": "editor"}, "t2")),
            _say("Reviewed.", "p2"))
        agent = _deep(E, model, checkpointer=E.InMemorySaver(), interrupt_on={"edit_file": True},
                      subagents=[{"name": "editor", "description": "Edits.", "system_prompt": "Edit.",
                                  "model": sub_model, "tools": []}])
        files = {"/one.txt": _file("old\n"), "/two.txt": _file("old\n")}
        first = agent.invoke(_hi("update both", files=files), _cfg())
        pending = sorted(first["__interrupt__"], key=lambda i: i.value["action_requests"][0]["args"]["file_path"])
        state = agent.get_state(_cfg())
        decisions = {pending[0].id: {"decisions": [{"type": "approve"}]},
                     pending[1].id: {"decisions": [{"type": "reject", "message": "not two"}]}}
        out = agent.invoke(E.Command(resume=decisions), _cfg())
        return ([i.value for i in pending], state.next, sorted(t.name for t in state.tasks), _msgs(out),
                _contents(out["files"]))

    ref = differential(scenario)
    assert ref[-1] == {"/one.txt": "new\n", "/two.txt": "old\n"}


def test_structured_responses_of_the_agent_and_of_a_subagent(differential):
    """`response_format` on a subagent: its structured answer comes back as JSON in the
    `task` result; `response_format=ToolStrategy(...)` on the main agent fills
    `structured_response`."""
    def scenario(E):
        from langchain.agents.structured_output import ToolStrategy
        from pydantic import BaseModel

        class Findings(BaseModel):
            summary: str
            confidence: float

        class Answer(BaseModel):
            text: str

        sub_model = _model(_calls("f1", ("Findings", {"summary": "it works", "confidence": 0.9}, "s1")))
        model = _model(_calls("p1", ("task", {"description": "Investigate", "subagent_type": "analyst"}, "t1")),
                       _calls("p2", ("Answer", {"text": "It works (90%)."}, "a1")))
        agent = _deep(E, model, response_format=ToolStrategy(Answer), subagents=[{
            "name": "analyst", "description": "Analyses.", "system_prompt": "Analyse.", "model": sub_model,
            "tools": [], "response_format": ToolStrategy(Findings)}])
        out = agent.invoke(_hi("does it work?"))
        return _msgs(out), out["structured_response"]

    ref = differential(scenario)
    assert ref[1] == ("Answer", {"text": "It works (90%)."})
    assert '"confidence":0.9' in ref[0][2][2]


def test_a_thread_started_on_langgraph_continues_on_the_engine(differential):
    """One saver (LangGraph's `InMemorySaver`, which lgnb speaks) and one deep agent: the
    first turn runs on LangGraph and pauses at a reviewed `write_file`; the engine resumes
    it, then runs a second turn; `files` and `messages` (both `DeltaChannel`s) are read
    back from LangGraph's checkpoints."""
    def scenario(E):
        from deepagents import create_deep_agent
        from langgraph.checkpoint.memory import InMemorySaver

        model = _model(
            _calls("a1", ("write_file", {"file_path": "/a.md", "content": "first\n"}, "w1")),
            _say("Wrote a.", "a2"),
            _calls("b1", ("edit_file", {"file_path": "/a.md", "old_string": "first", "new_string": "second"}, "e1")),
            _say("Edited a.", "b2"))
        saver = InMemorySaver()
        agent = create_deep_agent(model=model, checkpointer=saver, interrupt_on={"write_file": True})
        paused = agent.invoke(_hi("write a", files={"/seed.md": _file("seed\n")}), _cfg())
        ours = _on(E, agent)
        resumed = ours.invoke(E.Command(resume={"decisions": [{"type": "approve"}]}), _cfg())
        second = ours.invoke(_hi("edit a", "h2"), _cfg())
        return ([i.value for i in paused["__interrupt__"]], _msgs(resumed), _msgs(second),
                _contents(second["files"]), _history(ours, _cfg()))

    ref = differential(scenario)
    assert ref[3] == {"/a.md": "second\n", "/seed.md": "seed\n"}


def test_a_subagent_writes_to_the_store_under_the_callers_context(differential):
    """The general-purpose subagent, invoked inside `task`, writes under `/memories/`: the
    routed `StoreBackend`'s namespace factory reads `Runtime.context` there too (the run's
    context reaches the nested agent), and its state file comes back to the parent."""
    def scenario(E):
        Ctx, store, backend = _user_memories()
        model = _model(
            _calls("p1", ("task", {"description": "Remember the deadline", "subagent_type": "general-purpose"}, "t1")),
            _calls("s1", ("write_file", {"file_path": "/memories/deadline.md", "content": "friday\n"}, "w1"),
                   ("write_file", {"file_path": "/notes/deadline.md", "content": "noted\n"}, "w2")),
            _say("Remembered.", "s2"),
            _say("I will remember: friday.", "p2"))
        agent = _deep(E, model, backend=backend, store=store, context_schema=Ctx)
        out = agent.invoke(_hi("the deadline is friday"), context={"user_id": "bob"})
        return _msgs(out), _contents(out.get("files")), _store_items(store)

    ref = differential(scenario)
    assert [(ns, key) for ns, key, _ in ref[2]] == [(("bob", "memories"), "/deadline.md")]
    assert ref[1] == {"/notes/deadline.md": "noted\n"}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_progress_a_subagent_tool_streams_in_custom_and_tasks_modes(differential, mode):
    """A subagent's tool reports progress with `runtime.stream_writer` (LangChain's
    `ToolRuntime`) and LangGraph's `get_stream_writer()`: with `stream_mode=["custom",
    "tasks"]` and subgraphs, the progress events come under the subagent's namespace
    (LangGraph labels a custom event with the namespace of the graph whose task writes
    it), between the task start/result events of both graphs; the main agent's own tool
    writes at the root."""
    from langchain.tools import ToolRuntime

    @tool
    def crawl(site: str, runtime: ToolRuntime) -> str:
        """Crawl a site."""
        from langgraph.config import get_stream_writer

        runtime.stream_writer({"site": site, "page": 1})
        get_stream_writer()({"site": site, "page": 2})
        return f"crawled {site}: 2 pages"

    @tool
    def announce(runtime: ToolRuntime) -> str:
        """Announce the crawl."""
        runtime.stream_writer({"announce": "starting"})
        return "announced"

    def build(E):
        model = _model(_calls("p1", ("announce", {}, "a1")),
                       _calls("p2", ("task", {"description": "Crawl example.com", "subagent_type": "crawler"}, "t1")),
                       _say("Crawled.", "p3"))
        crawler = _model(_calls("c1", ("crawl", {"site": "example.com"}, "k1")), _say("2 pages.", "c2"))
        return _deep(E, model, tools=[announce], subagents=[{
            "name": "crawler", "description": "Crawls.", "system_prompt": "Crawl.", "model": crawler,
            "tools": [crawl]}])

    def scenario(E):
        return _stream(build(E), _hi("crawl it"), modes=("custom", "tasks"))

    async def ascenario(E):
        return await acollect(lambda: build(E).astream(_hi("crawl it"), stream_mode=["custom", "tasks"],
                                                        subgraphs=True))

    ref = differential(scenario if mode == "sync" else ascenario)
    custom = [(len(ns), c) for ns, m, c in ref if m == "custom"]
    assert custom == [(0, {"announce": "starting"}), (1, {"site": "example.com", "page": 1}),
                      (1, {"site": "example.com", "page": 2})]


def test_checkpoints_and_debug_streams_of_a_subagent_run(differential):
    """`stream_mode=["checkpoints", "debug"]` with subgraphs on a checkpointed thread: the
    subagent run inside `task` saves its own checkpoints under the tool's namespace, and
    they stream with their config, metadata, values, next tasks and parents."""
    def scenario(E):
        model = _model(
            _calls("p1", ("task", {"description": "Write /x.md", "subagent_type": "general-purpose"}, "t1")),
            _calls("s1", ("write_file", {"file_path": "/x.md", "content": "x\n"}, "w1")),
            _say("Wrote /x.md.", "s2"),
            _say("Done.", "p2"))
        agent = _deep(E, model, checkpointer=E.InMemorySaver())
        chunks = _stream(agent, _hi("write x"), _cfg(), modes=("checkpoints", "debug"))
        return chunks, snapshot_summary(agent.get_state(_cfg(), subgraphs=True))

    ref = differential(scenario)
    assert {len(ns) for ns, mode, _ in ref[0] if mode == "checkpoints"} == {0, 1}


def test_v3_stream_surfaces_task_subagents_and_tool_calls(differential):
    """`stream_events(version="v3")`: the `subagents` projection `create_agent` registers
    names each `task` subagent with the tool call that caused it and yields its events
    (messages, values, tool events, under the tool's namespace); `tool_calls` lists the
    main agent's calls, `output` is the final state."""
    def _summary(ev):
        params = ev["params"]
        data = params["data"]
        if ev["method"] == "messages":
            data = data[0]["event"]
        elif ev["method"] == "values":
            data = [m.content for m in data["messages"]]
        elif ev["method"] == "tools":
            data = (data["event"], data.get("tool_call_id"))
        return ev["method"], tuple(params["namespace"]), data

    def scenario(E):
        model = _model(
            _calls("p1", ("task", {"description": "Write /x.md", "subagent_type": "general-purpose"}, "t1"),
                   ("ls", {"path": "/"}, "l0")),
            _calls("s1", ("write_file", {"file_path": "/x.md", "content": "x\n"}, "w1")),
            _say("Wrote /x.md.", "s2"),
            _say("Done.", "p2"),
            _calls("q1", ("task", {"description": "Again", "subagent_type": "general-purpose"}, "t2")),
            _say("Nothing to do.", "q2"),
            _say("Done again.", "q3"))
        agent = _deep(E, model, name="boss")
        run = agent.stream_events(_hi("write x", files={"/seed.md": _file("s\n")}), version="v3")
        subagents = []
        for handle in run.subagents:
            subagents.append((handle.name, handle.cause, [_summary(ev) for ev in handle]))
        run = agent.stream_events(_hi("again"), version="v3")
        calls = [(c.tool_name, c.tool_call_id) for c in run.tool_calls]
        return subagents, calls, _msgs(run.output)

    ref = differential(scenario)
    assert [(name, cause) for name, cause, _ in ref[0]] == [
        ("general-purpose", {"type": "toolCall", "tool_call_id": "t1"})]
    assert any(ev[0] == "tools" and ev[2] == ("tool-finished", "w1") for ev in ref[0][0][2])
    assert ref[1] == [("task", "t2")]
