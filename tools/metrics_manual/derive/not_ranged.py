"""Every key the runs log that derive does not range, and why: nothing the runs hold is left out in silence.

A key in no catalog is the common case (a team's fork logs keys of its own): the reason says how
`--add-keys TEAM` documents and ranges it (derive/add_keys.py decides which it can add).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from metrics_manual.model.keys import KeySet
from metrics_manual.runs.run import Run
from metrics_manual.source.load import TEAMS, Manual

ADD_KEYS = f"--add-keys TEAM adds it to {TEAMS}/TEAM.yaml, a catalog of your team's own keys, and ranges it"


@dataclass(frozen=True)
class NotRanged:
    key: str
    reason: str


def logged_keys(runs: Mapping[str, Run]) -> set[str]:
    """Every key any run logged: the values read, and the keys read past (no known namespace)."""
    return {k for run in runs.values() for k in (*(k for k, v in run.series.items() if v), *run.unread)}


def lacking(key: str, runs: Mapping[str, Run]) -> list[str]:
    """The runs that do not log `key`."""
    return [name for name, run in runs.items() if not run.series.get(key) and key not in run.unread]


def carried_step_key(key: str, runs: Mapping[str, Run]) -> str | None:
    """The one step key every run's records of `key` carried (its namespace has none), else None."""
    found = {run.carried.get(key) for run in runs.values()}
    return found.pop() if len(found) == 1 else None


def not_ranged(
    manual: Manual,
    runs: Mapping[str, Run],
    ranged: Collection[str],
    asked: Collection[str] = (),
    addable: Mapping[str, str] | None = None,
) -> list[NotRanged]:
    """Each key the runs log that is not in `ranged` (the keys derive derived or checked), with why;
    `asked`: the keys --metric names (none: every key); `addable`: a key --add-keys could add -> why
    it did not (None when --add-keys was not given)."""
    metrics = manual.metrics
    catalog = KeySet(manual.documented())
    step_keys = set(manual.catalog.step_keys.values())
    family = {k: m.key for m in metrics.values() for k in m.members}
    miles_logs = KeySet(e.key for e in (manual.coverage.undocumented if manual.coverage else []))
    out = []
    for key in sorted(logged_keys(runs) - set(ranged)):
        documented = catalog.match(key)
        if key in step_keys:
            why = "a step key: it numbers the steps of its namespace's keys"
        elif documented is None:
            why = _undocumented(key, runs, miles_logs.match(key) is not None, addable, manual.catalog.step_keys)
        elif asked and key not in asked:
            why = "not named by --metric"
        elif (m := metrics.get(documented)) is not None and m.not_logged is not None:
            why = "the catalog says no process logs it (not_logged), yet a run does: correct the catalog"
        elif key in family:
            why = f"a member of the family {family[key]}: derive ranges a member when --metric names it"
        elif documented != key:
            why = f"documented by the pattern {documented}, which a profile cannot range"
        elif missing := lacking(key, runs):
            why = _some_runs(missing, runs)
        else:  # derive proposes a range for every other key of the catalog: said all the same, never silence
            why = "derive proposes no range for it"
        out.append(NotRanged(key, why))
    return out


def _some_runs(missing: list[str], runs: Mapping[str, Run]) -> str:
    return (
        f"logged by {len(runs) - len(missing)} of {len(runs)} runs ({', '.join(missing)} "
        f"{'lacks' if len(missing) == 1 else 'lack'} it): a range needs every run"
    )


def _undocumented(
    key: str, runs: Mapping[str, Run], miles_logs: bool, addable: Mapping[str, str] | None, step_keys: Mapping[str, str]
) -> str:
    """Why a key in no catalog is not ranged."""
    if miles_logs:
        return "Miles logs it and the catalog does not document it yet (ranges/coverage.yaml): add it there"
    if addable is not None:
        return "in no catalog; " + addable.get(key, "--add-keys did not add it")
    ns = key.split("/", 1)[0]
    if ns not in step_keys:
        carried = carried_step_key(key, runs)
        carry = f"its records carry {carried}" if carried else "its records carry no one step key"
        return f"in no catalog, and its namespace {ns} has no step key ({carry}); {ADD_KEYS}"
    return f"in no catalog; {ADD_KEYS}"
