"""The upstream suites run on lgnb: which sdist, which tests, and how each is set up.

- `langgraph`: LangGraph's own `tests/`, imports rewritten (`rewrite.py`).
- `langchain-agents`: LangChain 1.x's unit tests of `create_agent` and its middleware
  (`tests/unit_tests/agents`), imports rewritten by the same rule, and every agent the
  tests build rebuilt on lgnb with `lgnb.graph.from_langgraph` (`lgnb_agents_plugin.py`):
  what a user does to run a LangChain agent on lgnb.
- `langgraph-prebuilt`: `langgraph.prebuilt`'s own tests (`ToolNode`, `tools_condition`,
  `ValidationNode`, `create_react_agent`), the same way: the graphs the tests build with
  `StateGraph` are lgnb's, `create_react_agent`'s are rebuilt with `from_langgraph`.
- `langgraph-supervisor`, `langgraph-swarm`: the multi-agent libraries' own tests
  (`create_supervisor`, `create_swarm`: agents as subgraphs handing off to each other with
  `Command(graph=Command.PARENT)` from their tools), the same way: the multi-agent graph and
  every agent in it are rebuilt with `from_langgraph`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

# LangChain's unit-test conftest sets up VCR cassettes for its integration tests (it needs
# `langchain_tests` and `vcrpy`); the agent tests use only its BlockBuster fixture.
_AGENTS_CONFTEST = '''"""lgnb: LangChain's unit-test conftest, reduced to the fixture the agent tests use."""
from collections.abc import Iterator

import pytest
from blockbuster import BlockBuster, blockbuster_ctx


@pytest.fixture(autouse=True)
def blockbuster() -> Iterator[BlockBuster]:
    with blockbuster_ctx() as bb:
        yield bb
'''


# the agent libraries' suites write `async def test_...` without marks (their pyproject's
# `asyncio_mode = "auto"`)
_ASYNCIO_AUTO = ("[pytest]\naddopts = -p no:cacheprovider\nasyncio_mode = auto\n"
                 "asyncio_default_fixture_loop_scope = function\n")


@dataclass(frozen=True)
class Suite:
    """One pinned sdist's tests and how to run them."""

    name: str
    dist: str  # the PyPI name
    version: str
    sha256: str
    run: str  # the tests to run, under the sdist's top directory
    known: Path  # known failures, each with its reason
    label: str  # how reports name the suite
    pytest_flags: tuple[str, ...] = ()  # on both engines
    lgnb_plugins: tuple[str, ...] = ()  # on lgnb only
    ini: str = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nmarkers =\n    anyio\n    repeat\n"
    replace: dict[str, str] = field(default_factory=dict)  # file under tests/ -> new text

    @property
    def top(self) -> str:
        return f"{self.dist.replace('-', '_')}-{self.version}"

    @property
    def sdist(self) -> str:
        return f"{self.top}.tar.gz"


LANGGRAPH = Suite(
    name="langgraph",
    dist="langgraph",
    version="1.2.24",
    sha256="86b0dd611b7201cb393da2de0e064029c1bef520f11a5e6ee04be53c2a815bc7",
    run="tests",
    known=HERE / "known_failures.txt",
    label="LangGraph 1.2.24",
    pytest_flags=("-p", "no:asyncio"),
)

LANGCHAIN_AGENTS = Suite(
    name="langchain-agents",
    dist="langchain",
    version="1.5.2",
    sha256="63816aee7f55503db5c4f266a0874047d417957ae70cbf27397325c584982c52",
    run="tests/unit_tests/agents",
    known=HERE / "known_failures_langchain_agents.txt",
    label="LangChain 1.5.2 agents",
    lgnb_plugins=("-p", "lgnb_agents_plugin"),
    ini=_ASYNCIO_AUTO,
    replace={"unit_tests/conftest.py": _AGENTS_CONFTEST},
)

def _agent_library(dist: str, version: str, sha256: str) -> Suite:
    """A library built on LangGraph whose whole `tests/` runs, its agents rebuilt on lgnb."""
    return Suite(
        name=dist,
        dist=dist,
        version=version,
        sha256=sha256,
        run="tests",
        known=HERE / f"known_failures_{dist.replace('-', '_')}.txt",
        label=f"{dist} {version}",
        lgnb_plugins=("-p", "lgnb_agents_plugin"),
        ini=_ASYNCIO_AUTO,
    )


LANGGRAPH_PREBUILT = _agent_library(
    "langgraph-prebuilt", "1.1.3",
    "7ee72332e925000e3d24d2d491dd0ebb9d3a44dbffe650185943b730a832cf6d")
LANGGRAPH_SUPERVISOR = _agent_library(
    "langgraph-supervisor", "0.0.31",
    "0f71d5098fa1ac274423eff08750345450045c1e0dd2480ab7f3e5c1848f6016")
LANGGRAPH_SWARM = _agent_library(
    "langgraph-swarm", "0.1.0",
    "e0f189fc2471d06108fc293da05771d0106d72f755cd130ee37d579561942479")

SUITES = {s.name: s for s in (LANGGRAPH, LANGCHAIN_AGENTS, LANGGRAPH_PREBUILT,
                              LANGGRAPH_SUPERVISOR, LANGGRAPH_SWARM)}
