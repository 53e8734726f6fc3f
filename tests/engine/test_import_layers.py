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
    assert _loaded_with("lgnb._internal.context") == ["lgnb._internal", "lgnb._internal.context"]


def test_import_lgnb_stays_light() -> None:
    code = (
        "import sys, lgnb\n"
        "heavy = [m for m in sys.modules if m == 'langsmith' or m.startswith('langsmith.')\n"
        "         or m.startswith('langchain_core.tracers')]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
