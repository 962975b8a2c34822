"""`metrics-manual judge`: one run, written in every form Miles writes, held against a fixture profile."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

import run_forms
from conftest import REPO, run_cli, write_project
from judge_fixture import CATALOG, PROFILE, STEPS, clean_run, judged_profile, judged_project
from metrics_manual.api import judge
from metrics_manual.judge.verdict import Judgement
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs.forms import FORMS
from metrics_manual.runs.read import RunInputError, detect, read_run


def _set(key: str, step: int, value: float):
    def plant(run: run_forms.Series) -> None:
        run[key][step] = value

    return plant


def _drop(key: str, step: int | None = None):
    def plant(run: run_forms.Series) -> None:
        if step is None:
            del run[key]
        else:
            del run[key][step]

    return plant


def _scale(key: str, factor: float):
    def plant(run: run_forms.Series) -> None:
        run[key] = {s: v * factor for s, v in run[key].items()}

    return plant


# fault -> (planting, the one verdict it must give, the step to exclude to make it pass or None)
FAULTS = {
    "band violated at one step": (_set("train/grad_norm", 7, 7.2), {("train/grad_norm", 0): "fail"}, 7),
    "non-zero at step 0": (_set("train/ppo_kl", 0, 0.02), {("train/ppo_kl", 0): "fail"}, None),
    "a NaN": (_set("rollout/raw_reward", 4, math.nan), {("rollout/raw_reward", 0): "error"}, 4),
    "a missing metric": (_drop("train/pg_clipfrac"), {("train/pg_clipfrac", 0): "error"}, None),
    "a missing step for a presence": (_drop("perf/step_time", 5), {("perf/step_time", 0): "fail"}, 5),
    "a median outside tolerance": (
        _scale("rollout/response_lengths", 1.5),
        {("rollout/response_lengths", 0): "fail"},
        None,
    ),
    "a window violated at step 1": (_set("train/grad_norm", 1, 2.5), {("train/grad_norm", 1): "fail"}, 1),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_project(tmp_path_factory.mktemp("judge") / "p", CATALOG, PROFILE)


@pytest.fixture(scope="module")
def profile(project: Path) -> ProfileExport:
    return judged_profile(project)


def verdicts(j: Judgement) -> dict[tuple[str, int], str]:
    return {(r.metric, r.expectation): r.verdict for r in j.results}


def bad(j: Judgement) -> dict[tuple[str, int], str]:
    return {k: v for k, v in verdicts(j).items() if v != "pass"}


def judged(form: str, run: run_forms.Series, tmp: Path, profile: ProfileExport, **kw) -> Judgement:
    if form == "tensorboard":
        pytest.importorskip("tensorboard", reason="pip install 'metrics-manual[tensorboard]'")
    run_forms.write(form, run, tmp / form)
    read = read_run([tmp / form], {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"})
    assert read.formats == [form]
    return judge(profile, read, **kw)


@pytest.mark.parametrize("form", run_forms.FORMS)
def test_a_clean_run_passes_in_every_form(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    j = judged(form, clean_run(), tmp_path, profile)
    assert bad(j) == {}
    assert len(j.results) == 8 and j.exit_code == 0 and j.problems == []
    assert [n.metric for n in j.not_judged] == ["train/entropy_loss"]
    assert j.summary.not_judged == 1 and j.summary.passed == 8


@pytest.mark.parametrize("form", run_forms.FORMS)
@pytest.mark.parametrize("fault", FAULTS)
def test_each_planted_fault_gives_exactly_its_verdict(
    fault: str, form: str, tmp_path: Path, profile: ProfileExport
) -> None:
    plant, expected, step = FAULTS[fault]
    run = clean_run()
    plant(run)
    j = judged(form, run, tmp_path, profile)
    if form == "ci-history" and fault == "a missing metric":
        # The CI history records only Miles' whitelist: a metric outside it cannot be in the form.
        assert bad(j) == {} and j.exit_code == 0
        assert any(n.metric == "train/pg_clipfrac" and "TARGET_METRIC_KEYS" in n.reason for n in j.not_judged)
        return
    assert bad(j) == expected
    assert j.exit_code == 1
    if step is not None:
        ((metric, i),) = expected
        result = next(r for r in j.results if (r.metric, r.expectation) == (metric, i))
        assert [p.step for p in result.failing_steps] == [step]
        # Excluding the faulty step turns that fail into a pass.
        assert (
            bad(
                judge(
                    profile,
                    read_run(
                        [tmp_path / form], {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"}
                    ),
                    exclude_steps=[step],
                )
            )
            == {}
        )


def test_the_same_run_gives_the_same_verdicts_in_all_five_forms(tmp_path: Path, profile: ProfileExport) -> None:
    pytest.importorskip("tensorboard")
    run = clean_run()
    for plant, _, _ in FAULTS.values():
        if plant.__qualname__.startswith("_set"):
            plant(run)
    seen = {
        form: (
            verdicts(j := judged(form, run, tmp_path, profile)),
            [(r.metric, [p.step for p in r.failing_steps]) for r in j.results],
        )
        for form in run_forms.FORMS
    }
    assert len({json.dumps(sorted(v[0].items())) + json.dumps(v[1]) for v in seen.values()}) == 1, seen
    assert set(seen["events"][0].values()) == {"pass", "fail", "error"}


def test_a_failing_band_reports_each_step_and_value(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    run["train/grad_norm"][3] = 6.5
    run["train/grad_norm"][8] = 0.05
    j = judged("events", run, tmp_path, profile)
    r = next(r for r in j.results if r.metric == "train/grad_norm" and r.expectation == 0)
    assert [(p.step, p.value) for p in r.failing_steps] == [(3, 6.5), (8, 0.05)]
    assert "max 6.5 at step 3" in r.reason and "2 of 10 steps" in r.reason
    assert r.expected == "0.1 to 5 per step" and r.observed.max == 6.5 and r.observed.count == 10


def test_a_median_states_its_tolerance(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    run["perf/rollout_time"] = {s: 21.5 for s in STEPS}  # 7.5% off: outside the profile's 5%, inside --rtol 0.1
    j = judged("events", run, tmp_path, profile, rtol=0.5)
    by = {(r.metric, r.expectation): r for r in j.results}
    own, default = by[("perf/rollout_time", 0)], by[("rollout/response_lengths", 0)]
    assert (own.verdict, own.tolerance, own.tolerance_from) == ("fail", 0.05, "profile")
    assert "tolerance 5% (from the profile)" in own.reason and "within 5%" in own.expected
    assert (default.verdict, default.tolerance, default.tolerance_from) == ("pass", 0.5, "rtol")
    assert "tolerance 50% (--rtol)" in default.reason


def test_a_short_run_is_judged_on_the_steps_it_has(tmp_path: Path, profile: ProfileExport) -> None:
    run = {k: {s: v for s, v in series.items() if s < 6} for k, series in clean_run().items()}
    j = judged("dashboard", run, tmp_path, profile)
    r = next(r for r in j.results if r.metric == "rollout/raw_reward")
    assert (r.verdict, r.steps_judged, r.steps_expected) == ("pass", 6, 10)
    assert "6 of 10 steps" in r.reason
    assert j.run.steps["rollout/step"].count == 6


def _steps() -> dict[str, str]:
    return {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"}


@pytest.mark.parametrize("form", ["events", "dashboard", "ci-history"])
def test_a_cut_last_line_is_a_warning(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    files = run_forms.write(form, clean_run(), tmp_path / form)
    with files[0].open("a", encoding="utf-8") as fh:
        fh.write('{"timestamp":"2026-11-30T02:00:00Z","source":{"component":"main"},"type":"metric","metr')
    j = judge(profile, read_run(files, _steps()))
    assert [(p.path, p.severity) for p in j.problems] == [(str(files[0]), "warning")]
    assert "cut" in j.problems[0].message and bad(j) == {} and j.exit_code == 0


@pytest.mark.parametrize("form", ["events", "dashboard", "ci-history"])
def test_a_corrupt_line_is_an_error_with_its_line(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    files = run_forms.write(form, clean_run(), tmp_path / form)
    lines = files[0].read_text("utf-8").splitlines(keepends=True)
    lines.insert(2, '{"type":"metric","metrics": {"train/step": 4,, }\n')
    files[0].write_text("".join(lines), "utf-8")
    j = judge(profile, read_run(files, _steps()))
    assert [(p.path, p.line, p.severity) for p in j.problems] == [(str(files[0]), 3, "error")]
    # Issue 15: a line the reader cannot use is bad input (exit 2), not a run that failed (exit 1).
    assert j.summary.problems == 1 and j.exit_code == 2


@pytest.mark.parametrize("form", ["events", "ci-history", "wandb-csv", "tensorboard"])
def test_files_read_as_the_wrong_form_are_an_error_not_a_run_without_metrics(tmp_path: Path, form: str) -> None:
    if form == "tensorboard":
        pytest.importorskip("tensorboard")
    files = run_forms.write_dashboard(clean_run(), tmp_path / "d")
    run = read_run(files, _steps(), form)
    assert [p for p in run.problems if p.severity == "error"], form
    if form == "events":  # its reader skips lines of other events silently: the run as a whole is the finding
        assert [(p.code.id, p.severity) for p in run.problems] == [("MM503", "error")]
        assert "no metric was read from 1 file read as events" in run.problems[0].message


def test_detection_reads_the_content_and_input_format_overrides_it(tmp_path: Path) -> None:
    for form in (f.name for f in FORMS if f.sample):  # the forms told by their content, not their name
        for f in run_forms.write(form, clean_run(), tmp_path / form):
            assert detect(f) == form
            renamed = f.with_name("log.txt")
            f.rename(renamed)
            assert detect(renamed) == form
    odd = tmp_path / "odd.log"
    run_forms.write_dashboard(clean_run(), tmp_path / "d2")[0].rename(odd)
    assert read_run([odd], _steps(), "dashboard").formats == ["dashboard"]
    (tmp_path / "notes.txt").write_text("hello\n", "utf-8")
    with pytest.raises(RunInputError) as err:
        read_run([tmp_path / "notes.txt"], _steps())
    assert str(tmp_path / "notes.txt") + ":1:1: error: not a metrics file" in str(err.value)


def test_one_run_spans_several_files_and_folders(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    rollout = {k: v for k, v in run.items() if not k.startswith("train/")}
    train = {k: v for k, v in run.items() if k.startswith("train/")}
    a = run_forms.write_events(rollout, tmp_path / "a")
    b = run_forms.write_dashboard(train, tmp_path / "b")
    j = judge(profile, read_run([*a, tmp_path / "b"], _steps()))
    assert bad(j) == {} and j.run.formats == ["events", "dashboard"] and len(j.results) == 8
    assert b


# --- outputs -------------------------------------------------------------------------


@pytest.fixture
def faulty(tmp_path: Path) -> Path:
    run = clean_run()
    run["train/grad_norm"][7] = 7.2
    run["rollout/raw_reward"][4] = math.nan
    run_forms.write_events(run, tmp_path / "events")
    return tmp_path / "events"


def test_json_validates_against_its_published_schema(project: Path, faulty: Path) -> None:
    result = run_cli("judge", "--profile", "judged", str(faulty), "--format", "json", cwd=project)
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    schema = json.loads((REPO / "docs/export/verdict.schema.json").read_text("utf-8"))
    jsonschema.validate(data, schema)
    assert data["summary"] == {
        "pass": 6,
        "fail": 1,
        "error": 1,
        "not_judged": 1,
        "uncovered": 1,
        "nothing_judged": None,
        "problems": 0,
    }
    # train/ppo_kl's one expectation holds at step 0: steps 1-9 are judged by nothing, and it says so.
    assert data["uncovered"] == [{"metric": "train/ppo_kl", "steps": [{"first": 1, "last": 9}], "count": 9, "of": 10}]
    failing = [r for r in data["results"] if r["verdict"] != "pass"]
    assert [(r["metric"], r["expectation"], r["failing_steps"]) for r in failing] == [
        ("rollout/raw_reward", 0, [{"step": 4, "value": "NaN"}]),
        ("train/grad_norm", 0, [{"step": 7, "value": 7.2}]),
    ]
    assert set(data) >= {"schema_version", "profile", "run", "results", "summary"}
    assert set(data["run"]) >= {"paths", "formats", "steps"}
    data["results"][0]["verdict"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


def test_text_names_verdict_phrase_observation_and_link(project: Path, faulty: Path) -> None:
    result = run_cli("judge", "--profile", "judged", str(faulty), "--exclude-steps", "4", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    fail = next(line for line in lines if line.startswith("FAIL"))
    assert fail.startswith("FAIL  train/grad_norm: expected 0.1 to 5 per step; max 7.2 at step 7")
    assert fail.endswith("  https://manual.example/reference/metrics/training/#m-train-grad_norm")
    assert "excluded steps: 4" in lines
    assert any(
        line.startswith("PASS  train/grad_norm: expected 0.5 to 2 per step in the first 2 steps, with plain sampling")
        for line in lines
    )
    assert "  train/ppo_kl: steps 1-3, 5-9 are covered by no expectation (8 of 9 steps)" in lines
    assert lines[-1] == "7 pass, 1 fail, 0 error, 1 not judged, 1 metric(s) with steps no expectation covers"


def test_exit_codes(project: Path, faulty: Path, tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    run_forms.write_dashboard(clean_run(), clean)
    assert run_cli("judge", "--profile", "judged", str(clean), cwd=project).returncode == 0
    assert run_cli("judge", "--profile", "judged", str(faulty), cwd=project).returncode == 1
    for args, message in [
        (["--profile", "nope", str(clean)], "unknown profile 'nope'"),
        (["--profile", "judged", str(tmp_path / "missing.jsonl")], "missing.jsonl:1:1: error: no such file or folder"),
        (["--profile", "judged", str(clean), "--exclude-steps", "3,x"], "--exclude-steps: 'x' is not a step"),
        (["--profile", "judged", str(clean), "--rtol", "0"], "--rtol must be a number above 0"),
    ]:
        result = run_cli("judge", *args, cwd=project)
        assert (result.returncode, result.stdout) == (2, ""), result
        assert message in result.stderr and "Traceback" not in result.stderr


def test_junit_is_well_formed_junit(project: Path, faulty: Path) -> None:
    result = run_cli("judge", "--profile", "judged", str(faulty), "--format", "junit", cwd=project)
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    cases = suites[0].findall("testcase")
    # The common JUnit schema: counts agree with the cases, each case has a name and a classname,
    # and at most one failure / error / skipped child with a message.
    assert (
        int(suites[0].get("tests")) == len(cases) == 11
    )  # 8 expectations, the keys not in the catalog, the steps no expectation covers, reading the files
    assert int(suites[0].get("failures")) == sum(c.find("failure") is not None for c in cases) == 1
    assert int(suites[0].get("errors")) == sum(c.find("error") is not None for c in cases) == 1
    for c in cases:
        assert c.get("name") and c.get("classname")
        outcomes = [el for el in c if el.tag in ("failure", "error", "skipped")]
        assert len(outcomes) <= 1 and all(el.get("message") for el in outcomes)
    failed = next(c for c in cases if c.find("failure") is not None)
    assert failed.get("classname") == "train/grad_norm" and "step 7" in failed.find("failure").get("message")
    uncovered = next(c for c in cases if c.get("name") == "steps no expectation covers")
    assert uncovered.find("system-out").text == "train/ppo_kl: steps 1-9 are covered by no expectation (9 of 10 steps)"


def test_github_annotations(project: Path, faulty: Path) -> None:
    result = run_cli("judge", "--profile", "judged", str(faulty), "--format", "github", cwd=project)
    lines = result.stdout.splitlines()
    assert [line.split("::")[1] for line in lines] == [
        "error title=rollout/raw_reward error",
        "error title=train/grad_norm fail",
        "warning title=train/ppo_kl%3A steps no expectation covers",
        "notice title=metrics-manual judge",
    ]
    assert lines[2].endswith("::train/ppo_kl: steps 1-9 are covered by no expectation (9 of 10 steps)")


def test_text_from_the_source_stays_inert_in_junit(tmp_path: Path) -> None:
    profile = PROFILE.replace("condition: with plain sampling", 'condition: "</failure><x a=\\"&amp;\\"> ]]>"')
    project = write_project(tmp_path / "p", CATALOG, {"judged": profile})
    run_forms.write_events(clean_run(), tmp_path / "ev")
    out = run_cli("judge", "--profile", "judged", str(tmp_path / "ev"), "--format", "junit", cwd=project).stdout
    names = [c.get("name") for c in ET.fromstring(out).iter("testcase")]
    assert any('</failure><x a="&amp;"> ]]>' in n for n in names)


def test_the_api_judges_a_run_from_an_exported_profile(tmp_path: Path, project: Path) -> None:
    from metrics_manual import api

    assert run_cli("export", "--profile", "judged", "-o", str(tmp_path / "judged.json"), cwd=project).returncode == 0
    profile = api.load_profile(tmp_path / "judged.json")
    run = clean_run()
    run["train/ppo_kl"][0] = 0.5
    run_forms.write_ci_history(run, tmp_path / "ci")
    verdict = api.judge(profile, api.read_run([tmp_path / "ci"], _steps()), exclude_steps=[9])
    assert isinstance(verdict, api.Judgement)
    assert bad(verdict) == {("train/ppo_kl", 0): "fail"} and [
        (s.first, s.last) for s in verdict.run.excluded_steps
    ] == [(9, 9)]


def test_only_judged_keys_are_kept_and_the_others_are_still_listed(tmp_path: Path, profile: ProfileExport) -> None:
    from metrics_manual.judge.judging import judged_keys

    run = clean_run()
    run["rollout/not_in_catalog"] = {s: 1.0 for s in STEPS}
    for form in ("events", "dashboard", "wandb-csv"):
        run_forms.write(form, run, tmp_path / form)
        read = read_run([tmp_path / form], _steps(), keys=judged_keys(profile))
        assert "train/entropy_loss" not in read.series and "train/entropy_loss" in read.unread
        j = judge(profile, read)
        assert bad(j) == {}
        assert {n.metric: n.reason for n in j.not_judged} == {
            "train/entropy_loss": "the profile gives no range (logged by the run)",
            "rollout/not_in_catalog": "not in the manual's catalog",
        }, form


def test_progress_shows_on_stderr_only_when_asked_or_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = run_forms.write_events(clean_run(), tmp_path / "ev")
    read_run(files, _steps())
    assert capsys.readouterr() == ("", "")
    from metrics_manual.cli.common import progress_bar

    read_run(files, _steps(), progress=progress_bar(None))
    assert capsys.readouterr() == ("", "")  # not a terminal, a small run
    read_run(files, _steps(), progress=progress_bar(True))
    out, err = capsys.readouterr()
    assert out == "" and "reading the run" in err


@pytest.mark.parametrize("form", run_forms.FORMS)
def test_every_reader_reports_every_byte_to_the_progress_bar(form: str, tmp_path: Path) -> None:
    if form == "tensorboard":
        pytest.importorskip("tensorboard")
    from metrics_manual.runs.collect import Collector
    from metrics_manual.runs.forms import BY_NAME

    done: list[int] = []
    for f in run_forms.write(form, clean_run(), tmp_path):
        done.clear()
        BY_NAME[form].read(f, str(f), Collector(_steps(), done.append))
        assert sum(done) == f.stat().st_size and all(n >= 0 for n in done)


def test_a_folder_without_metrics_files_is_a_warning_and_no_run_at_all_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text('{"lr": 1e-6}\n', "utf-8")
    run_forms.write_dashboard(clean_run(), tmp_path / "dash")
    read = read_run([tmp_path / "dash", tmp_path / "empty"], _steps())
    assert [(p.path, p.severity) for p in read.problems] == [(str(tmp_path / "empty"), "warning")]
    with pytest.raises(RunInputError, match="no metrics file of a known form in this folder"):
        read_run([tmp_path / "empty"], _steps())
