"""`judge --report`: one self-contained page, opened in Debian's headless Chromium."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import run_forms
from conftest import run_cli, write_project
from judge_fixture import CATALOG, PROFILE, clean_run

pytestmark = pytest.mark.browser


def report(tmp_path: Path, profile: str = PROFILE, catalog: str = CATALOG) -> tuple[Path, str]:
    project = write_project(tmp_path / "p", catalog, {"judged": profile})
    (project / "mkdocs.yml").write_text("site_name: M\nsite_url: https://manual.example/\n", "utf-8")
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
