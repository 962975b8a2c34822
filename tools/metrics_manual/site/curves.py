"""Reference curves: the per-step runs a profile's ranges were derived from, drawn in each metric's entry.

Only captures inside the project are drawn (a profile whose captures live elsewhere, like
the lab's, says so on its page instead). The runs are read by the build and handed in:
the renderer never reads a run.
"""

from __future__ import annotations

from collections.abc import Mapping

from metrics_manual.model.domain import bounds
from metrics_manual.model.schema import CaptureSource, Metric, Profile
from metrics_manual.runs.run import Run
from metrics_manual.site.series_drawing import series_drawing


def run_names(profile: Profile, sid: str) -> str:
    source = profile.sources[sid]
    return ", ".join(source.keys) if isinstance(source, CaptureSource) else sid


class ReferenceCurves:
    """`curves(metric, profile)` in a template: the drawings of one metric's captured runs of a profile."""

    def __init__(self, captured: Mapping[str, Mapping[str, Run]]) -> None:
        self.captured = captured

    def __call__(self, metric: Metric, profile: Profile) -> list[str]:
        """One inline SVG per key of the metric the profile's captured runs hold (none without captures)."""
        blocks = []
        runs = self.captured.get(profile.id, {})
        for key in metric.members or [metric.key]:
            series = {run_names(profile, sid): run.series[key] for sid, run in runs.items() if run.series.get(key)}
            if not series:
                continue
            title = f"{key} in the runs {', '.join(series)} of {profile.title}, from their captures in this repository"
            svg = series_drawing(
                series,
                profile.expectations.get(key, []),
                metric.unit,
                title=title,
                domain=bounds(metric.value_domain),
            )
            if svg:
                blocks.append(svg)
        return blocks


def page_context(captured: Mapping[str, Mapping[str, Run]], in_repo: Mapping[str, bool]) -> dict[str, object]:
    """What templates call: `curves(metric, profile)` in a metric's entry, `captures_note(profile)` on its page."""
    return {
        "curves": ReferenceCurves(captured),
        "captures_note": lambda profile: captures_note(profile, in_repo.get(profile.id, False)),
    }


def captures_note(profile: Profile, inside: bool) -> str:
    """What the profile page says of its captures: in the repository (checked, drawn) or not.

    A paragraph after a blank line (so it never joins a list above it), or "" without captures.
    """
    captures = [s for s in profile.sources.values() if isinstance(s, CaptureSource)]
    if not captures:
        return ""
    if not inside:
        return (
            "\nThe captures these ranges come from are not in this repository: `metrics-manual check` cannot hold "
            "the ranges against them, and the manual draws no reference curves for them."
        )
    return (
        "\nThe captures of the runs these ranges were derived from are in this repository: `metrics-manual check` "
        "holds the ranges against them and reports a changed file, and each metric's entry draws their curves."
    )
