"""The written rule that turns LangGraph's own tests into tests of lgnb.

A LangGraph program ports to lgnb by replacing `langgraph` with `lgnb` in its imports. This
module applies exactly that rule to the test files of the pinned LangGraph sdist, with three
clarifications a user would make too:

1. **Engine modules move.** An import of a module that the `langgraph` distribution itself
   ships (`langgraph.graph`, `langgraph.types`, `langgraph.func`, ... — read from the sdist's
   file list, not a hand-made list) becomes the same path under `lgnb`, whether or not lgnb
   has it: a missing module fails the test, it never falls back to LangGraph.
2. **Ecosystem modules stay, unless lgnb ships the same path.** `langgraph.checkpoint.*`,
   `langgraph.store.*`, `langgraph.cache.*` and `langgraph.prebuilt.*` belong to other
   distributions lgnb builds on (DESIGN.md). Where lgnb ships the same module path
   (`lgnb.checkpoint.memory`, `lgnb.checkpoint.sqlite`, `lgnb.checkpoint.postgres`, ...) the
   import moves to lgnb's, so the suite's fixtures run on lgnb's savers.
3. **Private names are not part of the port.** A `_`-prefixed module or name of the
   `langgraph` distribution is LangGraph's implementation, not its API. Such an import is
   bound to a `PrivateName` placeholder; a test that *uses* one is reported as
   "private" (with the name) instead of passed or failed. The exception are names that are
   output data — strings that appear in checkpoints and stream output, listed in
   `OUTPUT_DATA` — which are bound to lgnb's values of the same names.

The rewrite is line-preserving (tracebacks point at the original line numbers).
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# Private LangGraph names whose values are data that users see in outputs (task paths in
# checkpoints, pending-write channels, stream keys). They map to lgnb's constants module.
OUTPUT_DATA: dict[str, str] = {
    name: "lgnb._internal.constants"
    for name in (
        "PULL", "PUSH", "ERROR", "INTERRUPT", "RESUME", "RETURN", "NO_WRITES",
        "NULL_TASK_ID", "INPUT", "TASKS", "NS_SEP", "NS_END", "START", "END",
        "OVERWRITE", "CONF",
    )
}
# The empty-channel sentinel that public `BaseChannel.checkpoint()` returns.
OUTPUT_DATA["MISSING"] = "lgnb.channels.base"

PLACEHOLDER_MODULE = "tests._lgnb_private"
_DOTTED = re.compile(r"langgraph(\.[A-Za-z_][A-Za-z0-9_]*)+")


@dataclass
class Rewrite:
    """What the rule did to one file."""

    source: str
    moved: set[str] = field(default_factory=set)  # langgraph modules that became lgnb ones
    kept: set[str] = field(default_factory=set)  # ecosystem modules left as they are
    private: set[str] = field(default_factory=set)  # private names bound to placeholders


def _is_private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def _lgnb_has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError, AttributeError):
        return False


class Rule:
    """The import rule, given the module paths the `langgraph` distribution ships."""

    def __init__(self, engine_modules: Iterable[str]) -> None:
        self.engine = frozenset(engine_modules)

    def is_engine(self, module: str) -> bool:
        return module in self.engine or any(m.startswith(module + ".") for m in self.engine)

    def target(self, module: str) -> str | None:
        """The module to import instead of `module` (None: keep LangGraph's)."""
        if module == "langgraph" or self.is_engine(module):
            return "lgnb" + module[len("langgraph"):]
        lgnb = "lgnb" + module[len("langgraph"):]
        return lgnb if _lgnb_has(lgnb) else None

    # ------------------------------------------------------------------ files --
    def apply(self, source: str) -> Rewrite:
        tree = ast.parse(source)
        lines = source.splitlines(keepends=True)
        out = Rewrite(source)
        edits: list[tuple[int, int, str]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                node.module == "langgraph" or node.module.startswith("langgraph.")
            ):
                new = self._from_import(node, out)
            elif isinstance(node, ast.Import) and any(
                a.name == "langgraph" or a.name.startswith("langgraph.") for a in node.names
            ):
                new = self._import(node, out)
            else:
                continue
            if new is not None:
                edits.append((node.lineno, node.end_lineno or node.lineno, new))
        self._strings(tree, lines, out)
        for start, end, new in sorted(edits, reverse=True):
            first = lines[start - 1]
            indent = first[: len(first) - len(first.lstrip())]
            lines[start - 1 : end] = [indent + new + "\n"] + ["\n"] * (end - start)
        out.source = "".join(lines)
        return out

    def _strings(self, tree: ast.AST, lines: list[str], out: Rewrite) -> None:
        """Dotted paths in strings (`mocker.patch("langgraph.pregel._x.Y")`) follow the rule
        too: an engine path moves to lgnb, a private one becomes a placeholder, whose use
        (patching it) marks the test private."""
        spots = []
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and _DOTTED.fullmatch(node.value)
                and node.lineno == node.end_lineno
            ):
                parts = node.value.split(".")
                module = next(
                    (".".join(parts[:i]) for i in range(len(parts), 1, -1) if self.is_engine(".".join(parts[:i]))),
                    None,
                )
                if module is None:
                    continue
                if _is_private(node.value):
                    out.private.add(node.value)
                    new = f"__import__({PLACEHOLDER_MODULE!r}, fromlist=['_']).PrivateName({node.value!r})"
                else:
                    new = repr("lgnb" + node.value[len("langgraph"):])
                spots.append((node.lineno, node.col_offset, node.end_col_offset or 0, new))
        for lineno, start, end, new in sorted(spots, reverse=True):
            raw = lines[lineno - 1].encode("utf-8")  # ast offsets count UTF-8 bytes
            lines[lineno - 1] = (raw[:start] + new.encode("utf-8") + raw[end:]).decode("utf-8")

    def _from_import(self, node: ast.ImportFrom, out: Rewrite) -> str | None:
        module = node.module or ""
        engine = module == "langgraph" or self.is_engine(module)
        target = self.target(module)
        stmts: list[str] = []
        plain: list[str] = []
        for alias in node.names:
            bound = alias.asname or alias.name
            full = f"{module}.{alias.name}"
            if engine and (_is_private(module) or _is_private(alias.name)):
                if alias.name in OUTPUT_DATA:
                    stmts.append(f"from {OUTPUT_DATA[alias.name]} import {alias.name} as {bound}")
                else:
                    out.private.add(full)
                    stmts.append(f"{bound} = __import__({PLACEHOLDER_MODULE!r}, fromlist=['_']).PrivateName({full!r})")
                continue
            plain.append(alias.name if alias.asname is None else f"{alias.name} as {alias.asname}")
        if plain:
            if target is None:
                out.kept.add(module)
                stmts.insert(0, f"from {module} import {', '.join(plain)}")
            else:
                out.moved.add(module)
                stmts.insert(0, f"from {target} import {', '.join(plain)}")
        return "; ".join(stmts)

    def _import(self, node: ast.Import, out: Rewrite) -> str | None:
        stmts = []
        for alias in node.names:
            name = alias.name
            if name != "langgraph" and not name.startswith("langgraph."):
                stmts.append(f"import {name}" + (f" as {alias.asname}" if alias.asname else ""))
                continue
            target = self.target(name)
            if target is None:
                out.kept.add(name)
                stmts.append(f"import {name}" + (f" as {alias.asname}" if alias.asname else ""))
            elif alias.asname:
                out.moved.add(name)
                stmts.append(f"import {target} as {alias.asname}")
            else:
                # `import langgraph.x` binds `langgraph`: bind lgnb under that name instead.
                out.moved.add(name)
                stmts.append(f"import {target}; langgraph = __import__('lgnb')")
        return "; ".join(stmts)


def engine_modules_from_sdist(paths: Iterable[str], root: str) -> set[str]:
    """Module paths of the `langgraph` package, from the sdist member names under `root`."""
    mods: set[str] = set()
    prefix = root.rstrip("/") + "/langgraph/"
    for p in paths:
        if not p.startswith(prefix) or not p.endswith(".py"):
            continue
        rel = p[len(root.rstrip("/")) + 1 : -3].split("/")
        if rel[-1] == "__init__":
            rel = rel[:-1]
        mods.add(".".join(rel))
    return mods
