"""Run LangGraph's own test suite on lgnb: `./dev upstream [options] [-- pytest args]`.

`--suite langchain-agents` runs LangChain's `create_agent` tests instead, each agent rebuilt
on lgnb (`suites.py`); the steps below are the same for both.

1. Download the pinned `langgraph` sdist from PyPI (sha256 checked; cached, never committed).
2. Collect its `tests/` on LangGraph itself: the universe of test ids, per file.
3. Rewrite the imports by the rule in `rewrite.py` and run the suite on lgnb, with the
   suite's own conftest fixtures (memory, SQLite and — when `LGNB_TEST_POSTGRES_URL` is set
   — PostgreSQL savers; the PostgreSQL URL replaces the suite's Docker address).
4. Print per file: collected, passed, failed, skipped, private; then the share of
   non-private, non-skipped tests that pass, and every failure with its first line.

`--check` compares with `known_failures.txt` (one test id per line, `# reason` comments):
a failure not listed there fails the run, so CI catches regressions; a listed test that
now passes is reported so the list can shrink.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from rewrite import Rule, engine_modules_from_sdist  # noqa: E402
from suites import LANGGRAPH, SUITES, Suite  # noqa: E402

CACHE = Path(os.environ.get("LGNB_UPSTREAM_CACHE", Path.home() / ".cache" / "lgnb-upstream"))
PASSING = {"passed", "xfail"}
# "langgraph-fails": the unmodified test fails on LangGraph itself in this environment too
# (e.g. it pins `lc_versions` metadata that an installed `langchain` package extends).
NOT_COUNTED = {"skipped", "private", "langgraph-fails"}


def fetch_sdist(suite: Suite = LANGGRAPH) -> Path:
    """The pinned sdist, downloaded once with pip and checked against its sha256."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / suite.sdist
    if not path.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--no-binary", ":all:", f"{suite.dist}=={suite.version}", "-d", str(CACHE)],
            check=True,
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != suite.sha256:
        path.unlink()
        raise SystemExit(f"{suite.sdist}: sha256 {digest} is not the pinned {suite.sha256}; deleted it, run again")
    return path


def _postgres_fixtures(text: str, url: str) -> str:
    """The suite's fixtures, pointed at our PostgreSQL server instead of its Docker one.

    The suite gates its PostgreSQL savers and stores, its Redis cache and its LangGraph
    server tests on one `NO_DOCKER` flag. Only the first are wanted here: the savers and
    stores take the server at `url` (the database name is dropped: each test creates its
    own), the rest stays off (`NO_DOCKER=true`).
    """
    base = url.rsplit("/", 1)[0] + "/"
    text = text.replace('"postgres://postgres:postgres@localhost:5442/"', repr(base))
    text = _pooled_databases(text)
    if "NO_DOCKER = os.getenv" in text:
        text = text.replace("    if NO_DOCKER\n    else", "    if NO_POSTGRES\n    else")
        text = text.replace(
            'NO_DOCKER = os.getenv("NO_DOCKER", "false") == "true"',
            'NO_DOCKER = os.getenv("NO_DOCKER", "false") == "true"; NO_POSTGRES = False',
        )
    return text


# a fixture's own database, made and dropped per test -> one of `pg_databases.py`'s pool
_PER_TEST_DATABASE = (
    ('database = f"test_{uuid4().hex[:16]}"', "database = _lgnb_pg.lease(DEFAULT_POSTGRES_URI)"),
    ('await conn.execute(f"CREATE DATABASE {database}")', 'await conn.execute("SELECT 1")'),
    ('conn.execute(f"CREATE DATABASE {database}")', 'conn.execute("SELECT 1")'),
    ('await conn.execute(f"DROP DATABASE {database}")', "_lgnb_pg.release(DEFAULT_POSTGRES_URI, database)"),
    ('conn.execute(f"DROP DATABASE {database}")', "_lgnb_pg.release(DEFAULT_POSTGRES_URI, database)"),
)


def _pooled_databases(text: str) -> str:
    """A conftest's per-test `CREATE DATABASE` / `DROP DATABASE` made a lease and a release
    of an emptied database (`pg_databases.py`: the same empty database per test, without
    the two statements that took most of the suite's time)."""
    if "CREATE DATABASE" not in text:
        return text
    for old, new in _PER_TEST_DATABASE:
        text = text.replace(old, new)
    if "CREATE DATABASE" in text or "DROP DATABASE" in text:
        raise SystemExit("a conftest makes its PostgreSQL databases in a way runner._PER_TEST_DATABASE "
                         "does not know: update the patterns (or the pinned sdist changed)")
    return "from tests import _lgnb_pg\n" + text


