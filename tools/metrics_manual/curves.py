"""Reference curves: the per-step runs a profile's ranges were derived from, drawn in each metric's entry.

Only captures inside the project are drawn (a profile whose captures live elsewhere, like
the lab's, says so on its page instead); the runs are read once per build.
"""
from __future__ import annotations

from pathlib import Path

from .draw import series_drawing
from .load import Manual
from .model import CaptureSource, Metric, Profile
from .rejudge import captured_runs, captures_in_repo
from .run import Run


def run_names(profile: Profile, sid: str) -> str:
    source = profile.sources[sid]
    return ", ".join(source.keys) if isinstance(source, CaptureSource) else sid


class ReferenceCurves:
    """`curves(metric)` in a template: the drawings of one metric's captured runs."""

    def __init__(self, manual: Manual, root: Path) -> None:
        self.manual, self.root = manual, root
        self._runs: dict[str, dict[str, Run]] = {}

    def runs(self, profile: Profile) -> dict[str, Run]:
        if profile.id not in self._runs:
            self._runs[profile.id] = captured_runs(self.root, profile, self.manual.catalog)
        return self._runs[profile.id]

    def __call__(self, metric: Metric) -> list[str]:
        """One inline SVG per profile with captured runs of the metric (none without captures)."""
        blocks = []
        for profile in self.manual.profiles:
            for key in metric.members or [metric.key]:
                series = {run_names(profile, sid): run.series[key] for sid, run in self.runs(profile).items() if run.series.get(key)}
                if not series:
                    continue
                title = f"{key} in the runs {', '.join(series)} of {profile.title}, from their captures in this repository"
                svg = series_drawing(series, profile.expectations.get(key, []), metric.unit, title=title)
                if svg:
                    blocks.append(svg)
        return blocks


def page_context(manual: Manual, root: Path) -> dict[str, object]:
    """What templates call: `curves(metric)` in a metric's entry, `captures_note(profile)` on its page."""
    return {"curves": ReferenceCurves(manual, root), "captures_note": lambda profile: captures_note(root, profile)}


def captures_note(root: Path, profile: Profile) -> str:
    """What the profile page says of its captures: in the repository (checked, drawn) or not.

    A paragraph after a blank line (so it never joins a list above it), or "" without captures.
    """
    captures = [s for s in profile.sources.values() if isinstance(s, CaptureSource)]
    if not captures:
        return ""
    inside = captures_in_repo(root, profile)
    if not inside:
        return ("\nThe captures these ranges come from are not in this repository: `metrics-manual check` cannot hold "
                "the ranges against them, and the manual draws no reference curves for them.")
    return ("\nThe captures of the runs these ranges were derived from are in this repository: `metrics-manual check` "
            "holds the ranges against them and reports a changed file, and each metric's entry draws their curves.")
