"""Which steps are judged and at what precision (judge/steps.py, the float32 rule of judge/rules.py):
float32 at the bounds, a live or unfinished step, a step the run never reached, a missing step 0, a
step past 2^63-1, nothing judged, and the steps no expectation covers (issues 29 and 32).

Every case writes its run with tests/run_forms.py in each form it applies to.
"""

from __future__ import annotations

import json
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import run_forms
from conftest import run_cli
from judge_fixture import CATALOG, judged_profile, judged_project, profile_head
from metrics_manual.api import judge
from metrics_manual.judge.judging import judged_keys
from metrics_manual.judge.steps import minus, spans
from metrics_manual.judge.verdict import Judgement, Result
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs.forms import BY_NAME
from metrics_manual.runs.read import read_run

N = 20
STEP_KEYS = run_forms.STEP_KEYS
FORMS = run_forms.FORMS
PROFILE = (
    profile_head(steps=N)
    + """\
  rollout/raw_reward:
    - {kind: band, min: 0.53, max: 0.87}
  rollout/response_lengths:
    - {kind: median, value: 400, steps: 10}
  train/grad_norm:
    - {kind: band, min: 0.1, max: 5}
    - {kind: band, min: 0.5, max: 2, window: {first: 2}}
  train/ppo_kl:
    - {kind: exact, value: 0, at: {step: 0}}
    - {kind: band, min: 0, max: 0.1}
  train/pg_clipfrac:
    - {kind: exact, value: 0.5, at: every_step}
  perf/step_time:
    - {kind: presence, at: every_step}
  perf/rollout_time:
    - {kind: band, min: 1, max: 100}
"""
)


def clean(n: int = N) -> run_forms.Series:
    return {
        "rollout/raw_reward": {s: 0.6 + 0.005 * s for s in range(n)},
        "rollout/response_lengths": {s: 395.0 + s % 5 for s in range(n)},
        "perf/step_time": {s: 30.0 + s for s in range(n)},
        "perf/rollout_time": {s: 19.5 + 0.1 * s for s in range(n)},
        "train/grad_norm": {s: 1.0 + 0.05 * s for s in range(n)},
        "train/ppo_kl": {s: 0.001 * s for s in range(n)},
        "train/pg_clipfrac": {s: 0.5 for s in range(n)},  # 0.5 is a float32: exactly 0.5 in every form
    }


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_project(tmp_path_factory.mktemp("steps") / "p", CATALOG, PROFILE)


@pytest.fixture(scope="module")
def profile(project: Path) -> ProfileExport:
    return judged_profile(project)


def need(form: str) -> None:
    if form == "tensorboard":
        pytest.importorskip("tensorboard", reason="pip install 'metrics-manual[tensorboard]'")


def written(form: str, run: run_forms.Series, folder: Path) -> list[Path]:
    need(form)
    run_forms.write(form, run, folder)
    return [folder]


def judged(paths: list[Path], profile: ProfileExport, **kw: object) -> Judgement:
    return judge(profile, read_run(paths, STEP_KEYS, keys=judged_keys(profile)), **kw)  # type: ignore[arg-type]


def verdicts(j: Judgement) -> dict[tuple[str, int], str]:
    return {(r.metric, r.expectation): r.verdict for r in j.results}


def bad(j: Judgement) -> dict[tuple[str, int], str]:
    return {k: v for k, v in verdicts(j).items() if v != "pass"}


def result(j: Judgement, metric: str, i: int = 0) -> Result:
    return next(r for r in j.results if (r.metric, r.expectation) == (metric, i))


def skipped(j: Judgement) -> dict[tuple[str, int | None], str]:
    return {(n.metric, n.expectation): n.reason for n in j.not_judged if not n.no_range}


# --- 5. float32 at the bounds ------------------------------------------------------------------


def _at_bounds() -> run_forms.Series:
    run = clean()
    run["rollout/raw_reward"][3] = 0.53  # the band's min: 0.52999997 as float32
    run["rollout/raw_reward"][4] = 0.87  # its max: 0.87000000477 as float32
    return run


