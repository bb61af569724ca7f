"""The true reason a gate matched nothing, in one sentence that says what to do.

Pure. "No suite that ran matches" sends a user to check globs even when the gate lacked a
baseline or its metric cannot be computed from the suites that ran; each case gets its own
sentence here, with a did-you-mean for globs that look misspelt.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ...text.didyoumean import suggest_glob
from ..aggregate import METRIC_KINDS

if TYPE_CHECKING:
    from .spec import Gate

# A CI gate on an estimate whose method cannot give an honest interval (the aggregate's or
# change's ``interval_reason``): not evaluated, and the reason follows this prefix.
NO_HONEST_INTERVAL = "no honest confidence interval: "
NO_BASELINE = ("no baseline run was given: pass --optbench-baseline REPORT.json (the JSON report of a run on "
               "the main branch), or drop the change gate from this run's thresholds")
ONLY_WITH = {
    "climatology_brier_oos": "--optbench-base-rate P",
    "brier_skill_oos": "--optbench-base-rate P",
}
SHOWN = 8  # names listed in a sentence


def names(values: Iterable[str]) -> str:
    """``a, b, c`` (and how many more)."""
    ordered = sorted(set(values))
    text = ", ".join(ordered[:SHOWN])
    return text + (f" and {len(ordered) - SHOWN} more" if len(ordered) > SHOWN else "") if ordered else "none"


def _globs(globs: Sequence[str]) -> str:
    return "[" + ", ".join(f"'{g}'" for g in globs) + "]"


def _corrections(globs: Sequence[str], candidates: Collection[str]) -> str:
    fixes = [f"'{fix}' (for '{g}')" for g in globs if (fix := suggest_glob(g, candidates))]
    return f"; a near glob that matches: {' or '.join(fixes)}" if fixes else ""


def unmatched_reason(gate: Gate, suite_kinds: Mapping[str, Sequence[str]],
                     conditions: Mapping[str, Collection[str]]) -> str:
    """Why ``gate`` (a gate on a level, not a change) has no (suite, condition) to judge.

    ``suite_kinds``: each suite that ran -> its item kinds; ``conditions``: each suite ->
    the conditions (or effect labels) the gate's metric could be judged under.
    """
    ran = sorted(suite_kinds)
    if not ran:
        return "no suite item ran (no suite was collected, or every item was deselected or skipped)"
    kinds = METRIC_KINDS.get(gate.metric)
    wanted = " or ".join(kinds) if kinds else "any"
    if gate.suites:
        matched = [s for s in ran if any(fnmatch.fnmatchcase(s, g) for g in gate.suites)]
        if not matched:
            return (f"its suites {_globs(gate.suites)} match none of the suites that ran ({names(ran)})"
                    f"{_corrections(gate.suites, ran)}; fix the glob in the thresholds file or run those suites")
    else:
        matched = [s for s in ran if kinds is None or any(k in kinds for k in suite_kinds[s])]
        if not matched:
            return (f"{gate.metric} is computed from {wanted} items, and no suite that ran has them "
                    f"({names(ran)}); run such a suite or name the gate's suites")
    labels = {c for s in matched for c in conditions.get(s, ())}
    if gate.conditions and labels and not any(fnmatch.fnmatchcase(c, g) for c in labels for g in gate.conditions):
        return (f"its conditions {_globs(gate.conditions)} match no condition of the suites it covers "
                f"({names(labels)}){_corrections(gate.conditions, labels)}; fix the glob in the thresholds file")
    if gate.metric in ONLY_WITH:
        return f"{gate.metric} is computed only with {ONLY_WITH[gate.metric]}; pass it or drop the gate"
    if gate.metric == "calibration_error":
        return (f"calibration_error is computed only from items with a stated rate (expected:, Track A), and no "
                f"suite it covers has them ({names(matched)}); name a Track A suite in the gate's suites")
    if gate.metric in ("condition_effect", "skew_effect", "narrative_susceptibility"):
        return (f"{gate.metric} compares arms with 'base' (narrative_up with narrative_down), and no suite it "
                f"covers ran such arms ({names(matched)})")
    return f"{gate.metric} was not computed for the suites it covers ({names(matched)})"


def unshared_reason(gate: Gate, shared: Collection[tuple[str, str]]) -> str:
    """Why a change gate has nothing to judge although a baseline was given."""
    suites = sorted({s for s, _ in shared})
    if not suites:
        return "this run and the baseline share no item (compare runs over the same suites)"
    if gate.suites and not any(fnmatch.fnmatchcase(s, g) for s in suites for g in gate.suites):
        return (f"its suites {_globs(gate.suites)} match none of the suites this run shares with the baseline "
                f"({names(suites)}){_corrections(gate.suites, suites)}")
    if gate.conditions:
        labels = {c for s, c in shared if not gate.suites or any(fnmatch.fnmatchcase(s, g) for g in gate.suites)}
        if not any(fnmatch.fnmatchcase(c, g) for c in labels for g in gate.conditions):
            return (f"its conditions {_globs(gate.conditions)} match no condition shared with the baseline "
                    f"({names(labels)}){_corrections(gate.conditions, labels)}")
    return (f"{gate.metric} has no change against the baseline in the suites it covers: the two runs share no "
            "usable answers there, or the metric does not apply to their items")
