"""`judge --report`: one self-contained page, opened in Debian's headless Chromium."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import run_forms
from conftest import run_cli, write_project
from judge_fixture import CATALOG, PROFILE, clean_run, judged_project

pytestmark = pytest.mark.browser


def report(tmp_path: Path, profile: str = PROFILE, catalog: str = CATALOG) -> tuple[Path, str]:
    project = judged_project(tmp_path / "p", catalog, profile)
    run = clean_run()
    run["train/grad_norm"][7] = 7.2
    run["rollout/raw_reward"][4] = math.nan
    del run["perf/step_time"][5]
    run_forms.write_events(run, tmp_path / "ev")
    out = tmp_path / "report.html"
    result = run_cli(
        "judge", "--profile", "judged", str(tmp_path / "ev"), "--report", str(out), "--format", "json", cwd=project
    )
    assert result.returncode == 1, result.stderr
    return out, result.stdout


def open_offline(browser, path: Path):  # noqa: F811
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: problems.append(str(e)))
    context.route("**/*", lambda route: route.continue_() if route.request.url == path.as_uri() else route.abort())
    page.goto(path.as_uri())
    return context, page, requests, problems


def test_the_report_opens_offline_with_one_drawing_per_judged_metric(browser, tmp_path: Path) -> None:  # noqa: F811
    path, _ = report(tmp_path)
    context, page, requests, problems = open_offline(browser, path)
    try:
        sections = page.locator("section.metric")
        judged = [
            "rollout/raw_reward",
            "rollout/response_lengths",
            "train/grad_norm",
            "train/ppo_kl",
            "train/pg_clipfrac",
            "perf/step_time",
            "perf/rollout_time",
        ]
        assert [s.locator("h2 code").inner_text() for s in sections.all()] == judged
        for s in sections.all():
            assert s.locator("svg.mm-series").count() == 1
        grad = page.locator("section#m-train-grad_norm")
        assert grad.locator("g.mm-failing").count() == 1
        assert grad.locator("g.mm-failing").get_attribute("data-step") == "7"
        assert grad.locator("td.verdict").all_inner_texts() == ["fail", "pass"]
        assert page.locator("section#m-perf-step_time g.mm-failing").get_attribute("data-step") == "5"
        assert (
            grad.locator("a").get_attribute("href")
            == "https://manual.example/reference/metrics/training/#m-train-grad_norm"
        )
        assert "the gradient norm" in grad.inner_text()
    finally:
        context.close()
    assert requests == [path.as_uri()] and problems == []


def test_text_from_the_source_stays_text_in_the_report(browser, tmp_path: Path) -> None:  # noqa: F811
    hostile = "<img src=https://example.org/x.png onerror=alert(1)><script>alert(2)</script>"
    catalog = CATALOG.replace("meaning: the gradient norm", f"meaning: '{hostile}'")
    profile = PROFILE.replace("condition: with plain sampling", "condition: '<b>bold</b> & </td>'")
    path, _ = report(tmp_path, profile, catalog)
    context, page, requests, problems = open_offline(browser, path)
    try:
        grad = page.locator("section#m-train-grad_norm")
        assert hostile in grad.inner_text() and "<b>bold</b> & </td>" in grad.inner_text()
        assert page.locator("section.metric img, section.metric script, section.metric b").count() == 0
    finally:
        context.close()
    assert requests == [path.as_uri()] and problems == []


LONG_RUN = {  # in range on the fixture's profile, but for the rollout time's median (20 within 5%)
    "rollout/raw_reward": 0.5,
    "rollout/response_lengths": 400.0,
    "perf/step_time": 30.0,
    "perf/rollout_time": 31.123456789,
    "train/grad_norm": 1.0,
    "train/ppo_kl": 0.0,
    "train/pg_clipfrac": 0.0,
    "train/entropy_loss": 0.3,
}


def long_faulty_report(tmp_path: Path) -> Path:
    """A 200-step run: 30 neighbouring grad_norm steps out of their band, a NaN reward, step_time missing a step,
    a median off by a long fraction."""
    project = write_project(tmp_path / "p", CATALOG, {"judged": PROFILE})
    (project / "mkdocs.yml").write_text("site_name: M\n", "utf-8")
    steps = range(200)
    run = {key: {s: value for s in steps} for key, value in LONG_RUN.items()}
    for s in range(100, 130):
        run["train/grad_norm"][s] = 7 + s / 3  # long fractions: 40.333333333333336 ...
    run["rollout/raw_reward"][4] = math.nan
    del run["perf/step_time"][5]
    run_forms.write_events(run, tmp_path / "ev")
    out = tmp_path / "report.html"
    result = run_cli("judge", "--profile", "judged", str(tmp_path / "ev"), "--report", str(out), cwd=project)
    assert result.returncode == 1, result.stderr
    return out


def test_the_report_opens_on_a_summary_of_failures_then_errors_linking_to_their_sections(
    browser, tmp_path: Path
) -> None:
    path = long_faulty_report(tmp_path)
    context, page, requests, problems = open_offline(browser, path)
    try:
        summary = page.locator("nav.problems")
        box = summary.bounding_box()
        assert box is not None and box["y"] < 900  # on the first screen
        headings = summary.locator("h2").all_inner_texts()
        assert [h.split()[1] for h in headings] == ["failing", "error(s)"]  # failures first
        fail_keys = summary.locator("ol").first.locator("code").all_inner_texts()
        assert "train/grad_norm" in fail_keys and "perf/rollout_time" in fail_keys
        assert "rollout/raw_reward" in summary.locator("ol").last.locator("code").all_inner_texts()  # the NaN
        for link in summary.locator("a").all():
            target = link.get_attribute("href") or ""
            assert target.startswith("#") and page.locator(target).count() == 1, target
        # Values at the manual's digits, never 16 of them.
        text = page.locator("body").inner_text()
        assert "40.333333" not in text and "31.123456789" not in text
        assert "median 31.12 " in text
    finally:
        context.close()
    assert requests == [path.as_uri()] and problems == []


def test_the_report_draws_bands_over_their_steps_a_rug_of_failures_and_labels_nan(browser, tmp_path: Path) -> None:
    path = long_faulty_report(tmp_path)
    context, page, _, _ = open_offline(browser, path)
    try:
        reward = page.locator("section#m-rollout-raw_reward svg.mm-series")
        band = reward.locator("g.mm-mark[data-kind=band]")
        # The band covers 10 of 200 steps: it spans a small part of the plot's width.
        share = band.evaluate(
            "g => { const s = g.ownerSVGElement; return (g.dataset.xMax - g.dataset.xMin) / (s.dataset.xEnd - s.dataset.xStart) }"
        )
        assert 0 < share < 0.1
        texts = "ts => ts.map(t => t.textContent)"
        labels = reward.locator("text.mm-label").evaluate_all(texts)
        assert any(label.startswith("NaN") and "step 4" in label for label in labels)
        y_ticks = reward.locator("g.mm-tick-y").evaluate_all("gs => gs.map(g => Number(g.dataset.value))")
        assert 0.2 in y_ticks and 0.9 in y_ticks  # the band's limits are read off the axis
        grad = page.locator("section#m-train-grad_norm svg.mm-series")
        rug = grad.locator("g.mm-failing line.mm-rug")
        assert rug.count() == 30
        xs = rug.evaluate_all("ls => ls.map(l => l.getBoundingClientRect().left)")
        assert len(set(round(x, 1) for x in xs)) > 20  # ticks stay apart, not one blob
        worst = grad.locator("text.mm-label").evaluate_all(texts)
        assert worst == ["step 129: 50", "step 128: 49.67", "step 127: 49.33"]  # the worst few, at 4 digits
    finally:
        context.close()