def test_f32_rounds_as_a_float32_stores() -> None:
    from metrics_manual.judge.rules import f32

    assert f32(0.53) == struct.unpack("f", struct.pack("f", 0.53))[0] < 0.53
    assert f32(0.87) > 0.87 and f32(0.5) == 0.5 and f32(1e300) == 1e300  # past float32's range: as it is


@pytest.mark.parametrize("form", FORMS)
def test_a_value_at_a_bound_passes_in_every_form(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    j = judged(written(form, _at_bounds(), tmp_path / form), profile)
    reward = result(j, "rollout/raw_reward")
    assert reward.verdict == "pass", reward.reason
    if form == "tensorboard":  # the result says the tolerance it used, and the values it decided
        assert reward.precision == "float32"
        assert "2 values equal to a bound at float32 precision (the run stores float32" in reward.reason
        assert "step 3: 0.52999997" in reward.reason and "step 4: 0.87000000" in reward.reason
        assert result(j, "perf/step_time").precision is None  # presence compares no value
        # A value float32 holds exactly needs no rounding, and the result names none.
        clip = result(j, "train/pg_clipfrac")
        assert (clip.verdict, clip.precision, clip.reason) == ("pass", "float32", "0.5 at 20 of 20 steps")
    else:
        assert reward.precision is None and "float32" not in reward.reason
    assert j.exit_code == 0, bad(j)


@pytest.mark.parametrize("form", FORMS)
def test_an_exact_value_passes_in_every_form(form: str, tmp_path: Path) -> None:
    profile_text = profile_head(steps=N) + "  train/ppo_kl:\n    - {kind: exact, value: 0.1, at: every_step}\n"
    profile = judged_profile(judged_project(tmp_path / "p", CATALOG, profile_text))
    run = {"train/ppo_kl": dict.fromkeys(range(N), 0.1)}  # 0.100000001 as float32
    r = result(judged(written(form, run, tmp_path / form), profile), "train/ppo_kl")
    assert r.verdict == "pass", r.reason
    assert ("20 values equal to 0.1 at float32 precision" in r.reason) == (form == "tensorboard")


def test_float32_rounding_is_allowed_only_for_float32_values(tmp_path: Path, profile: ProfileExport) -> None:
    # A float64 value below the bound, in a form that stores float64, is outside.
    run = clean()
    run["rollout/raw_reward"][3] = 0.5299999
    j = judged(written("events", run, tmp_path / "ev"), profile)
    assert bad(j) == {("rollout/raw_reward", 0): "fail"}
    # One float32 step below the bound's float32 is outside too: only the rounding is allowed.
    below = struct.unpack("f", struct.pack("I", struct.unpack("I", struct.pack("f", 0.53))[0] - 1))[0]
    run["rollout/raw_reward"][3] = below
    j = judged(written("tensorboard", run, tmp_path / "tb"), profile)
    assert bad(j) == {("rollout/raw_reward", 0): "fail"}
    assert "outside at 1 of 20 steps: step 3: 0.5299999" in result(j, "rollout/raw_reward").reason


def test_a_median_at_an_end_of_its_tolerance_passes_in_float32(tmp_path: Path) -> None:
    profile_text = profile_head(steps=N) + (
        "  rollout/raw_reward:\n    - {kind: median, value: 0.53, tolerance: 0.1, steps: 20}\n"
    )
    project = judged_project(tmp_path / "p", CATALOG, profile_text)
    profile = judged_profile(project)
    edge = 0.53 + 0.1 * 0.53  # the end of the tolerance, as judge computes it
    assert struct.unpack("f", struct.pack("f", edge))[0] > edge  # so the float32 value read back lies past it
    run = {"rollout/raw_reward": dict.fromkeys(range(N), edge)}
    for form in ("events", "tensorboard"):
        r = result(judged(written(form, run, tmp_path / form), profile), "rollout/raw_reward")
        assert r.verdict == "pass", (form, r.reason)
        assert ("at an end of it at float32 precision" in r.reason) == (form == "tensorboard")


def test_the_run_tells_which_keys_are_float32(tmp_path: Path, profile: ProfileExport) -> None:
    need("tensorboard")
    run_forms.write("tensorboard", clean(), tmp_path / "tb")
    run_forms.write("events", clean(), tmp_path / "ev")
    assert read_run([tmp_path / "tb"], STEP_KEYS).float32 >= set(clean())
    assert read_run([tmp_path / "ev"], STEP_KEYS).float32 == set()


# --- 6. a live step --------------------------------------------------------------------------------


# Miles rewrites a CI history whole: a run between two log() calls is one of the other forms.
LIVE_FORMS = tuple(f for f in run_forms.FORMS if BY_NAME[f].grows != "rewritten")


def _between_two_log_calls(step: int = N - 1) -> run_forms.Series:
    """The run written up to the perf record of `step`: its rollout record is written, the perf one not yet."""
    run = clean()
    for key in ("perf/step_time", "perf/rollout_time"):
        del run[key][step]
    return run


@pytest.mark.parametrize("form", LIVE_FORMS)
def test_a_live_step_is_not_judged_until_it_is_written(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    paths = written(form, _between_two_log_calls(), tmp_path / form)
    # The run is over (the default, as in CI after the run): a value missing at its last step is an error.
    over = judged(paths, profile)
    assert bad(over) == {("perf/step_time", 0): "fail", ("perf/rollout_time", 0): "error"}
    assert over.exit_code == 1 and over.run.live is False and over.run.unfinished_steps == {}
    # Judged live: the last step may still be being written; nothing missing there, nothing failed.
    live = judged(paths, profile, live=True)
    assert bad(live) == {} and live.exit_code == 0
    assert live.run.live and live.run.unfinished_steps == {"rollout/step": N - 1, "train/step": N - 1}
    why = f"not judged at step {N - 1}: the step may still be being written (the run is judged live, --live)"
    assert skipped(live) == {("perf/step_time", 0): why, ("perf/rollout_time", 0): why}
    assert result(live, "perf/step_time").reason == f"logged at {N - 1} of {N} steps"
    assert result(live, "rollout/raw_reward").steps_judged == N  # its value at the last step is there: judged


@pytest.mark.parametrize("form", LIVE_FORMS)
def test_a_live_run_still_judges_what_its_last_step_wrote_and_every_earlier_step(
    form: str, tmp_path: Path, profile: ProfileExport
) -> None:
    run = _between_two_log_calls(N - 1)
    del run["perf/rollout_time"][10]  # a later step of its step key exists: missing, whatever the mode
    run["train/grad_norm"][N - 1] = 9.0  # written at the last step: judged there
    j = judged(written(form, run, tmp_path / form), profile, live=True)
    assert bad(j) == {("perf/rollout_time", 0): "error", ("train/grad_norm", 0): "fail"}
    assert "missing at 1 step it covers: step 10" in result(j, "perf/rollout_time").reason


def test_the_live_switch_and_its_words_in_every_output(tmp_path: Path, project: Path) -> None:
    run_forms.write_dashboard(_between_two_log_calls(), tmp_path / "d")
    text = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--live", cwd=project)
    assert text.returncode == 0, text.stdout
    lines = text.stdout.splitlines()
    assert (
        f"unfinished: rollout/step {N - 1} (judged live, --live: the run may still be writing it; "
        "a value missing there is not judged)" in lines
    )
    assert (
        f"  perf/step_time (expectation 0): not judged at step {N - 1}: the step may still be being written "
        "(the run is judged live, --live)" in lines
    )
    over = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), cwd=project)
    assert over.returncode == 1 and "unfinished" not in over.stdout
    junit = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--live", "--format", "junit", cwd=project)
    cases = ET.fromstring(junit.stdout).iter("testcase")
    skips = [c.find("skipped").get("message") for c in cases if c.find("skipped") is not None]
    assert len(skips) == 2 and all("the step may still be being written" in s for s in skips)
    github = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--live", "--format", "github", cwd=project)
    assert "::notice title=perf/step_time not judged::perf/step_time (expectation 0): not judged at step" in (
        github.stdout
    )