def unpack(sdist: Path, work: Path, *, rewrite: bool, postgres: str | None,
           suite: Suite = LANGGRAPH) -> dict[str, int]:
    """Extract `tests/` into `work` (rewritten for lgnb when `rewrite`). Returns rule stats."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    top = suite.top
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(f"{top}/tests/")]
        tar.extractall(work, members=members, filter="data")
    shutil.move(str(work / top / "tests"), str(work / "tests"))
    shutil.rmtree(work / top)
    with tarfile.open(fetch_sdist(LANGGRAPH)) as tar:  # the engine's modules: LangGraph's
        rule = Rule(engine_modules_from_sdist(tar.getnames(), LANGGRAPH.top))
    for rel, text in suite.replace.items():
        (work / "tests" / rel).write_text(text, encoding="utf-8")
    stats: collections.Counter[str] = collections.Counter()
    for py in sorted((work / "tests").rglob("*.py")):
        text = py.read_text(encoding="utf-8")
        if postgres and py.name.startswith("conftest"):
            text = _postgres_fixtures(text, postgres)
        if postgres and py.name == "test_prune_postgres.py":  # PostgreSQL only, no Docker
            text = text.replace("pytest.mark.skipif(NO_DOCKER,", "pytest.mark.skipif(False,")
        if rewrite:
            result = rule.apply(text)
            text = result.source
            stats["files"] += 1
            stats["moved"] += len(result.moved)
            stats["private"] += len(result.private)
        py.write_text(text, encoding="utf-8")
    shutil.copy(HERE / "private_name.py", work / "tests" / "_lgnb_private.py")
    shutil.copy(HERE / "pg_databases.py", work / "tests" / "_lgnb_pg.py")
    if not (work / "tests" / "__init__.py").exists():  # tests import `tests.unit_tests...`
        (work / "tests" / "__init__.py").write_text("")
    (work / "pytest.ini").write_text(suite.ini)
    return dict(stats)


def run_pytest(work: Path, results: Path, args: list[str], *, postgres: str | None, jobs: int,
               suite: Suite = LANGGRAPH, lgnb: bool = True) -> int:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(work), str(HERE), env.get("PYTHONPATH", "")])
    env["LGNB_UPSTREAM_RESULTS"] = str(results)
    env["NO_DOCKER"] = "true"
    results.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pytest", *suite.pytest_flags, *(suite.lgnb_plugins if lgnb else ()),
           "-p", "lgnb_upstream_plugin", "-q", "--no-header", "-o", "console_output_style=classic", "--tb=no",
           "--timeout=120", "-rN", "--continue-on-collection-errors"]
    if jobs > 1:
        cmd += ["-n", str(jobs)]
    cmd += args or [suite.run]
    return subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL).returncode


def collect_universe(sdist: Path, work: Path, postgres: str | None, suite: Suite = LANGGRAPH) -> dict[str, str]:
    """Test ids of the unmodified suite, collected on LangGraph: {id: file} (cached in `work`)."""
    cache = work.parent / f"universe-{suite.name}-{'pg' if postgres else 'nopg'}.json"
    if cache.exists():
        return dict(json.loads(cache.read_text()))
    unpack(sdist, work, rewrite=False, postgres=postgres, suite=suite)
    env = dict(os.environ, PYTHONPATH=str(work), NO_DOCKER="true")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", *suite.pytest_flags, "--collect-only", "-q", suite.run],
        cwd=work, env=env, capture_output=True, text=True,
    ).stdout
    universe = {line: line.split("::")[0] for line in out.splitlines() if "::" in line}
    if universe:
        cache.write_text(json.dumps(universe))
    return universe


def load_results(path: Path) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        prev = out.get(rec["id"])
        if prev is None or prev["outcome"] in PASSING | {"skipped"}:
            out[rec["id"]] = rec  # a teardown error overrides a pass
    return out


def classify(universe: dict[str, str], results: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    """Each universe test's outcome on lgnb; tests of a file that failed to collect take
    the file's collection error."""
    file_errors = {rid: rec for rid, rec in results.items() if rec["outcome"] == "collect-error"}
    # Parametrized ids made from a private object's name differ on lgnb (the placeholder
    # has another name): such a test is private when its siblings of that function are.
    private_bases = {rid.split("[")[0] for rid, rec in results.items() if rec["outcome"] == "private"}
    out: dict[str, dict[str, object]] = {}
    for tid, file in universe.items():
        rec = results.get(tid)
        if rec is None and "[" in tid and tid.split("[")[0] in private_bases:
            rec = {"outcome": "private", "message": "parametrized over a private name"}
        if rec is None:
            err = file_errors.get(file)
            if err is not None and "PrivateAPIUsed" in str(err["message"]):
                rec = {"outcome": "private", "message": err["message"]}
            elif err is not None:
                rec = {"outcome": "failed", "message": "collection: " + str(err["message"])}
            else:
                rec = {"outcome": "failed", "message": "not collected on lgnb"}
        out[tid] = rec
    return out


