"""Differential harness: run the same graph-building code on LangGraph and on lgnb.

A *scenario* is a callable ``scenario(E) -> observable`` (or an ``async def``).  ``E`` is an
:class:`Engine` namespace exposing the public names a LangGraph program imports
(``E.StateGraph``, ``E.Send``, ``E.errors.InvalidUpdateError``, ...).  The harness runs the
scenario once per engine, normalizes the two observables and compares them.

Normalization touches ONLY identifiers and timestamps:

* UUID-like strings, 32-hex task/interrupt ids (LangGraph's xxh3 ids), LangChain run ids
  (``run-...`` / ``lc_run--...``), the ``id`` of task payloads and of ``Interrupt``
  objects, ``ts``/``timestamp``/``created_at`` fields and namespace segments
  (``"node:<task_id>"`` / ``"a:<id>|b:<id>"``).
  Every distinct id is mapped to a placeholder ``<id1>``, ``<id2>``, ... by order of first
  appearance, so "the same id twice" is still checked.
* Engine-owned objects (``Send``, ``Command``, ``Interrupt``, ``StateSnapshot``,
  ``GraphOutput``, ...) become plain tuples tagged with their class name, so an lgnb
  ``Send`` compares equal to a LangGraph ``Send``.  User classes (dataclass/pydantic
  states, defined inside the scenario and so distinct per engine) are compared by class
  name and field values.

Exceptions escaping a scenario are captured as ``("raises", class_name, message)``.
``exc=`` chooses how messages compare:

* ``"full"`` (default): class and message must be identical;
* ``"extends"``: same class, and every line of LangGraph's message must occur in lgnb's
  (lgnb may add help but keeps LangGraph's text, so code matching on it still works);
* ``"class"``: class names only (lgnb rewords the message; say why in the test).
"""

from __future__ import annotations

import asyncio
import sys
import dataclasses
import enum
import importlib
import inspect
import os
import logging
import pprint
import re
import difflib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Callable

# ---------------------------------------------------------------------------------------
# engine namespaces
# ---------------------------------------------------------------------------------------

# public name -> module suffix (relative to the engine's root package)
PUBLIC_NAMES: dict[str, str] = {
    # .graph
    "StateGraph": "graph",
    "START": "graph",
    "END": "graph",
    "MessagesState": "graph",
    # .graph.message
    "add_messages": "graph.message",
    "REMOVE_ALL_MESSAGES": "graph.message",
    # .types
    "Send": "types",
    "Command": "types",
    "RetryPolicy": "types",
    "StreamWriter": "types",
    "Overwrite": "types",
    "interrupt": "types",
    "Interrupt": "types",
    "StateSnapshot": "types",
    "GraphOutput": "types",
    "CachePolicy": "types",
    # .config
    "get_stream_writer": "config",
    "get_config": "config",
    "get_store": "config",
    # .runtime
    "Runtime": "runtime",
    "get_runtime": "runtime",
    # .managed
    "RemainingSteps": "managed",
    "IsLastStep": "managed",
    # .checkpoint.memory
    "InMemorySaver": "checkpoint.memory",
}

MODULES: dict[str, str] = {
    "errors": "errors",
    "channels": "channels",
    "types": "types",
    "config": "config",
    "runtime": "runtime",
    "graph_mod": "graph",
    "message": "graph.message",
    "checkpoint_memory": "checkpoint.memory",
    "func": "func",
}


class EngineMissing(Exception):
    """The candidate engine does not provide a public name (yet).

    Never captured as an observable: it fails the test that needs the name.
    """


class Engine:
    """Lazy namespace of one engine's public API (``E.StateGraph``, ``E.errors``, ...)."""

    def __init__(self, root: str, label: str | None = None) -> None:
        self.root = root  # "langgraph" or "lgnb"
        self.label = label or root
        self._cache: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"<Engine {self.label} ({self.root})>"

    def module(self, suffix: str) -> Any:
        name = f"{self.root}.{suffix}"
        try:
            return importlib.import_module(name)
        except Exception as e:  # ImportError, or an engine bug at import time
            raise EngineMissing(f"cannot import {name}: {type(e).__name__}: {e}") from e

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        cache = self.__dict__["_cache"]
        if name in cache:
            return cache[name]
        if name in MODULES:
            value = self.module(MODULES[name])
        elif name in PUBLIC_NAMES:
            mod = self.module(PUBLIC_NAMES[name])
            try:
                value = getattr(mod, name)
            except AttributeError as e:
                raise EngineMissing(f"{mod.__name__} has no attribute {name!r}") from e
        else:
            raise AttributeError(f"Engine has no public name {name!r}; add it to PUBLIC_NAMES")
        cache[name] = value
        return value


