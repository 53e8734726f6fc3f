"""What a user gets from `pip install lgnb`: a wheel and an sdist that carry the front end.

From a clean copy of the repository (what `git clone` gives: no node_modules, no built
bundle) `python -m build --sdist` runs js/'s `npm run build` through hatch_build.py;
the wheel is then built from that sdist with no Node on PATH (as pip does for a user
without Node) and installed into a fresh venv that has no Node either, where lgnb must
serve the real bundle, and `lgnb[lab]`'s JupyterLab must draw a view in Chromium.

Slow (about two minutes: three isolated builds, two venv installs, one JupyterLab),
but in the default suite: it is the only test of what users install.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from lab import chromium_page, jupyter_lab, open_notebook, run_all, wait_kernel_idle  # noqa: E402

pytestmark = pytest.mark.slow

BUNDLE = "lgnb/static/lgnb.js"
#: Executables that would let a build or a kernel reach Node.
NODE_TOOLS = {"node", "nodejs", "npm", "npx", "corepack", "yarn", "pnpm"}
ARTIFACTS = Path(os.environ.get("LGNB_BROWSER_ARTIFACTS", "/tmp/lgnb-browser-artifacts"))


def sh(cmd: list[str | Path], *, env: dict[str, str] | None = None, cwd: Path | None = None,
       timeout: float = 600) -> str:
    """Run `cmd`; on failure show its output (a build's log is the only clue)."""
    proc = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}",
                    pytrace=False)
    return proc.stdout


def clean_copy(dst: Path) -> Path:
    """The files a clone would have (tracked, plus new files not yet committed, never ignored
    ones such as js/node_modules and the built bundle), copied to `dst`."""
    listed = sh(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT)
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file():  # a tracked file deleted in the work tree is not copied
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    return dst