def _control(sdist: Path, work: Path, outcomes: dict[str, dict[str, object]], *, postgres: str | None, jobs: int,
             suite: Suite = LANGGRAPH) -> None:
    """Run each lgnb failure unmodified on LangGraph; one that fails there too is marked
    `langgraph-fails` (shown, not counted): it says nothing about lgnb."""
    failed = [t for t, r in outcomes.items() if str(r["outcome"]) not in PASSING | NOT_COUNTED and "::" in t]
    if not failed:
        return
    unpack(sdist, work, rewrite=False, postgres=postgres, suite=suite)
    path = work / "control.jsonl"
    run_pytest(work, path, failed, postgres=postgres, jobs=min(jobs, 2), suite=suite, lgnb=False)
    control = load_results(path)
    for t in failed:
        rec = control.get(t)
        if rec is not None and str(rec["outcome"]) not in PASSING | {"skipped"}:
            outcomes[t] = dict(outcomes[t], outcome="langgraph-fails",
                               message=f"fails on LangGraph too: {rec['message']}")


def read_known(suite: Suite = LANGGRAPH) -> set[str]:
    if not suite.known.exists():
        return set()
    return {ln.split("#")[0].strip() for ln in suite.known.read_text().splitlines() if ln.split("#")[0].strip()}