def selftest_enabled() -> bool:
    return os.environ.get("LGNB_DIFF_SELFTEST", "").strip() not in ("", "0", "false", "no")


def reference_engine() -> Engine:
    return Engine("langgraph", "langgraph")


def candidate_engine(selftest: bool | None = None) -> Engine:
    if selftest is None:
        selftest = selftest_enabled()
    if selftest:
        return Engine("langgraph", "langgraph(selftest)")
    return Engine("lgnb", "lgnb")


# ---------------------------------------------------------------------------------------
# capturing helpers usable inside scenarios
# ---------------------------------------------------------------------------------------


def exc_obs(e: BaseException) -> tuple:
    """An exception as an observable. A NameError raised by the tests' own code is
    re-raised instead: it is the scenario's bug (a missing import, a typo), not an
    engine's behaviour, and both engines raising it would otherwise compare equal."""
    if isinstance(e, NameError) and _raised_in_tests(e):
        raise e
    return ("raises", type(e).__name__, str(e))


def _raised_in_tests(e: BaseException) -> bool:
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and f"{os.sep}tests{os.sep}" in tb.tb_frame.f_code.co_filename


def capture(fn: Callable[[], Any]) -> Any:
    """Call ``fn()``; return its value or ``("raises", cls, msg)``."""
    try:
        return fn()
    except EngineMissing:
        raise
    except Exception as e:
        return exc_obs(e)


def attempt(fn: Callable[[], Any]) -> Any:
    """Call ``fn()`` for its effect: ``"ok"`` or ``("raises", cls, msg)``."""
    try:
        fn()
        return "ok"
    except EngineMissing:
        raise
    except Exception as e:
        return exc_obs(e)


async def acapture(fn: Callable[[], Any]) -> Any:
    try:
        return await fn()
    except EngineMissing:
        raise
    except Exception as e:
        return exc_obs(e)


def collect(iterable_factory: Callable[[], Any]) -> list:
    """Drain a (sync) stream into a list; an exception becomes the final item."""
    out: list = []
    try:
        for item in iterable_factory():
            out.append(item)
    except EngineMissing:
        raise
    except Exception as e:
        out.append(exc_obs(e))
    return out


async def acollect(aiterable_factory: Callable[[], Any]) -> list:
    out: list = []
    try:
        async for item in aiterable_factory():
            out.append(item)
    except EngineMissing:
        raise
    except Exception as e:
        out.append(exc_obs(e))
    return out


def steps_as_multisets(chunks: list, is_barrier: Callable[[Any], bool]) -> list:
    """Group chunks between barriers; each group becomes a sorted multiset.

    Used where LangGraph itself emits in completion order (parallel sync nodes run in a
    thread pool) so only the per-step *set* of events is deterministic.
    """
    def key(c: Any) -> str:
        # ids are engine-specific: sort on the content with ids normalized per item
        return repr(Normalizer()(c))

    out: list = []
    group: list = []
    for c in chunks:
        if is_barrier(c):
            if group:
                out.append(("unordered", sorted(group, key=key)))
                group = []
            out.append(c)
        else:
            group.append(c)
    if group:
        out.append(("unordered", sorted(group, key=key)))
    return out


# ---------------------------------------------------------------------------------------
# normalization
# ---------------------------------------------------------------------------------------

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_HEX = r"\b[0-9a-f]{32}\b"
_RUN = r"(?:lc_run--|run-|run--)(?:" + _UUID + r"|[0-9a-fA-F-]{8,})(?:-\d+)?"
_ID_RE = re.compile(f"{_RUN}|{_UUID}|{_HEX}")
_ADDR_RE = re.compile(r" at 0x[0-9a-fA-F]+")
_TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?$")
_TS_ANY_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?")

