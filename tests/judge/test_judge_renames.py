"""judge on a catalog whose entries were renamed (renamed_from) and that documents key patterns.

A run from before a rename logs the former name: it is judged as the current key, and every
output says so. A run's keys the catalog does not document are named in every output, capped.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import run_forms
from conftest import run_cli, write_project
from judge_fixture import CATALOG, PROFILE, STEPS, clean_run, judged_profile, judged_project
from metrics_manual.exports.document import export_document
from metrics_manual.judge.judging import UNKNOWN_SHOWN, judge, judged_keys
from metrics_manual.judge.report_text import render
from metrics_manual.judge.verdict import Judgement
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs.read import read_run
from metrics_manual.runs.renames import fold
from metrics_manual.source.load import load_manual

OLD = "perf/total_train_time"
NEW = "perf/step_time"
# A former name in a namespace without a step key: it is placed by its current key's (rollout/step).
OLD_ELSEWHERE = "timer/rollout"

RENAMED_CATALOG = (
    CATALOG.replace(
        "      - {key: perf/step_time, meaning: seconds per step, unit: s}\n",
        "      - key: perf/step_time\n"
        "        meaning: seconds per step\n"
        "        unit: s\n"
        f"        renamed_from: [{{key: {OLD}, commit: 26695d7b}}]\n",
    )
    .replace(
        "      - {key: perf/rollout_time, meaning: seconds of generation, unit: s}\n",
        "      - key: perf/rollout_time\n"
        "        meaning: seconds of generation\n"
        "        unit: s\n"
        f"        renamed_from: [{{key: {OLD_ELSEWHERE}, commit: 0123abcd}}]\n",
    )
    .replace("perf: rollout/step}", "perf: rollout/step, eval: eval/step}")
    + """\
  - id: evaluation
    title: Evaluation
    metrics:
      - {key: "eval/{dataset}", meaning: the score on one evaluation set}
      - {key: "rollout/zero_std/count_{reward}", meaning: prompts whose answers all got this reward}
"""
)
assert RENAMED_CATALOG.count("renamed_from") == 2
# perf/step_time gets a band, so that the values read under the former name are judged, not only seen.
RENAMED_PROFILE = PROFILE.replace(
    "  perf/step_time:\n    - {kind: presence, at: every_step}\n",
    "  perf/step_time:\n    - {kind: presence, at: every_step}\n    - {kind: band, min: 10, max: 100}\n",
)
assert RENAMED_PROFILE != PROFILE
STEP_KEYS = {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_project(tmp_path_factory.mktemp("renames") / "p", RENAMED_CATALOG, RENAMED_PROFILE)


@pytest.fixture(scope="module")
def profile(project: Path) -> ProfileExport:
    return judged_profile(project)


def old_run() -> run_forms.Series:
    """The clean run as a Miles from before the rename logs it: perf/step_time under its former name."""
    run = clean_run()
    run[OLD] = run.pop(NEW)
    return run


def bad(j: Judgement) -> dict[tuple[str, int], str]:
    return {(r.metric, r.expectation): r.verdict for r in j.results if r.verdict != "pass"}


def read(folder: Path, profile: ProfileExport) -> Judgement:
    run = read_run([folder], STEP_KEYS, keys=judged_keys(profile), renames=profile.renames())
    return judge(profile, run)


def dashboard(folder: Path, records: list[tuple[str, int, dict[str, object]]]) -> Path:
    """A dashboard log of (step key, step, metrics) records, written as Miles writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "metrics.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i, (sk, step, metrics) in enumerate(records):
            fh.write(json.dumps({"ts": 1.0 + i, "step_key": sk, "step": step, "metrics": {sk: step, **metrics}}) + "\n")
    return folder


# --- a renamed key ----------------------------------------------------------------------------


def test_the_exported_profile_carries_the_renames(profile: ProfileExport) -> None:
    assert profile.renames() == {OLD: NEW, OLD_ELSEWHERE: "perf/rollout_time"}
    assert [r.key for r in profile.metric(NEW).renamed_from] == [OLD]
    # Families and patterns are not renamed value by value: only plain keys alias.
    assert all(new in {m.key for m in profile.metrics if not m.members} for new in profile.renames().values())