def test_a_cut_last_line_names_what_it_leaves_unjudged(tmp_path: Path, profile: ProfileExport) -> None:
    (f,) = run_forms.write_dashboard(_between_two_log_calls(), tmp_path / "d")
    with f.open("a", encoding="utf-8") as fh:
        fh.write('{"ts": 1.0, "step_key": "rollout/step", "step": 19, "metrics": {"perf/step_ti')
    j = judged([tmp_path / "d"], profile)
    assert bad(j) == {} and j.exit_code == 0  # a warning: exit 0
    assert skipped(j)[("perf/step_time", 0)] == (
        f"not judged at step {N - 1}: the step may still be being written (a file's last line or record is cut)"
    )


# --- 7. a step the run never reached ---------------------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_a_step_the_run_never_reached_is_not_judged(form: str, tmp_path: Path) -> None:
    profile_text = PROFILE.replace("exact, value: 0, at: {step: 0}", "exact, value: 0.047, at: {step: 47}")
    profile_text = profile_text.replace(f"steps: {N}}}", "steps: 48}", 1)
    project = judged_project(tmp_path / "p", CATALOG, profile_text)
    profile = judged_profile(project)
    run = clean(30)
    run["train/ppo_kl"] = {s: 0.001 * s for s in range(30)}
    j = judged(written(form, run, tmp_path / form), profile)
    assert ("train/ppo_kl", 0) not in verdicts(j)
    assert (
        skipped(j)[("train/ppo_kl", 0)]
        == "not judged at step 47: the run has not reached it (its last train/step is 29)"
    )
    assert j.exit_code == 0, bad(j)
    # A run that reached it is judged there.
    j = judged(written(form, clean(48), tmp_path / f"{form}-48"), profile)
    assert verdicts(j)[("train/ppo_kl", 0)] == "pass", result(j, "train/ppo_kl").reason