def env_without_node(tmp: Path, *, venv: Path | None = None) -> dict[str, str]:
    """The environment with PATH = `venv`/bin + a copy of /usr/bin's links minus Node's tools
    (node lives in /usr/bin here, so /usr/bin itself cannot be on PATH)."""
    shims = tmp / "bin-without-node"
    if not shims.is_dir():
        shims.mkdir()
        for exe in Path("/usr/bin").iterdir():
            if exe.name not in NODE_TOOLS and not exe.name.startswith("node"):
                (shims / exe.name).symlink_to(exe)
    path = os.pathsep.join(([str(venv / "bin")] if venv else []) + [str(shims)])
    assert shutil.which("node", path=path) is None and shutil.which("npm", path=path) is None
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "NODE_PATH"}}
    return {**env, "PATH": path}


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """sdist from a clean copy (npm builds the bundle), then the wheel from that sdist
    without Node; the seconds each took."""
    tmp = tmp_path_factory.mktemp("build")
    src = clean_copy(tmp / "src")
    assert not (src / BUNDLE).exists() and not (src / "js" / "node_modules").exists()
    out = tmp / "dist"
    started = time.monotonic()
    sh([sys.executable, "-m", "build", "--sdist", "--outdir", out, src])
    sdist_seconds = time.monotonic() - started
    (sdist,) = out.glob("lgnb-*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp / "unpacked", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (unpacked,) = (tmp / "unpacked").iterdir()
    started = time.monotonic()
    sh([sys.executable, "-m", "build", "--wheel", "--outdir", out, unpacked], env=env_without_node(tmp))
    wheel_seconds = time.monotonic() - started
    (wheel,) = out.glob("lgnb-*.whl")
    return SimpleNamespace(tmp=tmp, src=src, sdist=sdist, wheel=wheel, built=(src / BUNDLE).read_bytes(),
                           seconds={"sdist (npm build)": sdist_seconds, "wheel from sdist": wheel_seconds})


@pytest.fixture(scope="module")
def venv(dists: SimpleNamespace) -> Path:
    """A fresh venv with the wheel installed, by pip, with no Node on PATH."""
    path = dists.tmp / "venv"
    sh([sys.executable, "-m", "venv", path])
    sh([path / "bin" / "python", "-m", "pip", "install", "--quiet", dists.wheel], env=env_without_node(dists.tmp, venv=path))
    return path


def test_sdist_from_a_clean_clone_carries_the_bundle_npm_built_and_the_js_sources(dists: SimpleNamespace) -> None:
    assert len(dists.built) > 500_000 and b"lgnb" in dists.built  # npm run build wrote it (views + Graphviz WASM)
    with tarfile.open(dists.sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        bundle = tar.extractfile(f"{top}/{BUNDLE}")
        assert bundle is not None and bundle.read() == dists.built
    assert {"js/package.json", "js/package-lock.json", "js/build.mjs", "js/src/index.js", "pyproject.toml"} <= names
    assert not [n for n in names if "node_modules" in n or n.startswith(("tests/", "bench/"))]


def test_wheel_builds_from_the_sdist_without_node_and_carries_the_bundle(dists: SimpleNamespace) -> None:
    with zipfile.ZipFile(dists.wheel) as whl:
        assert whl.read(BUNDLE) == dists.built
        assert "lgnb/py.typed" in whl.namelist()  # type checkers read the installed lgnb as typed
        record = next(n for n in whl.namelist() if n.endswith(".dist-info/RECORD"))
        assert any(line.startswith(f"{BUNDLE},sha256=") for line in whl.read(record).decode().splitlines())
        metadata = whl.read(next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    assert not [r for r in requires if r.lower().startswith(("nest-asyncio", "nest_asyncio"))]  # nothing imports it
    assert any(r.startswith("jupyterlab") and "extra == 'lab'" in r for r in requires)
    assert any(r.startswith("anywidget") and "extra" not in r for r in requires)


def test_a_bundle_older_than_its_sources_is_never_shipped_a_build_without_node_says_to_install_it(
        dists: SimpleNamespace) -> None:
    src = dists.tmp / "stale"
    shutil.copytree(dists.src, src, ignore=shutil.ignore_patterns("node_modules"))
    edited = src / "js" / "src" / "index.js"
    os.utime(edited, (time.time() + 60, time.time() + 60))  # a source edited after the last build
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", dists.tmp / "stale-dist", src],
                          env=env_without_node(dists.tmp), capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and not list((dists.tmp / "stale-dist").glob("*.whl"))
    log = proc.stdout + proc.stderr
    assert "lgnb/static/lgnb.js is older than its sources in js/" in log and "needs Node.js 20+ with npm on PATH" in log


#: Run inside the installed venv: where lgnb comes from, and what the views would load.
PROBE = r"""
import base64, gzip, hashlib, json, shutil, subprocess
import lgnb
from lgnb.graph import StateGraph, START, END
from lgnb.widgets._assets import BUNDLE, VIEW_ESM
from typing_extensions import TypedDict

class S(TypedDict):
    n: int

b = StateGraph(S)
b.add_node("step", lambda s: {"n": s["n"] + 1})
b.add_edge(START, "step")
b.add_edge("step", END)
view = lgnb.show(b.compile(name="from the wheel"))
shipped = gzip.decompress(base64.b64decode(view._bundle)) if view._bundle else b""
print(json.dumps({
    "lgnb": lgnb.__file__, "bundle": str(BUNDLE), "node": shutil.which("node"),
    "shell_node": subprocess.run(["sh", "-c", "command -v node"], capture_output=True, text=True).returncode,
    "hash": view._lgnb_bundle, "view_esm": view._esm == VIEW_ESM, "title": view.title,
    "shipped_sha": hashlib.sha256(shipped).hexdigest(),
    "file_sha": hashlib.sha256(BUNDLE.read_bytes()).hexdigest() if BUNDLE.is_file() else None,
}))
"""


def test_the_installed_wheel_serves_the_real_bundle_with_no_node_anywhere(dists: SimpleNamespace, venv: Path) -> None:
    home = dists.tmp / "elsewhere"  # not the checkout: lgnb must come from the venv
    home.mkdir(exist_ok=True)
    out = sh([venv / "bin" / "python", "-c", PROBE], env=env_without_node(dists.tmp, venv=venv), cwd=home)
    got = json.loads(out.strip().splitlines()[-1])
    assert got["node"] is None and got["shell_node"] != 0  # node cannot be found in that venv
    assert Path(got["lgnb"]).is_relative_to(venv) and Path(got["bundle"]).is_relative_to(venv)
    built_sha = hashlib.sha256(dists.built).hexdigest()
    assert got["file_sha"] == built_sha  # the bundle file is installed with the package
    assert got["shipped_sha"] == built_sha and got["hash"] == built_sha[:16]  # the first view ships it: built, not missing
    assert got["view_esm"] and got["title"] == "from the wheel"


NOTEBOOK = [
    "import lgnb, sys\nfrom lgnb.graph import StateGraph, START, END\nfrom typing_extensions import TypedDict\n"
    "print('lgnb from', lgnb.__file__)\n"
    "class S(TypedDict):\n    n: int\n"
    "b = StateGraph(S)\nb.add_node('step', lambda s: {'n': s['n'] + 1})\nb.add_edge(START, 'step')\nb.add_edge('step', END)\n"
    "g = b.compile(name='from the wheel')",
    "lgnb.show(g)",
]


def test_lab_extra_gives_a_jupyterlab_that_draws_a_view_from_the_wheel(
        dists: SimpleNamespace, venv: Path, chromium_path: str, chromium_args: list[str]) -> None:
    env = env_without_node(dists.tmp, venv=venv)
    sh([venv / "bin" / "python", "-m", "pip", "install", "--quiet", f"lgnb[lab] @ {dists.wheel.as_uri()}"], env=env)
    with jupyter_lab(dists.tmp / "lab", python=venv / "bin" / "python", path=env["PATH"]) as lab, \
            chromium_page(chromium_path, args=chromium_args) as page:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, lab.root / "wheel.ipynb")
        open_notebook(page, lab, "wheel.ipynb")
        run_all(page)
        wait_kernel_idle(page)
        view = page.locator(".lgnb-graph-view").first
        view.locator("svg g.node").first.wait_for(timeout=30_000)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "wheel-lab-graph-view.png"))
        assert f"lgnb from {venv}" in (page.locator(".jp-OutputArea-output").first.text_content() or "")
        assert view.locator(".lgnb-title").text_content() == "from the wheel"
        assert "step" in view.locator("svg g.node text").all_text_contents()
        assert page.get_by_text("lgnb front end not built").count() == 0 and not errors, errors