@pytest.mark.parametrize("form", ["events", "dashboard", "tensorboard", "wandb-csv"])
def test_a_former_name_is_judged_as_the_key_in_every_form(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    if form == "tensorboard":
        pytest.importorskip("tensorboard", reason="pip install 'metrics-manual[tensorboard]'")
    run = old_run()
    run[OLD][6] = 500.0  # outside the band: the values under the former name are judged, not only seen
    run_forms.write(form, run, tmp_path / form)
    j = read(tmp_path / form, profile)
    assert bad(j) == {(NEW, 1): "fail"}, [r.reason for r in j.results if r.verdict != "pass"]
    step_time = [r for r in j.results if r.metric == NEW]
    assert [r.logged_as for r in step_time] == [[OLD], [OLD]]
    assert step_time[0].steps_judged == len(STEPS) and "step 6" in step_time[1].reason
    assert all(r.logged_as == [] for r in j.results if r.metric != NEW)
    # A former name is documented: not an unknown key, and not a metric of its own.
    assert OLD not in {n.metric for n in j.not_judged} and j.unknown_keys.count == 0


def test_without_the_renames_the_former_name_is_no_value_of_the_key(tmp_path: Path, profile: ProfileExport) -> None:
    # What the renames change: read as a plain key, perf/step_time is missing (an error).
    run_forms.write_dashboard(old_run(), tmp_path / "d")
    stripped = profile.model_copy(
        update={"metrics": [m.model_copy(update={"renamed_from": []}) for m in profile.metrics]}
    )
    j = judge(stripped, read_run([tmp_path / "d"], STEP_KEYS, keys=judged_keys(stripped)))
    assert bad(j) == {(NEW, 0): "error", (NEW, 1): "error"}
    assert OLD in j.unknown_keys.listed


def test_the_api_folds_a_run_read_without_the_renames(tmp_path: Path, profile: ProfileExport) -> None:
    run_forms.write_events(old_run(), tmp_path / "ev")
    run = read_run([tmp_path / "ev"], STEP_KEYS)  # every key kept, no renames given
    j = judge(profile, run)
    assert bad(j) == {} and {r.metric: r.logged_as for r in j.results}[NEW] == [OLD]
    assert OLD in run.series and NEW not in run.series  # the caller's run is left as it was read


def elsewhere_records() -> list[tuple[str, int, dict[str, object]]]:
    """The clean run with perf/rollout_time logged as timer/rollout, in the rollout/step records."""
    run = clean_run()
    values = run.pop("perf/rollout_time")
    return [
        (sk, step, {**m, OLD_ELSEWHERE: values[step]} if sk == "rollout/step" else m)
        for sk, step, m in run_forms.calls(run)
    ]


def test_a_former_name_in_another_namespace_is_placed_by_the_current_key(
    tmp_path: Path, profile: ProfileExport
) -> None:
    j = read(dashboard(tmp_path / "d", elsewhere_records()), profile)
    assert bad(j) == {}, [r.reason for r in j.results if r.verdict != "pass"]
    assert {r.metric: r.logged_as for r in j.results}["perf/rollout_time"] == [OLD_ELSEWHERE]


def test_a_run_that_switched_names_midway_is_one_key(tmp_path: Path, profile: ProfileExport) -> None:
    # Miles upgraded between two resumed segments: steps 0-4 under the former name, 5-9 under the current one.
    run = clean_run()
    run[OLD] = {s: v for s, v in run[NEW].items() if s < 5}
    run[NEW] = {s: v for s, v in run[NEW].items() if s >= 5}
    run_forms.write_events(run, tmp_path / "ev")
    j = read(tmp_path / "ev", profile)
    assert bad(j) == {}
    presence = next(r for r in j.results if r.metric == NEW and r.kind == "presence")
    assert presence.steps_judged == len(STEPS) and presence.logged_as == [OLD]


def test_both_names_agreeing_at_a_step_pass(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    run[OLD] = dict(run[NEW])
    run_forms.write_dashboard(run, tmp_path / "d")
    j = read(tmp_path / "d", profile)
    assert bad(j) == {}


def test_both_names_disagreeing_at_a_step_is_an_error_never_a_pick(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    run[OLD] = dict(run[NEW])
    run[OLD][3] = 77.0  # also inside the band: picking either value would pass
    run[OLD][8] = math.nan  # NaN under one name is a disagreement too (and not a finite number)
    run_forms.write_dashboard(run, tmp_path / "d")
    j = read(tmp_path / "d", profile)
    assert bad(j) == {(NEW, 0): "error", (NEW, 1): "error"}
    for r in (r for r in j.results if r.metric == NEW):
        assert "two names of the key disagree at 2 steps (step 3 and 1 more)" in r.reason, r.reason
        assert f"{OLD} 77 and {NEW} 33" in r.reason and r.logged_as == [OLD]
    # Steps excluded on the command line drop the disagreement with them.
    excluded = judge(profile, read_run([tmp_path / "d"], STEP_KEYS, renames=profile.renames()), exclude_steps=[3, 8])
    assert bad(excluded) == {}


def test_fold_keeps_what_was_logged_where_a_number_belongs(tmp_path: Path, profile: ProfileExport) -> None:
    run = old_run()
    dashboard_dir = tmp_path / "d"
    run_forms.write_dashboard(run, dashboard_dir)
    with (dashboard_dir / "metrics.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"ts": 9, "step_key": "rollout/step", "step": 10, "metrics": {OLD: "slow"}}) + "\n")
    j = read(dashboard_dir, profile)
    r = next(r for r in j.results if r.metric == NEW and r.kind == "band")
    assert r.verdict == "error" and "step 10: 'slow'" in r.reason, r.reason


def test_fold_is_a_no_op_without_a_former_name(tmp_path: Path, profile: ProfileExport) -> None:
    run_forms.write_dashboard(clean_run(), tmp_path / "d")
    run = read_run([tmp_path / "d"], STEP_KEYS)
    assert fold(run, profile.renames()) is run and run.renamed == {}


def test_a_former_name_of_a_key_without_a_range_is_logged_not_unknown(tmp_path: Path) -> None:
    ranged = "  perf/rollout_time:\n    - {kind: median, value: 20, steps: 10, tolerance: 0.05}\n"
    assert ranged in RENAMED_PROFILE
    root = write_project(tmp_path / "p", RENAMED_CATALOG, {"judged": RENAMED_PROFILE.replace(ranged, "")})
    manual = load_manual(root)
    profile = export_document(manual, manual.profile("judged"), None)
    j = read(dashboard(tmp_path / "d", elsewhere_records()), profile)
    reasons = {n.metric: n.reason for n in j.not_judged}
    assert reasons["perf/rollout_time"] == "the profile gives no range (logged by the run)"
    assert j.unknown_keys.count == 0


# --- what each output says ----------------------------------------------------------------------


def run_cli_json(project: Path, folder: Path, *extra: str) -> dict:
    ran = run_cli("judge", "--profile", "judged", str(folder), "--format", "json", *extra, cwd=project)
    assert ran.returncode in (0, 1), ran.stderr
    return json.loads(ran.stdout)


def test_every_output_says_the_key_was_read_under_its_former_name(tmp_path: Path, project: Path) -> None:
    run = old_run()
    run[OLD][6] = 500.0
    run_forms.write_events(run, tmp_path / "ev")
    out = {
        fmt: run_cli("judge", "--profile", "judged", str(tmp_path / "ev"), "--format", fmt, cwd=project).stdout
        for fmt in ("text", "json", "junit", "github")
    }
    said = f"{NEW} (read under its former name {OLD})"
    data = json.loads(out["json"])
    assert [r["logged_as"] for r in data["results"] if r["metric"] == NEW] == [[OLD], [OLD]]
    assert all(r["logged_as"] == [] for r in data["results"] if r["metric"] != NEW)
    results = [line for line in out["text"].splitlines() if line.startswith(("PASS", "FAIL", "ERROR"))]
    mine = [line for line in results if f" {NEW}" in line]
    assert len(mine) == 2 and all(said in line for line in mine) and out["text"].count("former name") == 2
    cases = ET.fromstring(out["junit"]).iter("testcase")
    texts = {c.get("name"): "".join(c.itertext()) for c in cases if c.get("classname") == NEW}
    assert len(texts) == 2 and all(OLD in t for t in texts.values()), texts
    github = out["github"].splitlines()
    assert (
        f"::notice title={NEW} read under its former name::the run logged {NEW} as {OLD} (renamed since): read as {NEW}"
        in github
    )
    assert any(line.startswith(f"::error title={NEW} fail::{said}") for line in github), github
    # The HTML report: a line in the metric's part.
    report = tmp_path / "r.html"
    run_cli("judge", "--profile", "judged", str(tmp_path / "ev"), "--report", str(report), cwd=project)
    page = report.read_text("utf-8")
    part = page.split('<section class="metric" id="m-perf-step_time">')[1].split("</section>")[0]
    assert f'<p class="renamed">The run logged it under its former name <code>{OLD}</code>' in part
    assert (
        "former name" not in page.split('<section class="metric" id="m-perf-rollout_time">')[1].split("</section>")[0]
    )


def test_judge_with_an_exported_profile_reads_former_names(tmp_path: Path, project: Path) -> None:
    for fmt in ("json", "yaml"):
        exported = tmp_path / f"judged.{fmt}"
        assert (
            run_cli("export", "--profile", "judged", "--format", fmt, "-o", str(exported), cwd=project).returncode == 0
        )
        elsewhere = tmp_path / f"ci-{fmt}"
        elsewhere.mkdir()
        run_forms.write_events(old_run(), elsewhere / "ev")
        by_file = run_cli("judge", "--profile", str(exported), "ev", "--format", "json", cwd=elsewhere)
        assert by_file.returncode == 0, by_file.stdout
        data = json.loads(by_file.stdout)
        assert {r["metric"]: r["logged_as"] for r in data["results"]}[NEW] == [OLD]
        assert data == run_cli_json(project, elsewhere / "ev") | {"run": data["run"]}


# --- keys the catalog documents by a pattern, and the keys it does not document ---------------------


CONTROL_KEY = "rollout/\x1b[31mred\nFAKE 8 pass"


def unknown_run() -> run_forms.Series:
    """The clean run with keys the patterns cover, keys they do not, and a key with control characters."""
    run = clean_run()
    documented = ["rollout/zero_std/count_0", "rollout/zero_std/count_1.5", "rollout/zero_std/count_"]
    unknown = [f"rollout/new_stat_{i:02d}" for i in range(UNKNOWN_SHOWN + 2)]  # past the cap, with the two below
    unknown += ["rollout/zero_std/count_0/max", "rollout/zero_std/other", CONTROL_KEY]
    for key in documented + unknown:
        run[key] = {s: 1.0 for s in STEPS}
    return run


def test_a_key_a_pattern_covers_is_documented_not_unknown(tmp_path: Path, profile: ProfileExport) -> None:
    covered = ["eval/aime", "eval/gsm8k", "rollout/zero_std/count_0", "rollout/zero_std/count_1.5"]
    covered += ["rollout/zero_std/count_"]  # a hole may be empty
    # A hole stands for text inside one segment: a further segment, or another name, is not covered.
    not_covered = ["eval/aime/pass@4", "rollout/zero_std/count_0/max", "rollout/zero_std/other", "evaluation/aime"]
    records = [
        *run_forms.calls(clean_run()),
        *(("rollout/step", s, dict.fromkeys(covered + not_covered, 0.5)) for s in STEPS),
    ]
    folder = dashboard(tmp_path / "d", records)
    for keys in (judged_keys(profile), None):  # keys only named (unread) and keys kept, matched alike
        j = judge(profile, read_run([folder], STEP_KEYS, keys=keys))
        assert j.unknown_keys.listed == sorted(not_covered) and j.unknown_keys.count == len(not_covered)
        assert {n.metric for n in j.not_judged if n.reason == "not in the manual's catalog"} == set(not_covered)


def test_unknown_keys_are_named_up_to_the_cap_then_counted(tmp_path: Path, profile: ProfileExport) -> None:
    run_forms.write_dashboard(unknown_run(), tmp_path / "d")
    j = read(tmp_path / "d", profile)
    expected = sorted(
        k for k in unknown_run() if k not in clean_run() and "zero_std/count_" not in k or k.endswith("/max")
    )
    assert j.unknown_keys.count == len(expected) == UNKNOWN_SHOWN + 5
    assert j.unknown_keys.listed == expected[:UNKNOWN_SHOWN] and not j.unknown_keys.estimated
    named = [n for n in j.not_judged if n.reason == "not in the manual's catalog"]
    assert [n.metric for n in named] == expected[:UNKNOWN_SHOWN]
    # The keys past the cap are counted, never named after a key that is not theirs.
    assert not [n for n in j.not_judged if "more keys" in n.reason]
    assert j.summary.not_judged == len(j.not_judged) + 5
    assert "  and 5 more keys not in the manual's catalog" in render(j, "text").splitlines()


def test_unknown_keys_in_every_output_capped_and_escaped(tmp_path: Path, project: Path) -> None:
    run_forms.write_dashboard(unknown_run(), tmp_path / "d")
    expected = sorted(
        k for k in unknown_run() if k not in clean_run() and "zero_std/count_" not in k or k.endswith("/max")
    )
    shown, past = expected[:UNKNOWN_SHOWN], expected[UNKNOWN_SHOWN + 1 :]
    escaped = "rollout/\\x1b[31mred\\nFAKE 8 pass"
    assert CONTROL_KEY in shown and past  # the fixture: the control key named, keys past the cap only counted
    out = {}
    for fmt in ("text", "json", "junit", "github"):
        ran = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--format", fmt, cwd=project)
        assert ran.returncode == 0, (fmt, ran.stdout, ran.stderr)
        out[fmt] = ran.stdout
    report = tmp_path / "r.html"
    assert (
        run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--report", str(report), cwd=project).returncode
        == 0
    )
    out["html"] = report.read_text("utf-8")

    data = json.loads(out["json"])
    assert data["unknown_keys"] == {"count": len(expected), "estimated": False, "listed": shown}
    for fmt, text in out.items():
        assert "\x1b" not in text and "FAKE 8 pass\n" not in text and "\nFAKE" not in text, fmt
        plain = text if fmt != "json" else ""
        for key in shown:
            if key != CONTROL_KEY and plain:
                assert key in plain, (fmt, key)
        if plain:
            assert escaped in plain, fmt
            assert not any(key in plain for key in past), fmt  # counted, not named
            assert "5 more" in plain, fmt
    assert f"{len(expected)} key(s) not in the manual's catalog" in out["github"]
    assert out["github"].splitlines()[-2].startswith("::warning title=keys not in the manual::")
    junit = ET.fromstring(out["junit"])
    case = next(c for c in junit.iter("testcase") if c.get("name") == "keys not in the manual's catalog")
    assert case.find("failure") is None and case.find("error") is None  # a newer Miles fails no CI
    assert case.findtext("system-out").startswith(f"{len(expected)} key(s) not in the manual's catalog: ")
    assert '<tr id="unknown-keys"><th>Keys not in the manual</th><td>30: ' in out["html"]


def test_a_run_with_only_documented_keys_says_none(tmp_path: Path, project: Path) -> None:
    run = clean_run()
    run["rollout/zero_std/count_1"] = {s: 1.0 for s in STEPS}
    run_forms.write_dashboard(run, tmp_path / "d")
    data = run_cli_json(project, tmp_path / "d")
    assert data["unknown_keys"] == {"count": 0, "estimated": False, "listed": []}
    github = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--format", "github", cwd=project).stdout
    assert "keys not in the manual" not in github


def test_the_judging_page_states_the_cap_of_named_unknown_keys() -> None:
    page = " ".join((Path(__file__).parents[2] / "docs" / "judging.md").read_text("utf-8").split())
    assert f"the first {UNKNOWN_SHOWN} by name and the rest counted" in page
    assert "`logged_as`" in page and "two names of the key disagree" in page
