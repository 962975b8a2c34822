"""Would the ranges hold for the next run? Each run judged on the ranges derived from the others."""

from __future__ import annotations

from metrics_manual.derive.held import applied, broken_line, failures
from metrics_manual.derive.stats import Options, derive
from metrics_manual.model.schema import Profile, ProfileExport
from metrics_manual.runs.run import Run
from metrics_manual.source.load import Manual


def leave_one_out(
    manual: Manual, profile: Profile, export: ProfileExport, runs: dict[str, Run], options: Options
) -> list[str]:
    """For each run: derive from all the others, judge it on the ranges they give; lines to print."""
    lines = []
    for name, run in runs.items():
        others = {n: r for n, r in runs.items() if n != name}
        derivation = derive(manual, profile, others, options, export)
        derived = {(o.key, o.index) for o in derivation.outcomes if o.values is not None and not o.problems}
        held = applied(export, derivation, list(others))
        broken = [b for b in failures(held, {name: run}, options.skip_first, every=True) if (b[0], b[1]) in derived]
        head = f"  {name}, judged on the ranges of {', '.join(others)}:"
        lines.append(f"{head} pass" if not broken else f"{head} would fail {len(broken)}")
        lines += [f"    {broken_line(b)}" for b in broken]
    return lines
