"""The tests/engine harness, with one presentation change for this suite.

Configs and metadata are dicts whose key *order* differs between engines (harmless: dict
equality ignores order), which buried the real difference in the printed diff. Here both
observables have their dict keys sorted before comparing and printing. Equality is exactly
the harness's.
"""

from __future__ import annotations

import difflib
import os
from typing import Any, Callable

import _diff


def sort_keys(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: sort_keys(v[k]) for k in sorted(v, key=repr)}
    if isinstance(v, list):
        return [sort_keys(x) for x in v]
    if isinstance(v, tuple):
        return tuple(sort_keys(x) for x in v)
    return v


def compare(ref: Any, cand: Any, *, exc: str = "full", ref_label: str = "langgraph",
            cand_label: str = "lgnb") -> tuple[Any, Any]:
    nref, ncand = _diff.normalize(ref), _diff.normalize(cand)
    if exc == "class":
        nref, ncand = _diff._only_class(nref), _diff._only_class(ncand)
    elif exc == "extends":
        ncand = _diff._accept_extended_messages(nref, ncand)
    elif exc != "full":
        raise ValueError(f"exc must be 'full', 'extends' or 'class', not {exc!r}")
    if nref != ncand:
        a, b = _diff.fmt(sort_keys(nref)).splitlines(), _diff.fmt(sort_keys(ncand)).splitlines()
        diff = "\n".join(difflib.unified_diff(a, b, ref_label, cand_label, lineterm="", n=3))
        raise _diff.DifferentialMismatch(f"observable differs ({ref_label} vs {cand_label}):\n{diff}")
    return nref, ncand


def differential(scenario: Callable[[_diff.Engine], Any], *, exc: str = "full",
                 selftest: bool | None = None, expect: Any = ...) -> Any:
    ref_e, cand_e = _diff.reference_engine(), _diff.candidate_engine(selftest)
    ref = _diff.run_scenario(scenario, ref_e)
    if expect is not ...:
        assert ref == expect, f"reference observable changed:\n{_diff.fmt(ref)}\n!=\n{_diff.fmt(expect)}"
    cand = _diff.run_scenario(scenario, cand_e)
    nref, _ = compare(ref, cand, exc=exc, ref_label=ref_e.label, cand_label=cand_e.label)
    if os.environ.get("LGNB_DIFF_SHOW"):
        print(f"\n--- reference observable ---\n{_diff.fmt(nref)}")
    return nref