# --- messages: a missing step 0 ----------------------------------------------------------------------


def _without_step(run: run_forms.Series, step_key: str, step: int) -> run_forms.Series:
    for key in run:
        if STEP_KEYS[key.split("/")[0]] == step_key:
            run[key].pop(step, None)
    return run


@pytest.mark.parametrize("form", FORMS)
def test_a_missing_step_0_is_named_not_replaced_by_later_steps(
    form: str, tmp_path: Path, profile: ProfileExport
) -> None:
    run = _without_step(clean(), "train/step", 0)
    run["train/grad_norm"][2] = 3.0  # outside the window's band: it must not move there
    j = judged(written(form, run, tmp_path / form), profile)
    window = result(j, "train/grad_norm", 1)
    assert window.verdict == "error" and window.steps_missing == 1
    assert window.reason.startswith(
        "the run's first steps are missing: step 0 (the first train/step it logged is 1; Miles counts steps from 0"
    ), window.reason
    assert window.steps_judged == 1 and "step 2" not in window.reason
    assert [(p.step, p.value) for p in window.failing_steps] == [(0, None)]
    at0 = result(j, "train/ppo_kl", 0)
    assert at0.verdict == "error" and at0.reason.startswith("the run's first steps are missing: step 0"), at0.reason
    assert result(j, "train/grad_norm", 0).verdict == "pass"  # every step it has: a run judged on the steps it has
    # Excluding the steps the run lacks is the way to judge it anyway: the window then holds at step 1.
    j = judged(written(form, run, tmp_path / form), profile, exclude_steps=[0])
    assert verdicts(j)[("train/grad_norm", 1)] == "pass" and ("train/ppo_kl", 0) not in verdicts(j)


