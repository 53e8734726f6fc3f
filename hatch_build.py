"""Hatch build hook: lgnb's wheel and sdist carry the front-end bundle, lgnb/static/lgnb.js.

The bundle (the views plus Graphviz compiled to WASM) is made by js/'s own `npm run build`,
the script `./dev setup` runs too, and is not committed. So `python -m build` on a clean
clone runs `npm ci` and `npm run build` in js/ before packing; the sdist then holds the bundle
next to its sources, and a wheel built from that sdist (what pip does for a user who has
no Node) finds it up to date and needs no Node.

"Up to date" means no file it is built from (js/src, js/build.mjs, js/package.json,
js/package-lock.json) is newer than it: a bundle older than an edited source is rebuilt,
never shipped stale. An editable install (`pip install -e .`) builds nothing: `./dev setup`
or `npm run build` in js/ keeps the bundle of a working tree current.

hatch-jupyter-builder's `npm_builder` was the first choice, but it looks for npm before it
checks whether a build is needed, so a wheel from the sdist failed without Node.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BUNDLE = "lgnb/static/lgnb.js"
JS = "js"
#: What the bundle is built from, relative to js/ (a directory counts by its files).
SOURCES = ("src", "build.mjs", "package.json", "package-lock.json")


def _newest_source(js: Path) -> float:
    times = [0.0]
    for name in SOURCES:
        path = js / name
        files = path.rglob("*") if path.is_dir() else [path]
        times.extend(f.stat().st_mtime for f in files if f.is_file())
    return max(times)


def bundle_is_current(root: Path) -> bool:
    """Whether the bundle exists and no source of it is newer (an sdist's files all share
    one timestamp, so its bundle is current)."""
    bundle = root / BUNDLE
    return bundle.is_file() and bundle.stat().st_mtime >= _newest_source(root / JS)


def build_bundle(root: Path) -> None:
    """`npm ci` (when js/node_modules is missing or older than the lockfile) and `npm run build`."""
    js = root / JS
    npm = shutil.which("npm")
    if npm is None:
        state = "is older than its sources in js/" if (root / BUNDLE).is_file() else "is missing"
        raise RuntimeError(
            f"lgnb's front end {BUNDLE} {state}, and building it needs Node.js 20+ with npm on PATH. "
            "Install Node.js (https://nodejs.org or your system's nodejs/npm packages) and build again, "
            "or install lgnb from its sdist or wheel, which carry the built bundle.")
    installed = js / "node_modules" / ".package-lock.json"  # written by every npm install / ci
    lock = js / "package-lock.json"
    if not installed.is_file() or (lock.is_file() and lock.stat().st_mtime > installed.stat().st_mtime):
        _npm([npm, "ci" if lock.is_file() else "install", "--no-audit", "--no-fund"], js)
    _npm([npm, "run", "build"], js)
    if not bundle_is_current(root):
        raise RuntimeError(f"`npm run build` in {js} succeeded but did not write {root / BUNDLE}: "
                           "check js/build.mjs's outfile")


def _npm(cmd: list[str], cwd: Path) -> None:
    try:
        subprocess.run(cmd, cwd=cwd, check=True)
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"`{' '.join(cmd[1:])}` failed in {cwd} (exit {exc.returncode}, output above): "
                           "the wheel would have no front end") from exc


class FrontEndBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Builds the bundle when a wheel or an sdist is made and it is missing or stale."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name not in {"wheel", "sdist"} or version == "editable":
            return
        root = Path(self.root)
        if not bundle_is_current(root):
            self.app.display_info(f"building the front end: npm run build in {root / JS}")
            build_bundle(root)
        # git ignores the bundle, and hatch with it: ship it all the same
        build_data.setdefault("artifacts", []).append(f"/{BUNDLE}")