# dict keys whose value is an id regardless of its format (lgnb may choose another scheme)
_ID_KEYS = {"id", "task_id", "checkpoint_id", "run_id", "parent_run_id", "interrupt_id"}
_TS_KEYS = {"ts", "timestamp", "created_at"}
_NS_KEYS = {"checkpoint_ns", "langgraph_checkpoint_ns", "parent_checkpoint_ns", "ns"}
# dict shapes in which the "id" key is an engine-generated id (task payloads etc.)
_TASKY = ({"name", "input", "triggers"}, {"name", "result"}, {"name", "error"},
          {"name", "interrupts"}, {"name", "path"}, {"value", "response_schema"})
# a namespace tuple element: "node:<task id>" (any id format of 8+ id-ish characters)
_NS_PART_RE = re.compile(r"^[^:|]+:[0-9A-Za-z_.-]{8,}$")

# classes that belong to an engine (normalized to their public shape, by class name)
ENGINE_CLASSES = {
    "Send": ("node", "arg"),
    "Command": ("graph", "update", "resume", "goto"),
    "Interrupt": ("value", "id"),
    "GraphOutput": ("value", "interrupts"),
    "Overwrite": ("value",),
    "RetryPolicy": None,
    "StateSnapshot": ("values", "next", "config", "metadata", "created_at",
                      "parent_config", "tasks", "interrupts"),
    "PregelTask": ("id", "name", "path", "error", "interrupts", "state", "result"),
}


class Normalizer:
    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def id(self, s: str) -> str:
        if s not in self.ids:
            self.ids[s] = f"<id{len(self.ids) + 1}>"
        return self.ids[s]

    def ns_string(self, s: str) -> str:
        # "a:<id>|b:<id>"  -> "a:<idN>|b:<idM>"; plain "a|b" unchanged
        parts = []
        for seg in s.split("|"):
            if ":" in seg:
                name, _, tid = seg.partition(":")
                parts.append(f"{name}:{self.id(tid)}" if tid else seg)
            else:
                parts.append(seg)
        return "|".join(parts)

    def string(self, s: str) -> str:
        if _TS_RE.match(s):
            return "<ts>"
        s = _TS_ANY_RE.sub("<ts>", s)  # timestamps inside printed text
        return _ID_RE.sub(lambda m: self.id(m.group(0)), s)

    def ns_tuple(self, t: tuple) -> tuple:
        return tuple(self.ns_string(x) if isinstance(x, str) else self(x) for x in t)

    def __call__(self, v: Any) -> Any:  # noqa: C901 - one dispatch table
        if v is None or isinstance(v, (bool, int, float, complex, bytes)):
            return v
        if isinstance(v, str):
            return self.string(v)
        if isinstance(v, enum.Enum):
            return ("enum", type(v).__name__, v.name)
        if isinstance(v, BaseException):
            return ("exc", type(v).__name__, self.string(str(v)))
        if isinstance(v, type):
            return ("class", v.__name__)
        cls = type(v)
        cname = cls.__name__
        # LangChain messages (shared by both engines) -> plain dict, ids normalized
        if _is_lc_message(v):
            d = v.model_dump()
            d.pop("id", None)
            out = {k: self(x) for k, x in d.items()}
            out["id"] = self.id(v.id) if v.id and _ID_RE.fullmatch(v.id) else v.id
            return (cname, out)
        if cname in ENGINE_CLASSES and _is_engine_obj(v):
            fields = ENGINE_CLASSES[cname]
            if fields is None:
                fields = tuple(getattr(cls, "_fields", ()))
            vals = []
            for f in fields:
                x = getattr(v, f, None)
                if f in ("id",) and isinstance(x, str):
                    vals.append(self.id(x))
                elif f == "created_at" and x is not None:
                    vals.append("<ts>")
                else:
                    vals.append(self(x))
            return (cname, *vals)
        if isinstance(v, Mapping):
            return self.mapping(v)
        if isinstance(v, tuple) and hasattr(v, "_fields"):  # NamedTuple
            return (cname, *[self(x) for x in v])
        if type(v) is tuple and v and all(isinstance(x, str) and _NS_PART_RE.match(x) for x in v):
            return tuple(self.ns_string(x) for x in v)  # a stream namespace
        if isinstance(v, (list, tuple)):
            return type(v)(self(x) for x in v) if type(v) in (list, tuple) else [self(x) for x in v]
        if isinstance(v, (set, frozenset)):
            return ("set", sorted((self(x) for x in v), key=repr))
        if dataclasses.is_dataclass(v):
            return (cname, {f.name: self(getattr(v, f.name)) for f in dataclasses.fields(v)})
        if hasattr(v, "model_dump") and hasattr(type(v), "model_fields"):  # pydantic v2
            return (cname, {k: self(getattr(v, k)) for k in type(v).model_fields})
        if _is_engine_obj(v):
            # other engine-owned objects (builders, channels, ...): internals differ by design
            return ("engine-object", cname)
        if callable(v) and hasattr(v, "__name__"):
            return ("callable", v.__name__)
        if hasattr(v, "__dict__"):
            return (cname, {k: self(x) for k, x in vars(v).items() if not k.startswith("_")})
        return (cname, _ADDR_RE.sub(" at 0x?", repr(v)))

    def mapping(self, m: Mapping) -> dict:
        keys = set(m.keys()) if all(isinstance(k, str) for k in m) else set()
        tasky = "id" in keys and any(shape <= keys for shape in _TASKY)
        out = {}
        for k, x in m.items():
            nk = self(k) if not isinstance(k, str) else (self.ns_string(k) if ":" in k else k)
            if isinstance(k, str) and isinstance(x, str):
                if k in _TS_KEYS:
                    out[nk] = "<ts>"
                    continue
                if k in _NS_KEYS:
                    out[nk] = self.ns_string(x)
                    continue
                if k in _ID_KEYS and k != "id":
                    out[nk] = self.id(x)
                    continue
                if k == "id" and tasky:
                    out[nk] = self.id(x)
                    continue
            if isinstance(k, str) and k in _NS_KEYS and isinstance(x, (tuple, list)):
                out[nk] = type(x)(self.ns_string(s) if isinstance(s, str) else self(s) for s in x)
                continue
            if isinstance(k, str) and k in _TS_KEYS and x is not None and not isinstance(x, (dict, list)):
                out[nk] = "<ts>"
                continue
            out[nk] = self(x)
        return out


