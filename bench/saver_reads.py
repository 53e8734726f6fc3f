"""Issue 14's saver figures that `saver_scale.py` does not print: reads by a fresh reader,
and a wide state.

    .venv/bin/python bench/saver_reads.py [--history 10000] [--reads 300]
    .venv/bin/python bench/saver_reads.py --wide [--keys 1000] [--steps 300]
    .venv/bin/python bench/saver_reads.py --threads 1000 [--steps 20] [--reads 300]

Compare two versions of lgnb with `PYTHONPATH=/path/to/other/checkout` (this script puts
nothing of this checkout on `sys.path` before it; it prints which lgnb it measured).

* default: a thread of `--history` checkpoints (`saver_scale.build`'s 50-key graph) is
  written once to a file under the system temp dir, then a *new* saver on that file (one
  that did not write it: no version map in memory) is timed, best of `--reads`, for
  `list(limit=10)`, `get_tuple` of the latest, and the first 10 of `get_state_history`.
  Best-of, not median: the machine is shared and the minimum is what the code costs.
* `--threads N`: costs as the *number of threads* in a file grows. For each engine's
  SQLite saver (on lgnb's engine), a file holding 1 thread and one holding N threads, each
  of `--steps` checkpoints of the 50-key graph; then one more thread of 200 steps is run
  on that saver (µs of CPU per checkpoint inside `put` + `put_writes`), and a fresh
  saver reads a thread from the middle (`get_tuple` of its latest and `list(limit=10)`,
  best of `--reads`). Flat means the N-thread figures match the 1-thread ones.
* `--wide`: the same graph with `--keys` keys (one ~1 KB key changing per step), `--steps`
  steps, each engine's SQLite saver on lgnb's engine as in `saver_scale`; µs of CPU per
  checkpoint inside `put` + `put_writes` (median of 3 rounds) and the file's size.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))

import saver_scale  # noqa: E402


def _best_ms(fn: Callable[[], Any], reads: int) -> float:
    best = float("inf")
    for _ in range(reads):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return 1000 * best


def reads(history: int, reads: int) -> None:
    import lgnb

    with tempfile.TemporaryDirectory(prefix="bench-reads-") as tmp:
        path = Path(tmp) / "threads.sqlite"
        with saver_scale.lgnb_saver(path) as saver:
            graph = saver_scale.build(saver, history)
            cfg = {"configurable": {"thread_id": "t"}, "recursion_limit": history + 10}
            graph.invoke(saver_scale._inputs(), cfg, durability="sync")
        with saver_scale.lgnb_saver(path) as reader:
            graph = saver_scale.build(reader, history)
            thread = {"configurable": {"thread_id": "t"}}
            listed = _best_ms(lambda: list(reader.list(thread, limit=10)), reads)
            latest = _best_ms(lambda: reader.get_tuple(thread), reads)
            hist = _best_ms(lambda: list(itertools.islice(graph.get_state_history(thread), 10)), reads)
    print(f"# lgnb at {lgnb.__file__}; {history} checkpoints, a fresh reader, best of {reads}")
    print(f"list(limit=10) {listed:.2f} ms   get_tuple(latest) {latest:.2f} ms   "
          f"first 10 of get_state_history {hist:.2f} ms")


def wide(keys: int, steps: int) -> None:
    import lgnb

    saver_scale.KEYS = [f"k{i:04d}" for i in range(keys)]
    saver_scale.BIG = saver_scale.KEYS[0]
    print(f"# lgnb at {lgnb.__file__}; {keys} keys (one of 1 KB changing), {steps} steps, "
          "median of 3 rounds")
    for name in saver_scale.SAVERS:
        rounds = [saver_scale.one_round(name, steps=steps) for _ in range(3)]
        per = statistics.median(us for us, _ in rounds)
        print(f"{name:<22} {per:8.1f} µs/checkpoint {rounds[-1][1] / 1024:8.0f} KB")


PROBE_STEPS = 200
"""Steps of the thread timed on a file of many threads (`--threads`)."""


def _thread_costs(name: str, count: int, steps: int, reads: int) -> tuple[float, float, float, int]:
    """(µs/checkpoint of one more thread, get_tuple ms, list(10) ms, file bytes) for a
    file of `count` threads of `steps` checkpoints each, written by saver `name`."""
    with tempfile.TemporaryDirectory(prefix="bench-threads-") as tmp:
        path = Path(tmp) / "threads.sqlite"
        limit = {"recursion_limit": steps + 10}
        with saver_scale.SAVERS[name](path) as saver:
            graph = saver_scale.build(saver, steps)
            for i in range(count):
                cfg = {"configurable": {"thread_id": f"t{i:05d}"}, **limit}
                graph.invoke(saver_scale._inputs(), cfg, durability="sync")
            # the timed thread is longer than the others: 20 steps are too few to time
            probe_graph = saver_scale.build(saver, PROBE_STEPS)
            timer = saver_scale.CpuTimer(saver)
            probe = {"configurable": {"thread_id": "probe"}, "recursion_limit": PROBE_STEPS + 10}
            probe_graph.invoke(saver_scale._inputs(), probe, durability="sync")
            per = 1e6 * timer.seconds / timer.puts
            saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = saver_scale._file_bytes(path)
        with saver_scale.SAVERS[name](path) as reader:
            middle = {"configurable": {"thread_id": f"t{count // 2:05d}"}}
            latest = _best_ms(lambda: reader.get_tuple(middle), reads)
            listed = _best_ms(lambda: list(reader.list(middle, limit=10)), reads)
    return per, latest, listed, size


def threads(count: int, steps: int, reads: int) -> None:
    import lgnb

    print(f"# lgnb at {lgnb.__file__}; files of 1 and {count} threads of {steps} checkpoints; "
          f"reads best of {reads}")
    print(f"{'saver':<22} {'threads':>7} {'µs/ckpt':>8} {'get_tuple ms':>13} {'list(10) ms':>12} {'file KB':>8}")
    for name in ("langgraph.SqliteSaver", "lgnb.SqliteSaver"):
        rows = [_thread_costs(name, n, steps, reads) for n in (1, count)]
        for n, (per, latest, listed, size) in zip((1, count), rows):
            print(f"{name:<22} {n:7d} {per:8.1f} {latest:13.3f} {listed:12.3f} {size / 1024:8.0f}")
        (p1, g1, l1, _), (pn, gn, ln, _) = rows
        print(f"{name:<22} {'ratio':>7} {pn / p1:7.2f}x {gn / g1:12.2f}x {ln / l1:11.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history", type=int, default=10_000)
    ap.add_argument("--reads", type=int, default=300)
    ap.add_argument("--wide", action="store_true")
    ap.add_argument("--threads", type=int, default=0, help="threads in the larger file")
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=None, help="steps per run (--wide: 300, --threads: 20)")
    args = ap.parse_args()
    if args.threads:
        threads(args.threads, args.steps or 20, args.reads)
    elif args.wide:
        wide(args.keys, args.steps or 300)
    else:
        reads(args.history, args.reads)


if __name__ == "__main__":
    main()
