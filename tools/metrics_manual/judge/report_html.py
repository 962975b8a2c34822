"""`judge --report FILE.html`: one self-contained page, a drawing per judged metric.

Drawings come from `site/series_drawing.py` (inline SVG in the site's style: no plotting
library, no asset to fetch), the page from templates/report/judge.html.j2 with autoescape
on, so text from the source or from the run's files stays text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
from markupsafe import Markup

from metrics_manual.diagnostics.finding import UsageError
from metrics_manual.judge.report_text import ranges, uncovered_words
from metrics_manual.judge.verdict import Judgement, Result
from metrics_manual.model.domain import bounds
from metrics_manual.model.schema import Expectation, ProfileExport, metric_anchor, unit_domain
from metrics_manual.runs.run import Run
from metrics_manual.site.series_drawing import series_drawing
from metrics_manual.text import inert

TEMPLATE = "report/judge.html.j2"
_ORDER = {"error": 0, "fail": 1, "pass": 2}


@dataclass
class MetricPart:
    key: str
    meaning: str | None
    url: str | None
    anchor: str
    results: list[Result] = field(default_factory=list)
    drawing: Markup = Markup("")

    @property
    def logged_as(self) -> list[str]:
        """The key's former names the run logged it under (the same for each of its results)."""
        return self.results[0].logged_as if self.results else []

    @property
    def worst(self) -> str:
        return min((r.verdict for r in self.results), key=_ORDER.__getitem__)


def metric_parts(j: Judgement, run: Run, profile: ProfileExport) -> list[MetricPart]:
    """One part per judged metric, in the profile's order, with its drawing."""
    parts: dict[str, MetricPart] = {}
    for r in j.results:
        if r.metric not in parts:
            parts[r.metric] = MetricPart(r.metric, r.meaning, r.url, metric_anchor(r.metric))
        parts[r.metric].results.append(r)
    for key, part in parts.items():
        expectations: list[Expectation] = list(profile.metric(key).expectations)
        failing = sorted({p.step for r in part.results for p in r.failing_steps})
        values: Mapping[int, float] = run.series.get(key) or {}
        if values or failing:
            part.drawing = Markup(
                series_drawing(
                    {"run": values},
                    expectations,
                    part.results[0].unit,
                    title=f"{key}: the run's values per step",
                    failing={"run": failing},
                    domain=bounds(unit_domain(part.results[0].unit)),  # exports carry the unit, not the domain
                )
            )
    return list(parts.values())


@dataclass(frozen=True)
class Problem:
    """One line of the summary at the top: a failing or erring expectation, linking to its section."""

    verdict: str
    key: str
    anchor: str
    expected: str
    reason: str


def problems(j: Judgement) -> list[Problem]:
    """Every failing then every erring expectation, each group in the profile's order."""
    out = [
        Problem(r.verdict, r.metric, metric_anchor(r.metric), r.expected, r.reason)
        for verdict in ("fail", "error")
        for r in j.results
        if r.verdict == verdict
    ]
    return out


def report_html(j: Judgement, run: Run, profile: ProfileExport, templates: Path) -> str:
    if not (templates / TEMPLATE).is_file():
        raise UsageError(f"the report template {templates / TEMPLATE} is missing")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["inert"] = inert  # keys and paths from the run's files: control characters shown escaped
    s = j.summary
    word = (
        "every judged expectation passes"
        if j.exit_code == 0
        else "fail"
        if s.failed
        else "error"
        if s.errors or s.problems
        else "nothing judged"
    )
    return env.get_template(TEMPLATE).render(
        j=j,
        s=s,
        metrics=metric_parts(j, run, profile),
        problems=problems(j),
        excluded=ranges(j.run.excluded_steps),
        uncovered_words=uncovered_words,
        verdict_word=word,
        verdict_class="pass" if j.exit_code == 0 else "fail" if s.failed else "error",
    )
