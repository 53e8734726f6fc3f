"""Strict checkpoint serialization: an explicit allowlist, no pickle, clear refusals.

lgnb's savers store values in the msgpack format of `langgraph-checkpoint`'s
`JsonPlusSerializer`, so the bytes are the ecosystem's. What differs is *loading*:
the stock serializer (unless `LANGGRAPH_STRICT_MSGPACK` is set) imports and calls
whatever module/name a stored value names. A checkpoint file is data, often copied
between machines, so lgnb never does that. `StrictSerializer`:

* reconstructs only types on an explicit allowlist (LangChain messages and documents,
  common stdlib value types, LangGraph/lgnb `Send`/`Interrupt`/`Command`, plus
  whatever the user registers with `allow=[MyModel, ...]`);
* raises `UnsafeCheckpointTypeError` for anything else, naming the type and the fix,
  before importing or calling anything;
* checks at *write* time too, so an unregistered type fails the step that produced it
  rather than surfacing later as an unreadable thread;
* refuses `pickle` payloads (there is no pickle fallback, in either direction).

Every saver lgnb hands out — SQLite and PostgreSQL, sync and async — picks its
serializer with `saver_serializer`: strict by default, LangGraph's permissive one only
when asked for by name (`allow_unsafe_deserialization=True`).
"""

from __future__ import annotations

import importlib
import logging
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot

__all__ = [
    "DEFAULT_ALLOWED_TYPES",
    "AllowEntry",
    "CheckpointDecodeError",
    "StrictSerializer",
    "UnsafeCheckpointTypeError",
    "saver_serializer",
    "type_key",
]

logger = logging.getLogger("lgnb")

AllowEntry = type | tuple[str, str]
"""A type to allow, or its `(module, name)` as stored in checkpoints."""

# msgpack extension codes written by langgraph-checkpoint's encoder (its wire format).
_EXT_CALL_ONE_ARG = 0
_EXT_CALL_POS_ARGS = 1
_EXT_CALL_KW_ARGS = 2
_EXT_METHOD_ONE_ARG = 3
_EXT_PYDANTIC_V1 = 4
_EXT_PYDANTIC_V2 = 5
_EXT_NUMPY_ARRAY = 6
_EXT_DELTA_SNAPSHOT = 7

_UNPACK_OPTION = ormsgpack.OPT_NON_STR_KEYS

# msgpack's ext-type markers (fixext 1-16, ext 8/16/32): a payload with none of these bytes
# holds no ext value (no class to rebuild), so it decodes without a hook. A marker byte
# inside a string or a number only sends the payload down the checked path.
_EXT_MARKER = re.compile(rb"[\xc7-\xc9\xd4-\xd8]")

_LC_MESSAGE_MODULES = {
    "human": ("HumanMessage", "HumanMessageChunk"),
    "ai": ("AIMessage", "AIMessageChunk"),
    "system": ("SystemMessage", "SystemMessageChunk"),
    "chat": ("ChatMessage", "ChatMessageChunk"),
    "tool": ("ToolMessage", "ToolMessageChunk"),
    "function": ("FunctionMessage", "FunctionMessageChunk"),
    "base": ("BaseMessage", "BaseMessageChunk"),
    "modifier": ("RemoveMessage",),
}

