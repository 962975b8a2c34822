"""A corridor on the site: the profile page and the metric's entry draw it over the steps of its reference,
its reference's source named; the reference capture is drawn as the corridor, never as a run."""

from __future__ import annotations

import html
import re
from pathlib import Path

from conftest import run_build
from corridor_fixture import KEY, REFERENCE, corridor_project, pin, reward_run
from metrics_manual.model.phrase import describe
from metrics_manual.runs.capture import capture_text, sha256_of
from metrics_manual.source.load import load_manual


def test_the_profile_page_and_the_entry_draw_the_corridor_with_its_reference_s_source(tmp_path: Path) -> None:
    root = corridor_project(tmp_path / "p")
    run_build(root)
    [e] = load_manual(root).profile("p").expectations[KEY]
    page = (root / "docs/profiles/p.md").read_text("utf-8")
    corridors = page.split("## Corridors {#corridors}", 1)[1].split("## Sources", 1)[0]
    source = f"its reference from source ref ({REFERENCE}, SHA-256 {sha256_of(root / REFERENCE)[:12]}, made from mean)"
    assert f"- `{KEY}`: {describe(e, None)}; " in corridors
    assert source in corridors
    [svg] = re.findall(r'<div class="mm-curves" data-search-exclude>(<svg.*?</svg>)</div>', corridors)
    assert 'class="mm-mark mm-corridor"' in svg and 'class="mm-run"' not in svg  # no run captured: the corridor alone
    entry = (root / "docs/reference/metrics/rollout.md").read_text("utf-8")
    assert entry.count('class="mm-mark mm-corridor"') == 2  # the sweep on the value axis, the band over the steps
    titles = [
        html.unescape(t) for t in re.findall(r'class="mm-drawing mm-series" role="img" aria-label="([^"]*)"', entry)
    ]
    assert titles == [f"{KEY}: the corridor of Corridor runs; {source}"]


def test_captured_runs_are_drawn_inside_the_corridor_and_the_reference_is_not_one_of_them(tmp_path: Path) -> None:
    root = corridor_project(tmp_path / "p")
    sha = pin(root, "captures/p/a.jsonl", capture_text(reward_run(1), [KEY, "rollout/step"]))
    profile = root / "ranges/profiles/p.yaml"
    profile.write_text(
        profile.read_text("utf-8").replace(
            "expectations:",
            f"  a: {{kind: capture, path: captures/p/a.jsonl, keys: [a], sha256: {sha}}}\nexpectations:",
        ),
        "utf-8",
    )
    run_build(root)
    entry = (root / "docs/reference/metrics/rollout.md").read_text("utf-8")
    runs = re.findall(r'<g class="mm-run" data-run="([^"]+)"', entry)
    assert runs == ["a"]  # the run, drawn; the reference capture is the corridor, not a run
    titles = [
        html.unescape(t) for t in re.findall(r'class="mm-drawing mm-series" role="img" aria-label="([^"]*)"', entry)
    ]
    assert [t.split("; its reference")[0] for t in titles] == [
        f"{KEY} in the runs a of Corridor runs, from their captures in this repository"
    ]
