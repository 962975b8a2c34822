"""Reference curves on the site: a fixture profile with its captures in its own tree, seen in Chromium."""

from __future__ import annotations

import html as html_text
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from browser_helpers import served
from conftest import REPO, run_cli
from derive_helpers import SEEDS_PROFILE, seed_run, seeds_project, write_runs
from metrics_manual.runs.capture import captured_runs_by_profile
from metrics_manual.site.curves import ReferenceCurves
from metrics_manual.source.load import load_manual
from site_helpers import mkdocs_build

RUNS = ("seed-1", "seed-2", "seed-3")
# A second profile whose captures are not in the project (a capture source without its SHA-256, as a
# lab's summary file kept elsewhere): its page says so.
ELSEWHERE = (
    SEEDS_PROFILE.replace("id: seeds", "id: elsewhere")
    .replace("title: Seed runs", "title: Runs kept elsewhere")
    .replace("sources:\n", "sources:\n  kept: {kind: capture, path: lab/summary.json, keys: [runs.a]}\n")
)


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose profile was derived from three runs captured into captures/."""
    tmp = tmp_path_factory.mktemp("curves")
    root = seeds_project(tmp / "manual")
    (root / "ranges/profiles/elsewhere.yaml").write_text(ELSEWHERE, "utf-8")
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    # The hand-written pages and styles, as the site has them: the generated ones come from this source.
    for page in (REPO / "docs").glob("*.md"):
        shutil.copy(page, root / "docs" / page.name)
    shutil.copytree(REPO / "docs" / "stylesheets", root / "docs" / "stylesheets")
    paths = write_runs(tmp / "runs", {name: seed_run(i) for i, name in enumerate(RUNS, 1)})
    result = run_cli(
        "derive",
        "--profile",
        "seeds",
        *(f"--run={n}={p}" for n, p in paths.items()),
        "--capture-to",
        "captures/seeds",
        "--write",
        cwd=root,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert run_cli("build", cwd=root).returncode == 0
    return root


def test_curves_draw_each_captured_metric_once_with_its_runs(derived: Path) -> None:
    manual = load_manual(derived)
    curves = ReferenceCurves(manual, captured_runs_by_profile(derived, manual.profiles, manual.catalog))
    captured = {k for run in map(seed_run, (1, 2, 3)) for k in run.series}
    for metric in manual.metrics.values():
        assert curves(metric, manual.profile("elsewhere")) == [], metric.key  # its captures are not here
        drawings = curves(metric, manual.profile("seeds"))
        if metric.key not in captured:
            assert drawings == []
            continue
        assert len(drawings) == 1 and drawings[0].startswith("<svg") and "\n" not in drawings[0], metric.key
        title = re.search(r"<svg[^>]*><title>([^<]*)</title>", drawings[0])
        assert (
            title
            and html_text.unescape(title.group(1)).startswith(metric.key)
            and all(name in title.group(1) for name in RUNS)
        )


def test_no_curves_without_captures_in_the_project(derived: Path, tmp_path: Path) -> None:
    manual = load_manual(derived)
    assert all(
        ReferenceCurves(manual, captured_runs_by_profile(tmp_path, manual.profiles, manual.catalog))(m, p) == []
        for m in manual.metrics.values()
        for p in manual.profiles
    )  # the captures are not there


def test_profile_pages_say_where_the_captures_are(derived: Path) -> None:
    page = (derived / "docs/profiles/seeds.md").read_text("utf-8")
    assert "are in this repository" in page
    for name in RUNS:  # each run's source shows its file's digest next to its path
        source = load_manual(derived).profile("seeds").sources[name]
        assert f"capture file `{source.path}` (keys `{name}`), SHA-256 `{source.sha256[:12]}`" in page
    elsewhere = (derived / "docs/profiles/elsewhere.md").read_text("utf-8")
    assert "not in this repository" in elsewhere and "are in this repository" not in elsewhere
    assert "not in this repository" not in page


class _Curves(HTMLParser):
    """The title of each drawing of runs in a page (an svg inside the mm-curves block)."""

    def __init__(self) -> None:
        super().__init__()
        self.titles: list[str] = []
        self._open: list[str] = []  # the tags open inside a curves block
        self._title: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._open or "mm-curves" in (dict(attrs).get("class") or "").split():
            self._open.append(tag)
            if tag == "title" and self._open[-2:-1] == ["svg"]:
                self._title = []

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            if tag == "title" and self._title is not None:
                self.titles.append("".join(self._title))
                self._title = None
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._title is not None:
            self._title.append(data)


@pytest.mark.browser
def test_each_captured_metric_draws_its_runs(derived: Path, browser) -> None:
    site = derived / "site"
    built = mkdocs_build(derived, site)
    assert built.returncode == 0, built.stderr
    captured = {k for run in map(seed_run, (1, 2, 3)) for k in run.series}
    manual = load_manual(derived)
    metrics = [m for m in manual.metrics.values() if m.key in captured]
    # The drawings as the pages hold them (one page per section); a reader's browser shows the first.
    titles: dict[str, list[str]] = {}
    for section in manual.catalog.sections:
        parser = _Curves()
        parser.feed((site / "reference/metrics" / section.id / "index.html").read_text("utf-8"))
        titles[section.id] = parser.titles
    every = [t for ts in titles.values() for t in ts]
    assert len(every) == len(metrics)
    for metric in metrics:  # one drawing per captured metric, its title naming the runs
        mine = [t for t in every if t.startswith(f"{metric.key} ")]
        assert len(mine) == 1 and all(name in mine[0] for name in RUNS), (metric.key, every)
    with served(site) as base:
        page = browser.new_page()
        outside: list[str] = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((base, "data:")) else None)
        # The reader of the derived profile (the second: the other is folded for its readers).
        page.goto(f"{base}/reference/metrics/{next(s for s, ts in titles.items() if ts)}/?profile=seeds")
        shown = page.locator(".mm-curves svg > title").all_text_contents()
        assert shown == next(ts for ts in titles.values() if ts)
        assert page.locator(".mm-curves svg").first.evaluate("svg => svg.checkVisibility()")
        page.close()
    assert outside == []