def report(outcomes: dict[str, dict[str, object]], universe: dict[str, str], *, show_failures: bool, engine: str = "lgnb",
           suite: Suite = LANGGRAPH) -> tuple[int, int]:
    per: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for tid, rec in outcomes.items():
        o = str(rec["outcome"])
        per[universe[tid]]["passed" if o in PASSING else o if o in NOT_COUNTED else "failed"] += 1
    cols = ("passed", "failed", "skipped", "private", "langgraph-fails")
    print(f"{'file':52} {'tests':>6} " + " ".join(f"{c[:7]:>7}" for c in cols) + "  (langgra = fails on LangGraph too)")
    tot: collections.Counter[str] = collections.Counter()
    for file in sorted(per):
        c = per[file]
        tot.update(c)
        print(f"{file:52} {sum(c.values()):6} " + " ".join(f"{c[k]:7}" for k in cols))
    print(f"{'TOTAL':52} {sum(tot.values()):6} " + " ".join(f"{tot[k]:7}" for k in cols))
    counted = tot["passed"] + tot["failed"]
    share = 100.0 * tot["passed"] / counted if counted else 0.0
    print(f"\n{engine} passes {tot['passed']} of {counted} non-private {suite.label} tests: {share:.1f}%")
    if show_failures:
        print("\nfailures:")
        for tid, rec in sorted(outcomes.items()):
            if str(rec["outcome"]) not in PASSING | {"skipped", "private"}:
                print(f"  {tid}: {str(rec['message']).splitlines()[0][:160] if rec['message'] else rec['outcome']}")
    privates = collections.Counter(
        name for rec in outcomes.values() if rec["outcome"] == "private" for name in rec.get("private") or ["(module level)"]
    )
    print("\nprivate tests by name used: " + ", ".join(f"{n} ({k})" for n, k in privates.most_common()))
    return tot["passed"], counted


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", choices=sorted(SUITES), default=LANGGRAPH.name,
                    help="LangGraph's suite (default) or LangChain's agent tests (suites.py)")
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "upstream")
    ap.add_argument("--jobs", "-n", type=int, default=int(os.environ.get("LGNB_UPSTREAM_JOBS", "4")),
                    help="pytest-xdist workers (default 4: PostgreSQL tests wait on the server more than on CPU)")
    ap.add_argument("--reference", action="store_true", help="run the unmodified suite on LangGraph (the control)")
    ap.add_argument("--no-postgres", action="store_true", help="memory and SQLite savers only")
    ap.add_argument("--check", action="store_true", help="fail on failures not in known_failures.txt")
    ap.add_argument("--failures", action="store_true", help="list every failure with its message")
    ap.add_argument("--write-known", action="store_true", help="with --check: write today's failures to known_failures.txt")
    ap.add_argument("--json", type=Path, help="write {test id: outcome record} here")
    ap.add_argument("pytest_args", nargs="*", help="tests to run (default: all), pytest options after --")
    ns = ap.parse_args(argv)
    suite = SUITES[ns.suite]
    ns.work = ns.work.resolve() if suite is LANGGRAPH else ns.work.resolve() / suite.name
    postgres = None if ns.no_postgres else os.environ.get("LGNB_TEST_POSTGRES_URL")
    sdist = fetch_sdist(suite)
    universe = collect_universe(sdist, ns.work / "reference", postgres, suite)
    if not universe:
        raise SystemExit("collecting the unmodified suite on LangGraph found no tests: is `langgraph` installed?")
    work = ns.work / ("reference" if ns.reference else "lgnb")
    stats = unpack(sdist, work, rewrite=not ns.reference, postgres=postgres, suite=suite)
    print(f"{suite.label} suite ({len(universe)} tests), "
          f"{'unmodified, on LangGraph' if ns.reference else 'imports rewritten, on lgnb'}; "
          f"savers: memory, SQLite{', PostgreSQL' if postgres else ''}; rule: {stats}", flush=True)
    results_path = work / "results.jsonl"
    run_pytest(work, results_path, ns.pytest_args, postgres=postgres, jobs=ns.jobs, suite=suite,
               lgnb=not ns.reference)
    results = load_results(results_path)
    if ns.pytest_args:  # a subset: report only what ran
        universe = {t: f for t, f in universe.items() if t in results or f in results}
    outcomes = classify(universe, results)
    if not ns.reference:
        _control(sdist, ns.work / "reference", outcomes, postgres=postgres, jobs=ns.jobs, suite=suite)
    report(outcomes, universe, show_failures=ns.failures, engine="LangGraph" if ns.reference else "lgnb",
           suite=suite)
    if ns.json:
        ns.json.write_text(json.dumps(outcomes, indent=1, sort_keys=True))
    if ns.check and not ns.reference:
        known = read_known(suite)
        failed = {t for t, r in outcomes.items() if str(r["outcome"]) not in PASSING | NOT_COUNTED}
        new = sorted(failed - known)
        if new and not ns.pytest_args:
            # A second run of just these tells a flaky test from a regression; both are shown.
            rerun = work / "rerun.jsonl"
            run_pytest(work, rerun, [t for t in new if "::" in t], postgres=postgres, jobs=1, suite=suite)
            again = load_results(rerun)
            flaky = [t for t in new if str(again.get(t, {}).get("outcome")) in PASSING]
            if flaky:
                print(f"\n{len(flaky)} failures passed when run again (flaky):")
                print("\n".join(f"  {t}: {str(outcomes[t]['message'])[:160]}" for t in flaky))
            new = [t for t in new if t not in flaky]
        fixed = sorted(t for t in known & set(outcomes) if t not in failed)
        if fixed:
            print(f"\n{len(fixed)} tests in known_failures.txt now pass (remove them):")
            print("\n".join("  " + t for t in fixed))
        if ns.write_known:
            suite.known.write_text(
                f"# {suite.label} tests that fail on lgnb, each with why (see README.md).\n"
                "# Generated by `runner.py --write-known`, then annotated by hand.\n"
                + "".join(f"{t}  # {str(outcomes[t]['message']).splitlines()[0][:140] if outcomes[t]['message'] else ''}\n"
                          for t in sorted(failed))
            )
            print(f"\nwrote {len(failed)} failures to {suite.known}")
            return 0
        if new:
            print(f"\n{len(new)} failures not in known_failures.txt:")
            print("\n".join(f"  {t}: {str(outcomes[t]['message'])[:160]}" for t in new))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