def test_a_run_resumed_from_a_checkpoint_names_the_steps_before_it(tmp_path: Path, profile: ProfileExport) -> None:
    run = {k: {s: v for s, v in series.items() if s >= 12} for k, series in clean().items()}
    j = judged(written("dashboard", run, tmp_path / "d"), profile)
    window = result(j, "train/grad_norm", 1)
    assert window.reason.startswith(
        "the run's first steps are missing: steps 0-1 (the first train/step it logged is 12"
    )
    assert window.steps_judged == 0 and window.steps_missing == 2


# --- messages: a step past 2^63-1 in an exported profile ------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_step_past_2_63_in_an_exported_profile_is_a_finding_at_its_place(
    fmt: str, tmp_path: Path, project: Path
) -> None:
    dest = tmp_path / f"judged.{fmt}"
    assert run_cli("export", "--profile", "judged", "--format", fmt, "-o", str(dest), cwd=project).returncode == 0
    run_forms.write_dashboard(clean(), tmp_path / "d")
    text = dest.read_text("utf-8")
    for step, code in ((2**63 - 1, 0), (2**63, 2), (10**30, 2)):
        spelled = f'"step": {step}' if fmt == "json" else f"step: {step}"
        changed = text.replace('"step": 0' if fmt == "json" else "step: 0", spelled, 1)
        assert changed != text
        dest.write_text(changed, "utf-8")
        ran = run_cli("judge", "--profile", str(dest), str(tmp_path / "d"), cwd=tmp_path)
        assert ran.returncode == (code or 0), ran.stderr
        if code:
            line = changed[: changed.index(spelled)].count("\n") + 1
            col = changed.index(spelled) - changed.rfind("\n", 0, changed.index(spelled))
            col += len(spelled) - len(str(step))  # the finding is at the value
            assert ran.stdout == "" and "Traceback" not in ran.stderr
            assert ran.stderr.startswith(
                f"{dest}:{line}:{col}: error: step {step} is past the last step a run can log: a step is from 0 to "
                "2^63-1 (at metrics["
            ), ran.stderr


# --- messages: nothing judged is no pass ---------------------------------------------------------------


def test_excluding_every_step_is_no_pass(tmp_path: Path, project: Path) -> None:
    run_forms.write_dashboard(clean(), tmp_path / "d")
    for fmt in ("text", "json", "junit", "github"):
        ran = run_cli(
            "judge",
            "--profile",
            "judged",
            str(tmp_path / "d"),
            "--exclude-steps",
            "0-10000000",
            "--format",
            fmt,
            cwd=project,
        )
        assert ran.returncode == 1, (fmt, ran.stdout)
        assert "--exclude-steps leaves no step that an expectation covers" in ran.stdout, fmt
    data = json.loads(
        run_cli(
            "judge",
            "--profile",
            "judged",
            str(tmp_path / "d"),
            "--exclude-steps",
            "0-10000000",
            "--format",
            "json",
            cwd=project,
        ).stdout
    )
    assert data["summary"]["pass"] == 0 and data["summary"]["nothing_judged"]


def test_a_run_where_nothing_is_judged_is_no_pass(tmp_path: Path) -> None:
    # The CI history records only Miles' whitelisted keys: a profile that ranges none of them judges nothing.
    profile_text = profile_head(steps=N) + "  perf/step_time:\n    - {kind: presence, at: every_step}\n"
    project = judged_project(tmp_path / "p", CATALOG, profile_text)
    from metrics_manual.runs.ci_history import TARGET_METRIC_KEYS

    whitelisted = {k: v for k, v in clean().items() if k in TARGET_METRIC_KEYS}  # as Miles records it
    run_forms.write_ci_history(whitelisted, tmp_path / "ci")
    ran = run_cli("judge", "--profile", "judged", str(tmp_path / "ci"), cwd=project)
    assert ran.returncode == 1, ran.stdout
    assert ran.stdout.splitlines()[-1].endswith(
        "nothing was judged: no expectation of the profile could be judged on this run (not judged lists why); "
        "this is no pass"
    )
    report = tmp_path / "r.html"
    run_cli("judge", "--profile", "judged", str(tmp_path / "ci"), "--report", str(report), cwd=project)
    assert "nothing judged</span>" in report.read_text("utf-8")