DEFAULT_ALLOWED_TYPES: frozenset[tuple[str, str]] = frozenset(
    {
        # stdlib value types
        ("datetime", "datetime"),
        ("datetime", "date"),
        ("datetime", "time"),
        ("datetime", "timedelta"),
        ("datetime", "timezone"),
        ("zoneinfo", "ZoneInfo"),
        ("uuid", "UUID"),
        ("decimal", "Decimal"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("collections", "deque"),
        ("pathlib", "Path"),
        ("pathlib", "PosixPath"),
        ("pathlib", "WindowsPath"),
        ("pathlib._local", "Path"),
        ("pathlib._local", "PosixPath"),
        ("pathlib._local", "WindowsPath"),
        ("ipaddress", "IPv4Address"),
        ("ipaddress", "IPv4Interface"),
        ("ipaddress", "IPv4Network"),
        ("ipaddress", "IPv6Address"),
        ("ipaddress", "IPv6Interface"),
        ("ipaddress", "IPv6Network"),
        ("re", "compile"),
        ("numpy", "ndarray"),
        # LangChain messages and documents
        *(
            (f"langchain_core.messages.{mod}", name)
            for mod, names in _LC_MESSAGE_MODULES.items()
            for name in names
        ),
        ("langchain_core.documents.base", "Document"),
        # graph-runtime value types, for LangGraph and for lgnb
        *(
            (mod, name)
            for mod in ("langgraph.types", "lgnb.types")
            for name in (
                "Send", "Interrupt", "Command", "Overwrite", "TimeoutPolicy",
                "StateSnapshot", "PregelTask",
            )
        ),
    }
)
"""Types every `StrictSerializer` reconstructs, as `(module, name)` pairs."""

_ALLOWED_METHODS: frozenset[tuple[str, str, str]] = frozenset(
    {("datetime", "datetime", "fromisoformat")}
)

_lg_default: Callable[[Any], Any] | None
try:  # the encoder of langgraph-checkpoint, so stored bytes stay in its format
    from langgraph.checkpoint.serde.jsonplus import _msgpack_default as _lg_default
    from langgraph.checkpoint.serde.jsonplus import _option as _lg_pack_option
except ImportError:  # pragma: no cover - a future langgraph-checkpoint moved them
    _lg_default = None
    _lg_pack_option = 0


class UnsafeCheckpointTypeError(TypeError):
    """A checkpoint names a type that is not on the serializer's allowlist."""

    def __init__(
        self, module: str, name: str, *, writing: bool, method: str | None = None
    ) -> None:
        self.module = module
        self.name = name
        self.method = method
        dotted = f"{module}.{name}"
        action = "store" if writing else "load"
        if method is not None:  # allowed or not, the class is rebuilt by a method call
            super().__init__(
                f"Refused to {action} a checkpoint value of type {dotted}: it is stored "
                f"as a call of {dotted}.{method}(...), and lgnb calls no method a "
                "checkpoint names except datetime.datetime.fromisoformat (LangGraph's "
                "serializer loads such a value back as a str). Store a datetime.datetime "
                "instead (for a pandas Timestamp: ts.to_pydatetime())."
            )
            return
        super().__init__(
            f"Refused to {action} a checkpoint value of type {dotted}: it is not on "
            "lgnb's checkpoint allowlist, and lgnb never imports or calls code named "
            "by checkpoint data. The classes a graph's state schema names are allowed "
            "automatically when lgnb compiles the graph (a graph LangGraph compiles does "
            "not tell the saver its schemas); if you trust this type, register it with the saver: "
            f"SqliteSaver.from_conn_string(path, allow=[{name}]), "
            f"PostgresSaver.from_conn_string(url, allow=[{name}]) or "
            f"StrictSerializer(allow=[({module!r}, {name!r})])."
        )


class CheckpointDecodeError(ValueError):
    """Checkpoint bytes could not be decoded into a value."""


def type_key(entry: AllowEntry) -> tuple[str, str]:
    """The `(module, name)` under which values of `entry` are stored."""
    if isinstance(entry, type):
        return (entry.__module__, entry.__name__)
    if (
        isinstance(entry, tuple)
        and len(entry) == 2
        and all(isinstance(part, str) for part in entry)
    ):
        return (entry[0], entry[1])
    raise TypeError(
        f"Cannot allow {entry!r}: pass a class (allow=[MyModel]) or a "
        "('module', 'Name') tuple."
    )


class StrictSerializer(JsonPlusSerializer):
    """`JsonPlusSerializer`-compatible serializer that only revives allowlisted types.

    Args:
        allow: extra types (classes or `(module, name)` tuples) to accept on top of
            `DEFAULT_ALLOWED_TYPES` — typically your pydantic models, dataclasses
            and enums that live in graph state.

    It is a `JsonPlusSerializer` subclass so that
    `BaseCheckpointSaver.with_allowlist` (used by LangGraph when
    `LANGGRAPH_STRICT_MSGPACK` is on) extends it instead of disabling it.
    """

    def __init__(self, *, allow: Iterable[AllowEntry] = ()) -> None:
        self.allowed: frozenset[tuple[str, str]] = DEFAULT_ALLOWED_TYPES | {
            type_key(entry) for entry in allow
        }
        super().__init__(
            pickle_fallback=False,
            allowed_json_modules=None,
            allowed_msgpack_modules=tuple(self.allowed),
        )

    def with_allowed(self, allow: Iterable[AllowEntry]) -> StrictSerializer:
        """A copy that also accepts the given types: of this object's own class, with its
        own attributes (a user's subclass that logs or compresses stays one)."""
        import copy

        clone = copy.copy(self)
        clone.allowed = self.allowed | {type_key(e) for e in allow}
        JsonPlusSerializer.__init__(
            clone,
            pickle_fallback=False,
            allowed_json_modules=None,
            allowed_msgpack_modules=tuple(clone.allowed),
        )
        return clone

    def with_msgpack_allowlist(
        self, extra_allowlist: Iterable[tuple[str, ...] | type]
    ) -> StrictSerializer:
        """LangGraph's hook for schema-derived allowlists; same as `with_allowed`."""
        extra = {
            type_key(e) if isinstance(e, type) else (str(e[0]), str(e[1]))
            for e in extra_allowlist
        }
        if extra <= self.allowed:
            return self
        return self.with_allowed(extra)

    # --- writing ---

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Encode like `JsonPlusSerializer`; refuse values holding unallowed types.

        Plain JSON-like data (the common case) is encoded in one pass. Only when the
        encoder met a typed object (a message, dataclass, datetime...) is the result
        decoded once more, without building anything, to check every type it names.
        """
        if _lg_default is None or obj is None or isinstance(obj, (bytes, bytearray)):
            type_, data = self._dumps_plain(obj)
            typed = type_ == "msgpack"
        else:
            typed = False

            def default(value: Any) -> Any:
                nonlocal typed
                typed = True
                return _lg_default(value)

            type_ = "msgpack"
            try:
                data = ormsgpack.packb(obj, default=default, option=_lg_pack_option)
            except (TypeError, ormsgpack.MsgpackEncodeError) as exc:
                raise _unstorable(obj, exc) from exc
        if typed:
            _Decoder(self.allowed, writing=True, build=False, verified=self._verified()).unpack(data)
        return type_, data

    def _verified(self) -> set[tuple[int, bytes]]:
        """The typed values this serializer has checked while writing, by extension code
        and encoded bytes. A conversation saved at every step encodes its old messages
        again each time; checking the same bytes against the same allowlist again would
        only repeat the answer (3.9 -> 3.1 µs per message of a 10,000-message list). Kept
        per allowlist (a new one starts afresh) and emptied past `_VERIFIED_MAX` entries."""
        cache = self.__dict__.get("_verified_cache")
        if cache is None or cache[0] is not self.allowed or len(cache[1]) > _VERIFIED_MAX:
            cache = self.__dict__["_verified_cache"] = (self.allowed, set())
        return cache[1]

    def _dumps_plain(self, obj: Any) -> tuple[str, bytes]:
        try:
            return super().dumps_typed(obj)
        except (TypeError, ormsgpack.MsgpackEncodeError) as exc:
            raise _unstorable(obj, exc) from exc

    # --- reading ---

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        type_, payload = data
        if type_ == "msgpack":
            if _EXT_MARKER.search(payload) is None:  # plain data: nothing to refuse
                try:
                    return ormsgpack.unpackb(payload, option=_UNPACK_OPTION)
                except ValueError:
                    pass  # damaged: the checked path says so
            return _Decoder(self.allowed, writing=False, build=True).unpack(payload)
        if type_ == "null":
            return None
        if type_ == "bytes":
            return payload
        if type_ == "bytearray":
            return bytearray(payload)
        if type_ == "json":  # an older LangGraph's format: the same allowlist applies
            from lgnb.checkpoint._json_values import loads_json_value

            return loads_json_value(payload, self.allowed)
        if type_ == "pickle":
            raise CheckpointDecodeError(
                "Refused to load a pickled checkpoint value: unpickling runs "
                "arbitrary code, and lgnb's checkpoint serializer never does it. "
                "Re-create the thread, or migrate it with a trusted tool."
            )
        raise CheckpointDecodeError(
            f"Cannot load a checkpoint value stored as {type_!r}: lgnb's strict "
            "serializer reads only 'msgpack', 'json', 'null', 'bytes' and 'bytearray'."
        )


_VERIFIED_MAX = 50_000
"""Checked typed values a serializer remembers (their bytes; ~10-20 MB for messages)."""


def saver_serializer(
    *,
    serde: SerializerProtocol | None = None,
    allow: Iterable[AllowEntry] = (),
    allow_unsafe_deserialization: bool = False,
) -> SerializerProtocol:
    """The serializer an lgnb saver (SQLite or PostgreSQL) loads and stores with.

    By default a `StrictSerializer` accepting `allow` on top of the default types;
    the graph that compiles with the saver adds the classes its schemas name (through
    `BaseCheckpointSaver.with_allowlist`). `serde` is used as given. With
    `allow_unsafe_deserialization=True` it is LangGraph's own `JsonPlusSerializer()`,
    as LangGraph's savers use it by default: loading then imports and calls whatever
    a stored row names, so a crafted row runs code. Only for databases that no one
    else can write to.
    """
    allow = tuple(allow)
    if not isinstance(allow_unsafe_deserialization, bool):
        raise TypeError(
            "allow_unsafe_deserialization must be True or False, got "
            f"{allow_unsafe_deserialization!r}."
        )
    if serde is not None and allow:
        raise TypeError(
            "Pass either serde= or allow=, not both: with a custom serializer, "
            "configure its allowlist there (StrictSerializer(allow=[...]))."
        )
    if allow_unsafe_deserialization and serde is not None:
        raise TypeError(
            "Pass either serde= or allow_unsafe_deserialization=True, not both: the "
            "latter selects LangGraph's JsonPlusSerializer(); a serializer you pass "
            "is used as it is."
        )
    if allow_unsafe_deserialization and allow:
        raise TypeError(
            "allow= has no effect with allow_unsafe_deserialization=True (every type "
            "is loaded then); drop one of them. Keeping allow= and the strict default "
            "is the safe choice."
        )
    if allow_unsafe_deserialization:
        return JsonPlusSerializer()
    return serde if serde is not None else StrictSerializer(allow=allow)


def _unstorable(obj: Any, exc: Exception) -> TypeError:
    kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
    return TypeError(
        f"Cannot store a value of type {kind} in a checkpoint: {exc}. Use JSON-like "
        "data, LangChain messages, dataclasses or pydantic models (registered with "
        "allow=[...])."
    )


class _Decoder:
    """One msgpack decode pass; remembers the first refusal (ormsgpack hides it)."""

    def __init__(
        self,
        allowed: frozenset[tuple[str, str]],
        *,
        writing: bool,
        build: bool,
        verified: set[tuple[int, bytes]] | None = None,
    ) -> None:
        self.allowed = allowed
        self.writing = writing
        self.build = build
        self.error: Exception | None = None
        # a check-only pass: typed values ((extension code, bytes)) already found allowed,
        # and added to as more are
        self.verified = verified if not build else None

    def unpack(self, data: bytes) -> Any:
        try:
            return ormsgpack.unpackb(data, ext_hook=self.hook, option=_UNPACK_OPTION)
        except ValueError as exc:
            if self.error is not None:
                raise self.error from None
            raise CheckpointDecodeError(
                f"Checkpoint value is not valid msgpack ({exc}); the database row "
                "is damaged or was written by an incompatible tool."
            ) from exc

    def hook(self, code: int, data: bytes) -> Any:
        try:
            return self._ext(code, data)
        except Exception as exc:
            if self.error is None:
                self.error = exc
            raise

    def _inner(self, data: bytes) -> Any:
        return ormsgpack.unpackb(data, ext_hook=self.hook, option=_UNPACK_OPTION)

    def _ext(self, code: int, data: bytes) -> Any:
        if code == _EXT_DELTA_SNAPSHOT:
            inner = self._inner(data)
            return _DeltaSnapshot(inner) if self.build else None
        if code == _EXT_NUMPY_ARRAY:
            self._require("numpy", "ndarray")
            if self.writing:
                _storable_array(self._inner(data))
            return self._numpy(self._inner(data)) if self.build else None
        verified = self.verified
        if verified is not None and (code, data) in verified:
            return None
        if code not in _BUILDERS:
            raise CheckpointDecodeError(
                f"Unknown msgpack extension code {code} in checkpoint data; it was "
                "written by a newer or different serializer."
            )
        parts = self._inner(data)
        if not isinstance(parts, (list, tuple)) or len(parts) < 3:
            raise CheckpointDecodeError(
                f"Malformed typed value (extension code {code}) in checkpoint data."
            )
        module, name = str(parts[0]), str(parts[1])
        if code == _EXT_METHOD_ONE_ARG:  # refused whether or not the class is allowed
            method = str(parts[3]) if len(parts) > 3 else ""
            if (module, name, method) not in _ALLOWED_METHODS:
                raise UnsafeCheckpointTypeError(
                    module, name, writing=self.writing, method=method
                )
        self._require(module, name)
        if not self.build:
            if verified is not None:  # its parts, typed ones included, passed above
                verified.add((code, data))
            return None
        try:
            target = _import(module, name)
        except (ImportError, AttributeError) as exc:
            # allowed, but not found by name (a class defined inside a function): its
            # data, as LangGraph's serializer returns it (a pydantic state re-validates it)
            _warn_unfound(module, name, exc)
            return parts[2]
        try:
            return _BUILDERS[code](target, parts)
        except Exception as exc:
            raise CheckpointDecodeError(
                f"Could not rebuild {module}.{name} from checkpoint data: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def _require(self, module: str, name: str) -> None:
        if (module, name) not in self.allowed:
            raise UnsafeCheckpointTypeError(module, name, writing=self.writing)

    @staticmethod
    def _numpy(parts: Any) -> Any:
        import numpy

        dtype_str, shape, order, buf = parts
        dtype = numpy.dtype(dtype_str)
        if dtype.hasobject:
            raise CheckpointDecodeError(
                "Refused to load a numpy array of Python objects from a checkpoint."
            )
        return numpy.frombuffer(buf, dtype=dtype).reshape(shape, order=order)


def _storable_array(parts: Any) -> None:
    import numpy

    if numpy.dtype(parts[0]).hasobject:
        raise TypeError(
            "Cannot store a numpy array of dtype object in a checkpoint: its bytes are "
            "the memory addresses of Python objects, not the objects (LangGraph's "
            "serializer loads it back as None)."
        )


_warned_unfound: set[tuple[str, str]] = set()


def _warn_unfound(module: str, name: str, exc: Exception) -> None:
    if (module, name) not in _warned_unfound:
        _warned_unfound.add((module, name))
        logger.warning(
            "Cannot find %s.%s to rebuild a checkpoint value (%s: %s); loading its data "
            "instead. Define the class at module level so it can be found by name.",
            module, name, type(exc).__name__, exc,
        )


def _import(module: str, name: str) -> Any:
    loaded = sys.modules.get(module)
    if loaded is not None:  # what import_module returns, without its machinery (~2 µs a value)
        return getattr(loaded, name)
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        if module != "langgraph.types":
            raise
    # LangGraph's runtime value types (lgnb stores Sends under that name), without LangGraph
    import lgnb.types

    return getattr(lgnb.types, name)


def _call_pos(target: Any, parts: Any) -> Any:
    args = parts[2]
    if getattr(target, "__name__", "") == "Send" and len(args) == 3:
        return target(args[0], args[1], timeout=args[2])
    return target(*args)


def _pydantic(target: Any, parts: Any) -> Any:
    try:
        return target(**parts[2])
    except Exception:
        construct = getattr(target, "model_construct", None) or target.construct
        return construct(**parts[2])


_BUILDERS: dict[int, Callable[[Any, Any], Any]] = {
    _EXT_CALL_ONE_ARG: lambda target, parts: target(parts[2]),
    _EXT_CALL_POS_ARGS: _call_pos,
    _EXT_CALL_KW_ARGS: lambda target, parts: target(**parts[2]),
    _EXT_METHOD_ONE_ARG: lambda target, parts: getattr(target, parts[3])(parts[2]),
    _EXT_PYDANTIC_V1: _pydantic,
    _EXT_PYDANTIC_V2: _pydantic,
}