def _is_lc_message(v: Any) -> bool:
    try:
        from langchain_core.messages import BaseMessage
    except Exception:  # pragma: no cover
        return False
    return isinstance(v, BaseMessage)


def _is_engine_obj(v: Any) -> bool:
    mod = type(v).__module__ or ""
    return mod.startswith("langgraph") or mod.startswith("lgnb")


def normalize(v: Any) -> Any:
    return Normalizer()(v)


# ---------------------------------------------------------------------------------------
# running and comparing
# ---------------------------------------------------------------------------------------


def run_scenario(scenario: Callable[[Engine], Any], engine: Engine) -> Any:
    try:
        result = scenario(engine)
        if inspect.isawaitable(result):
            result = _run_coro(result)
        return result
    except EngineMissing:
        raise
    except Exception as e:
        return exc_obs(e)


def _run_coro(coro: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    # called from inside a running loop (async test): run in a fresh thread's loop
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        return ex.submit(asyncio.run, coro).result()


def _only_class(v: Any) -> Any:
    """For ``exc="class"``: drop exception messages everywhere in the observable."""
    if isinstance(v, tuple) and len(v) == 3 and v[0] in ("raises", "exc") and isinstance(v[1], str):
        return (v[0], v[1], "<msg>")
    if isinstance(v, dict):
        return {k: _only_class(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_only_class(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_only_class(x) for x in v)
    return v


def _is_exc_obs(v: Any) -> bool:
    return (isinstance(v, tuple) and len(v) == 3 and v[0] in ("raises", "exc")
            and isinstance(v[1], str) and isinstance(v[2], str))


def _accept_extended_messages(ref: Any, cand: Any) -> Any:
    """For ``exc="extends"``: where both sides raise the same class and every line of
    LangGraph's message occurs in lgnb's (lgnb added help, kept the original text),
    treat the candidate message as equal to the reference one."""
    if _is_exc_obs(ref) and _is_exc_obs(cand):
        if ref[1] == cand[1] and all(line in cand[2] for line in ref[2].splitlines() if line.strip()):
            return ref
        return cand
    if isinstance(ref, dict) and isinstance(cand, dict):
        return {k: _accept_extended_messages(ref[k], x) if k in ref else x for k, x in cand.items()}
    if isinstance(ref, (list, tuple)) and isinstance(cand, (list, tuple)) and len(ref) == len(cand):
        out = [_accept_extended_messages(a, b) for a, b in zip(ref, cand)]
        return type(cand)(out) if type(cand) in (list, tuple) else out
    return cand


def fmt(v: Any) -> str:
    return pprint.pformat(v, width=100, sort_dicts=False)


class DifferentialMismatch(AssertionError):
    pass


def compare(ref: Any, cand: Any, *, exc: str = "full", ref_label: str = "langgraph",
            cand_label: str = "lgnb") -> tuple[Any, Any]:
    nref, ncand = normalize(ref), normalize(cand)
    if exc == "class":
        nref, ncand = _only_class(nref), _only_class(ncand)
    elif exc == "extends":
        ncand = _accept_extended_messages(nref, ncand)
    elif exc != "full":
        raise ValueError(f"exc must be 'full', 'extends' or 'class', not {exc!r}")
    if nref != ncand:
        a, b = fmt(nref).splitlines(), fmt(ncand).splitlines()
        diff = "\n".join(difflib.unified_diff(a, b, ref_label, cand_label, lineterm="", n=3))
        raise DifferentialMismatch(f"observable differs ({ref_label} vs {cand_label}):\n{diff}")
    return nref, ncand


def differential(scenario: Callable[[Engine], Any], *, exc: str = "full",
                 selftest: bool | None = None, expect: Any = ...) -> Any:
    """Run ``scenario`` on LangGraph and on the candidate; assert equal observables.

    Returns the normalized reference observable (so a test may assert more about it).
    ``expect`` (optional) is checked against the *reference* observable, un-normalized:
    it guards the scenario itself against silently testing nothing.
    """
    if sys.version_info < (3, 11) and inspect.iscoroutinefunction(scenario):
        import pytest

        pytest.skip(
            "LangGraph 1.2, the reference, does not pass its config to async nodes before "
            "Python 3.11 (no context argument to create_task); lgnb does, so the reference "
            "differs: run the differential suite on Python 3.11+"
        )
    ref_e, cand_e = reference_engine(), candidate_engine(selftest)
    ref = run_scenario(scenario, ref_e)
    if expect is not ...:
        assert ref == expect, f"reference observable changed:\n{fmt(ref)}\n!=\n{fmt(expect)}"
    cand = run_scenario(scenario, cand_e)
    nref, _ = compare(ref, cand, exc=exc, ref_label=ref_e.label, cand_label=cand_e.label)
    if os.environ.get("LGNB_DIFF_SHOW"):
        print(f"\n--- reference observable ---\n{fmt(nref)}")
    return nref


def snapshot_summary(s: Any, *, errors: bool = False) -> Any:
    """What users print of a StateSnapshot: values, next, tasks (name, path, [error,]
    interrupt values, result, nested snapshot), interrupts, step, source and the
    namespaces of its config and parent; subgraph task states recurse."""
    if s is None:
        return None
    tasks = []
    for t in s.tasks:
        st = t.state
        if st is not None and not isinstance(st, dict):
            st = snapshot_summary(st, errors=errors)
        error = (repr(t.error),) if errors else ()
        tasks.append((t.name, t.path, *error, [i.value for i in t.interrupts], t.result, st))
    md = s.metadata or {}
    return {
        "values": s.values,
        "next": s.next,
        "tasks": tasks,
        "interrupts": [i.value for i in s.interrupts],
        "step": md.get("step"),
        "source": md.get("source"),
        "ns": s.config["configurable"].get("checkpoint_ns"),
        "parent_ns": (s.parent_config or {}).get("configurable", {}).get("checkpoint_ns"),
    }


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


@contextmanager
def logged_warnings(*, first_lines: bool = False) -> Iterator[list[str]]:
    """The warning lines both engines log while the block runs, object addresses removed;
    `first_lines`: only each record's first line (lgnb may add help below LangGraph's)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    lines: list[str] = []
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        for r in records:
            if r.levelno >= logging.WARNING:
                text = _ADDRESS.sub("", r.getMessage())
                lines.append(text.splitlines()[0] if first_lines else text)