# --- issue 32: steps no expectation covers --------------------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_steps_no_expectation_covers_are_named(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    j = judged(written(form, clean(), tmp_path / form), profile, exclude_steps=[15])
    uncovered = {u.metric: ([(s.first, s.last) for s in u.steps], u.count, u.of) for u in j.uncovered}
    assert uncovered == {"rollout/response_lengths": ([(10, 14), (16, 19)], 9, 19)}  # its median covers steps 0-9
    assert j.summary.uncovered == len(uncovered) and j.exit_code == 0  # a word, no fail


def test_steps_no_expectation_covers_in_every_output(tmp_path: Path, project: Path) -> None:
    run_forms.write_dashboard(clean(30), tmp_path / "d")
    out = {
        fmt: run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--format", fmt, cwd=project).stdout
        for fmt in ("text", "json", "junit", "github")
    }
    words = "rollout/response_lengths: steps 10-29 are covered by no expectation (20 of 30 steps)"
    assert f"  {words}" in out["text"].splitlines()
    assert out["text"].splitlines()[-1].endswith("1 metric(s) with steps no expectation covers")
    assert json.loads(out["json"])["uncovered"] == [
        {"metric": "rollout/response_lengths", "steps": [{"first": 10, "last": 29}], "count": 20, "of": 30}
    ]
    case = next(
        c for c in ET.fromstring(out["junit"]).iter("testcase") if c.get("name") == "steps no expectation covers"
    )
    assert case.findtext("system-out") == words and case.find("failure") is None
    assert f"::warning title=rollout/response_lengths%3A steps no expectation covers::{words}" in out["github"]
    report = tmp_path / "r.html"
    run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--report", str(report), cwd=project)
    assert f"<li><code>rollout/response_lengths</code>: {words.split(': ', 1)[1]}</li>" in report.read_text("utf-8")


def test_the_judging_page_states_the_step_rules_in_the_codes_words() -> None:
    from metrics_manual.judge import judging, rules, steps

    def words(text: str) -> str:
        return " ".join(text.replace("`", "").split())

    page = words((Path(__file__).parents[2] / "docs" / "judging.md").read_text("utf-8"))
    bullets = [
        bullet
        for module in (steps, rules, judging)
        for bullet in (module.__doc__ or "")
        .split("(docs/judging.md states them in these words):")[1]
        .strip()
        .split("\n- ")
    ]
    assert len(bullets) == 7
    for bullet in bullets:  # one list on the page: each bullet ends in ";" or "."
        assert words(bullet.lstrip("- ")).rstrip(".;") in page, bullet


def test_a_run_starting_far_out_lists_its_missing_first_steps_up_to_a_cap(tmp_path: Path) -> None:
    big = 10**6
    profile_text = (
        profile_head(steps=big) + f"  train/grad_norm:\n    - {{kind: band, min: 0.1, max: 5, steps: {big}}}\n"
    )
    profile = judged_profile(judged_project(tmp_path / "p", CATALOG, profile_text))
    run = {"train/grad_norm": {big - 5: 1.0, big - 4: 1.0}}  # two steps in a row: counted step by step
    r = result(judged(written("dashboard", run, tmp_path / "d"), profile), "train/grad_norm")
    assert r.verdict == "error" and r.steps_missing == 10_000  # filled in up to the gaps' cap, as a gap is
    assert r.reason.startswith("the run's first steps are missing: steps 0-9999 and 989,995 more (the first")


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(0, 60)), st.sets(st.integers(0, 60)))
def test_the_steps_left_uncovered_are_the_plain_difference(steps: set[int], covered: set[int]) -> None:
    left = minus(spans(sorted(steps)), spans(sorted(covered)))
    assert [s for a, b in left for s in range(a, b + 1)] == sorted(steps - covered)
    assert all(b + 1 < c for (_, b), (c, _) in zip(left, left[1:]))  # as few spans as can be
