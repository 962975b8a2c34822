"""Reference curves: the per-step runs a profile's ranges were derived from, drawn in each metric's entry.

Only captures inside the project are drawn (a profile whose captures live elsewhere, like
the lab's, says so on its page instead). The runs are read by the build and handed in:
the renderer never reads a run. A corridor is drawn over the steps of its reference (which
the model holds), with the runs when there are captured runs, and alone when there are none;
its reference's source is named under it.
"""

from __future__ import annotations

from collections.abc import Mapping

from metrics_manual.model.domain import bounds
from metrics_manual.model.schema import CaptureSource, Corridor, Metric, Profile
from metrics_manual.runs.run import Run
from metrics_manual.site.series_drawing import series_drawing
from metrics_manual.source.load import Manual


def run_names(profile: Profile, sid: str) -> str:
    source = profile.sources[sid]
    return ", ".join(source.keys) if isinstance(source, CaptureSource) else sid


class ReferenceCurves:
    """`curves(metric, profile)` in a template: the drawings of one metric's captured runs and corridors
    on a profile (its block of the metric's entry)."""

    def __init__(self, manual: Manual, captured: Mapping[str, Mapping[str, Run]]) -> None:
        self.manual, self.captured = manual, captured

    def __call__(self, metric: Metric, profile: Profile) -> list[str]:
        """One inline SVG per key of the metric with captured runs or a corridor on the profile (none without either)."""
        return [svg for key in metric.members or [metric.key] if (svg := self.drawing(profile, metric, key))]

    def drawing(self, profile: Profile, metric: Metric, key: str) -> str:
        """The captured runs of `key` on `profile` over its ranges, or its corridors alone; "" for neither."""
        runs = self.captured.get(profile.id, {})
        series = {run_names(profile, sid): run.series[key] for sid, run in runs.items() if run.series.get(key)}
        expectations = profile.expectations.get(key, [])
        references = [reference_words(profile, e) for e in expectations if isinstance(e, Corridor)]
        if not series and not references:
            return ""
        if series:
            title = f"{key} in the runs {', '.join(series)} of {profile.title}, from their captures in this repository"
        else:
            title = f"{key}: the corridor of {profile.title}"
        title += "".join(f"; {words}" for words in references)
        return series_drawing(series, expectations, metric.unit, title=title, domain=bounds(metric.value_domain))

    def corridors(self, profile: Profile) -> list[tuple[Metric, list[Corridor], str]]:
        """Each metric of `profile` with a corridor, for the profile page: the metric, its corridors and
        their drawing."""
        out = []
        for metric in self.manual.metrics.values():
            corridors = [e for e in profile.expectations.get(metric.key, []) if isinstance(e, Corridor)]
            if corridors:
                out.append((metric, corridors, self.drawing(profile, metric, metric.key)))
        return out


def reference_words(profile: Profile, e: Corridor) -> str:  # also a template filter
    """Where a corridor's reference comes from, in words: its source, file and digest."""
    sid = e.reference.source
    source = profile.sources.get(sid)
    made = f", a rolling median of {e.reference.rolling_median} steps" if e.reference.rolling_median else ""
    if not isinstance(source, CaptureSource):  # the loader lets no other through
        return f"its reference from source {sid}{made}"
    digest = f", SHA-256 {source.sha256[:12]}" if source.sha256 else ""
    return f"its reference from source {sid} ({source.path}{digest}, made from {', '.join(source.keys)}{made})"


def page_context(
    manual: Manual, captured: Mapping[str, Mapping[str, Run]], in_repo: Mapping[str, bool]
) -> dict[str, object]:
    """What templates call: `curves(metric, profile)` in a metric's entry, `captures_note(profile)` and
    `corridors(profile)` on its page."""
    curves = ReferenceCurves(manual, captured)
    return {
        "curves": curves,
        "corridors": curves.corridors,
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
