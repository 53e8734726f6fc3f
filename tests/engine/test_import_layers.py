"""The engine's import layers: the public data modules sit below `lgnb.pregel`.

`lgnb.types`, `lgnb.config`, `lgnb.runtime`, `lgnb.errors`, `lgnb.channels` and the
`lgnb._internal` helpers reach a running task through the leaf `lgnb._internal.context`,
never through `lgnb.pregel`; so none of them imports a `lgnb.pregel` module when it is
loaded. Each check runs in a fresh interpreter with the `lgnb` package's `__init__`
bypassed (it imports the whole engine), so only the module's own imports count.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_LOAD_ALONE = """
import importlib, importlib.util, json, sys, types
spec = importlib.util.find_spec("lgnb")
pkg = types.ModuleType("lgnb")
pkg.__path__ = list(spec.submodule_search_locations)
sys.modules["lgnb"] = pkg  # the package without its __init__
importlib.import_module({module!r})
print(json.dumps(sorted(m for m in sys.modules if m.startswith("lgnb."))))
"""


def _loaded_with(module: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", _LOAD_ALONE.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize(
    "module",
    [
        "lgnb.types",
        "lgnb.config",
        "lgnb.runtime",
        "lgnb.errors",
        "lgnb.channels",
        "lgnb._internal.context",
        "lgnb._internal.callable",
        "lgnb._internal.node_runnable",
        "lgnb._internal.constants",
        "lgnb._internal.ids",
    ],
)
def test_public_modules_import_no_pregel(module: str) -> None:
    loaded = _loaded_with(module)
    assert [m for m in loaded if m == "lgnb.pregel" or m.startswith("lgnb.pregel.")] == []


def test_task_context_is_a_leaf() -> None:
    # it imports only `frozen`, itself a leaf (stdlib only)
    assert _loaded_with("lgnb._internal.context") == [
        "lgnb._internal", "lgnb._internal.context", "lgnb._internal.frozen",
    ]
    assert _loaded_with("lgnb._internal.frozen") == ["lgnb._internal", "lgnb._internal.frozen"]


def test_import_lgnb_stays_light() -> None:
    code = (
        "import sys, lgnb\n"
        "heavy = [m for m in sys.modules if m == 'langsmith' or m.startswith('langsmith.')\n"
        "         or m.startswith('langchain_core.tracers')]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


_PUBLIC_DATA_MODULES = (
    "types", "config", "runtime", "errors", "constants", "warnings", "managed",
    "channels", "_internal",
)


def _pregel_imports_in(path) -> list[str]:
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lgnb.pregel"):
            found.append(f"{path.name}:{node.lineno} from {node.module}")
        elif isinstance(node, ast.Import):
            found += [
                f"{path.name}:{node.lineno} import {a.name}"
                for a in node.names
                if a.name.startswith("lgnb.pregel")
            ]
    return found


def test_public_data_modules_never_reach_into_pregel_even_at_call_time() -> None:
    """Not at load time and not deferred inside a function: the task context and the
    interrupt code live below `lgnb.pregel`, so nothing here imports it at all (type-only
    imports under TYPE_CHECKING excepted)."""
    from pathlib import Path

    import lgnb

    root = Path(lgnb.__file__).parent
    offenders: list[str] = []
    for name in _PUBLIC_DATA_MODULES:
        target = root / name
        files = sorted(target.rglob("*.py")) if target.is_dir() else [target.with_suffix(".py")]
        for f in files:
            offenders += [
                o for o in _pregel_imports_in(f)
                if not _under_type_checking(f, int(o.split(":")[1].split()[0]))
            ]
    assert offenders == []


def _under_type_checking(path, lineno: int) -> bool:
    import ast

    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
            and node.lineno < lineno <= max(getattr(n, "end_lineno", 0) or 0 for n in node.body)
        ):
            return True
    return False
