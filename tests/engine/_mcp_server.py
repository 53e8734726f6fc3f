"""A small MCP server (FastMCP, stdio) for tests/engine/test_diff_users_mcp_tools.py: what
a user's agent loads with `langchain-mcp-adapters`.

Run as `python _mcp_server.py`; the tests start it with `sys.executable` over stdio.
Tools: plain results (`add`, `lookup_city`), structured content (`forecast`: text and
`structuredContent`, which the adapter returns as the tool message's artifact), an error
(`divide` by zero: `isError`), progress notifications and log messages
(`index_documents`), a slow-ish tool for parallel calls (`fetch_page`, awaiting a sleep),
an echo of the arguments it received (`echo_args`: interceptors that rewrite them), and an
image block (`chart`). A resource and a prompt too.
"""

from __future__ import annotations

import asyncio
import sys

# jsonschema loads `rfc3987_syntax` when installed, which builds a grammar for a second;
# the server validates no IRIs: start in half a second instead
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from mcp.server.fastmcp import Context, FastMCP  # noqa: E402
from mcp.server.fastmcp.utilities.types import Image  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

mcp = FastMCP("demo", log_level="WARNING")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def lookup_city(name: str) -> str:
    """The country a city is in."""
    countries = {"oslo": "Norway", "lima": "Peru", "kyoto": "Japan"}
    return f"{name} is in {countries.get(name.lower(), 'an unknown country')}"


class Forecast(TypedDict):
    city: str
    celsius: int
    sky: str


@mcp.tool()
def forecast(city: str, days: int = 1) -> Forecast:
    """Tomorrow's weather in a city, as structured data."""
    return {"city": city, "celsius": 10 + len(city) + days, "sky": "clear" if days % 2 else "cloudy"}


@mcp.tool()
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    if b == 0:
        raise ValueError("cannot divide by zero")
    return a / b


@mcp.tool()
async def index_documents(folder: str, count: int, ctx: Context) -> str:
    """Index the documents of a folder, reporting progress and logging as it goes."""
    await ctx.info(f"indexing {folder}")
    for i in range(1, count + 1):
        await ctx.report_progress(i, count, f"{folder}/doc{i}")
    await ctx.warning(f"{folder}: 1 document skipped")
    return f"indexed {count} documents in {folder}"


@mcp.tool()
async def fetch_page(url: str, delay: float = 0.05) -> str:
    """Fetch a page (slowly)."""
    await asyncio.sleep(delay)
    return f"<html>{url}</html>"


@mcp.tool()
def echo_args(text: str, times: int = 1, user: str = "nobody") -> dict:
    """Echo the arguments the server received."""
    return {"text": text * times, "user": user}


@mcp.tool()
def chart(title: str) -> list:
    """A chart: a caption and a tiny PNG."""
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")
    return [f"chart of {title}", Image(data=png, format="png")]


@mcp.resource("notes://team", mime_type="text/plain")
def team_notes() -> str:
    """The team's notes."""
    return "Standup at 9. Deploys on Thursday."


@mcp.prompt()
def triage(ticket: str) -> str:
    """A triage instruction for a support ticket."""
    return f"Triage this ticket and say which tool to use: {ticket}"


if __name__ == "__main__":
    mcp.run("stdio")
