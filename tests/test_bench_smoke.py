"""Smoke test: bench/run.py --quick runs to the end. No timing assertions here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--no-imports", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=240,
    )


def test_bench_quick_langgraph_only():
    p = run_bench("--engines", "langgraph")
    assert p.returncode == 0, p.stdout + p.stderr
    for graph in ("chain-20", "send-10x3", "wide-1000", "react-3"):
        assert f"{graph}" in p.stdout
    assert "error:" not in p.stdout, p.stdout
    assert "Ratios" in p.stdout


def test_bench_quick_all_engines_never_crashes_and_writes_its_json_into_a_new_folder(tmp_path):
    # lgnb may be unavailable or incomplete: the bench reports that and still finishes.
    # --json into a folder that does not exist yet (bench/out/ is not in a fresh clone)
    out = tmp_path / "out" / "r.json"
    p = run_bench("--json", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "langgraph: " in p.stdout
    assert "lgnb: " in p.stdout
    results = json.loads(out.read_text())
    assert results["meta"]["quick"] is True
    assert set(results["meta"]["engines"]) == {"langgraph", "lgnb"}


def run_script(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=240,
    )


def test_saver_scale_prints_both_savers_and_both_floors_with_their_ratios():
    p = run_script("bench_saver.py", "--scale", "--steps", "5", "--history", "0", "--rounds", "1")
    assert p.returncode == 0, p.stdout + p.stderr
    for row in ("langgraph.SqliteSaver", "lgnb.SqliteSaver", "floor (one row/step)", "delta floor"):
        assert row in p.stdout, p.stdout
    assert "delta floor/langgraph:" in p.stdout, p.stdout


def test_bench_copy_prints_the_copy_of_a_langgraph_thread_against_langgraphs_saving():
    p = run_script("bench_copy.py", "--turns", "3")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "9 checkpoints LangGraph saved" in p.stdout, p.stdout
    assert "lgnb: first read (the copy)" in p.stdout and "x LangGraph's saving" in p.stdout, p.stdout


def test_saver_reads_threads_compares_a_file_of_one_thread_with_one_of_many():
    p = run_script("saver_reads.py", "--threads", "3", "--steps", "3", "--reads", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    rows = [line.split() for line in p.stdout.splitlines() if line.startswith(("langgraph.", "lgnb."))]
    # per saver: the 1-thread row, the 3-thread row, the ratio row
    assert [(r[0], r[1]) for r in rows] == [
        (saver, n) for saver in ("langgraph.SqliteSaver", "lgnb.SqliteSaver") for n in ("1", "3", "ratio")
    ], p.stdout


def test_bench_instructions_child_runs_a_shape_in_a_moved_layout_without_valgrind():
    # what each callgrind child of `bench_instructions.py --layouts N` runs: the shape in
    # layout 3 (PYTHONHASHSEED and padding are set by the parent), naming the engine it ran
    p = run_script("bench_instructions.py", "--child", "react", "--k", "1", "--engine", "lgnb", "--layout", "3")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip().endswith(str(Path("lgnb") / "graph" / "__init__.py")), p.stdout


def test_every_bench_instructions_shape_runs_as_a_child_on_each_engine():
    # each shape's child, as `bench_instructions.py` starts it under callgrind (sizes packed
    # in --tokens as its main() packs them, the smallest), on lgnb and on LangGraph; the
    # `history` shape once broke unnoticed when a bench helper it used was renamed
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_instructions", ROOT / "bench" / "bench_instructions.py")
    assert spec is not None and spec.loader is not None
    bi = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bi)
    sizes = {"messages": bi.TOKENS[0], "history": bi.HISTORY[0] * 1000 + 2, "keys": bi.KEYS[0] * 1000 + 2}
    for shape in bi.SHAPES:
        for engine in ("lgnb", "langgraph"):
            p = run_script("bench_instructions.py", "--child", shape, "--k", "0", "--engine", engine,
                           "--tokens", str(sizes.get(shape, bi.TOKENS[0])))
            assert p.returncode == 0, f"{shape} on {engine}:\n{p.stdout}{p.stderr}"
            assert p.stdout.strip().endswith(str(Path(engine) / "graph" / "__init__.py")), (shape, engine, p.stdout)


def test_every_bench_script_imports():
    # a script whose imports broke (a helper renamed in another bench module) fails here,
    # not months later when someone runs it
    scripts = sorted(p.stem for p in (ROOT / "bench").glob("*.py"))
    code = "import sys; sys.path.insert(0, 'bench')\nfor name in sys.argv[1:]:\n    __import__(name)"
    p = subprocess.run([sys.executable, "-c", code, *scripts], capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert p.returncode == 0, p.stdout + p.stderr
