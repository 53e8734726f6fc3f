"""bench/bench_saver.py runs end to end (tiny sizes) and prints the ratio lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_saver.py"


def test_bench_saver_prints_ms_per_checkpoint_and_ratios() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--engines", "langgraph", "--runs", "1", "--steps", "2",
         "--shapes", "wide-20k,narrow"],
        capture_output=True, text=True, timeout=240, check=True,
    ).stdout
    assert "lgnb.SqliteSaver" in out and "langgraph.SqliteSaver" in out
    assert "langgraph wide-20k: langgraph/lgnb =" in out


def test_bench_saver_scale_prints_both_savers_and_the_floor() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--scale", "--steps", "5", "--history", "20", "--rounds", "1"],
        capture_output=True, text=True, timeout=240, check=True,
    ).stdout
    assert "floor (one row/step)" in out and "lgnb/langgraph:" in out
    assert "floor/langgraph:" in out and "goal for lgnb: 0.20x" in out
