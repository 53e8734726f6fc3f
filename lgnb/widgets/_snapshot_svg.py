"""The graph drawings of static snapshots: DOT rendered by Graphviz's `dot`, then rebuilt
from a whitelist so the SVG can be embedded in a page that runs no script.

Why rebuild rather than trust `dot`: node names, labels and tooltips come from users and
models, and an SVG is markup. `safe_svg` parses the SVG and writes back only drawing
elements (no `script`, `foreignObject`, `a`, `image`, `use`, `style`) and only geometry and
paint attributes (no `on*` handlers, no `href`, no `style`); every text and attribute value
is escaped again on the way out. Whatever the input, the output cannot run code.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from functools import lru_cache
from html.parser import HTMLParser
from typing import Any

#: SVG elements kept (children of a dropped element are dropped with it).
ELEMENTS = frozenset({"svg", "g", "title", "path", "polygon", "polyline", "ellipse", "circle", "rect",
                      "line", "text", "tspan"})
#: Attributes kept; values are also checked by `_value_ok`.
ATTRIBUTES = frozenset({
    "width", "height", "viewbox", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry",
    "points", "d", "transform", "fill", "stroke", "stroke-width", "stroke-dasharray", "fill-opacity",
    "stroke-opacity", "font-family", "font-size", "font-weight", "font-style", "text-anchor", "class", "id",
    "preserveaspectratio", "xmlns", "dominant-baseline",
})
_SVG_CASE = {"viewbox": "viewBox", "preserveaspectratio": "preserveAspectRatio"}
_BAD_VALUE = re.compile(r"javascript:|data:|url\s*\(|expression\s*\(|[<>]", re.IGNORECASE)
_VOID = frozenset({"path", "polygon", "polyline", "ellipse", "circle", "rect", "line"})
MAX_SVG_CHARS = 60_000


def _value_ok(name: str, value: str) -> bool:
    if name == "xmlns":
        return value == "http://www.w3.org/2000/svg"
    return _BAD_VALUE.search(value) is None


class _Rebuild(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.stack: list[str] = []
        self.skip = 0  # depth inside a dropped element

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        void = tag in _VOID
        if self.skip or tag not in ELEMENTS:
            if not void:
                self.skip += 1
            return
        kept = "".join(f' {_SVG_CASE.get(k, k)}="{html.escape(v, quote=True)}"' for k, v in attrs
                       if v is not None and k in ATTRIBUTES and _value_ok(k, v))
        self.out.append(f"<{tag}{kept}{'/' if void else ''}>")
        if not void:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skip or tag not in ELEMENTS:
            return
        if tag in _VOID:
            self.handle_starttag(tag, attrs)
        else:
            self.handle_starttag(tag, attrs)
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if self.skip:
            self.skip -= 1
            return
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
            self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if not self.skip and self.stack and self.stack[-1] in ("title", "text", "tspan"):
            self.out.append(html.escape(data, quote=False))

    def result(self) -> str:
        return "".join(self.out) + "".join(f"</{t}>" for t in reversed(self.stack))


def safe_svg(svg: str) -> str:
    """`svg` (e.g. Graphviz output) rebuilt from drawing elements and attributes only."""
    start = svg.find("<svg")
    if start < 0:
        return ""
    parser = _Rebuild()
    parser.feed(svg[start:])
    parser.close()
    return parser.result()


@lru_cache(maxsize=64)
def svg_for_dot(dot: str, *, timeout: float = 20.0) -> str:
    """The sanitized SVG of `dot`, or "" when Graphviz's `dot` is missing or fails (the
    snapshot then says the drawing is missing; the rest of it stands)."""
    exe = shutil.which("dot")
    if exe is None or not dot:
        return ""
    try:
        proc = subprocess.run([exe, "-Tsvg"], input=dot.encode("utf-8", "replace"), capture_output=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if proc.returncode != 0:
        return ""
    svg = safe_svg(proc.stdout.decode("utf-8", "replace"))
    return svg if len(svg) <= MAX_SVG_CHARS else ""


def path_marks(drawing: Any, visited: Iterable[str], taken: Iterable[Iterable[str]]) -> dict[str, str]:
    """SVG element id → class for the path a run took: its visited nodes and taken edges
    (`Drawing` keys, as the run and lens views hold them)."""
    seen, edges = set(visited), {tuple(t) for t in taken}
    marks = {n.dot_id: "lgnb-snap-visited" for n in getattr(drawing, "nodes", ()) if n.key in seen}
    marks.update({e.dot_id: "lgnb-snap-taken" for e in getattr(drawing, "edges", ())
                  if (e.source, e.target) in edges})
    return marks


def mark(svg: str, marks: Mapping[str, str]) -> str:
    """`svg` (from `safe_svg`) with a class added to the groups whose id is in `marks`."""
    for element_id, cls in marks.items():
        for kind in ("node", "edge"):
            found = f'id="{html.escape(element_id, quote=True)}" class="{kind}"'
            svg = svg.replace(found, f'{found[:-1]} {html.escape(cls, quote=True)}"')
    return svg
