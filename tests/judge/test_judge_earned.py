"""Issue 15, the run side: a pass is earned, and hostile run data never crashes judge.

Every table row writes a run with tests/run_forms.py in each form the row applies to,
plants one fault, and states the verdict it must give; hostile inputs go through the
command (in process) and must give exit 2 and a finding, never a traceback.
"""

from __future__ import annotations

import json
import math
import os
import random
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import run_forms
from conftest import run_cli
from judge_fixture import judged_profile, judged_project, profile_head
from metrics_manual.api import judge
from metrics_manual.judge.judging import judged_keys
from metrics_manual.judge.verdict import Judgement, Span
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs import collect
from metrics_manual.runs import lines as run_lines
from metrics_manual.runs.ci_history import TARGET_METRIC_KEYS
from metrics_manual.runs.forms import BY_NAME
from metrics_manual.runs.read import read_run
from metrics_manual.runs.values import MAX_STEP

CATALOG = """\
title: Metrics
code: {repository: example/miles, branch: main, commit: 31f1ca96}
step_keys: {train: train/step, rollout: rollout/step, perf: rollout/step}
sections:
  - id: rollout
    title: Rollout
    metrics:
      - {key: rollout/raw_reward, meaning: the mean reward}
      - {key: rollout/response_lengths, meaning: the mean answer length, unit: tokens}
  - id: training
    title: Training
    metrics:
      - {key: train/grad_norm, meaning: the gradient norm}
      - {key: train/ppo_kl, meaning: the k1 KL between old and new policy}
      - {key: train/pg_clipfrac, meaning: the share of clipped tokens}
  - id: perf
    title: Performance
    metrics:
      - {key: perf/step_time, meaning: seconds per step, unit: s}
"""

PROFILE = (
    profile_head(steps=20)
    + """\
  rollout/raw_reward:
    - {kind: band, min: 0.2, max: 0.9, steps: 10}
  rollout/response_lengths:
    - {kind: median, value: 400, steps: 10}
  train/grad_norm:
    - {kind: band, min: 0.1, max: 5}
    - {kind: band, min: 0.5, max: 2, window: {first: 2}}
  train/ppo_kl:
    - {kind: exact, value: 0, at: {step: 0}}
  train/pg_clipfrac:
    - {kind: exact, value: 0, at: every_step}
  perf/step_time:
    - {kind: presence, at: every_step}
"""
)

N = 20
STEP_KEYS = {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"}
FORMS = run_forms.FORMS
JSON_FORMS = tuple(f for f in FORMS if BY_NAME[f].named("metrics.jsonl"))  # the JSON-lines forms


def clean(n: int = N) -> run_forms.Series:
    return {
        "rollout/raw_reward": {s: 0.5 + 0.01 * s for s in range(n)},
        "rollout/response_lengths": {s: 395.0 + s % 5 for s in range(n)},
        "perf/step_time": {s: 30.0 + s for s in range(n)},
        "train/grad_norm": {s: 1.0 + 0.1 * (s % 10) for s in range(n)},
        "train/ppo_kl": {s: 0.001 * s for s in range(n)},
        "train/pg_clipfrac": {s: 0.0 for s in range(n)},
    }


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_project(tmp_path_factory.mktemp("earned") / "p", CATALOG, PROFILE)


@pytest.fixture(scope="module")
def profile(project: Path) -> ProfileExport:
    return judged_profile(project)


def need(form: str) -> None:
    if form == "tensorboard":
        pytest.importorskip("tensorboard", reason="pip install 'metrics-manual[tensorboard]'")


def read(paths: list[Path], profile: ProfileExport | None = None) -> object:
    return read_run(paths, STEP_KEYS, keys=judged_keys(profile) if profile else None)


def judged(paths: list[Path], profile: ProfileExport, **kw: object) -> Judgement:
    return judge(profile, read_run(paths, STEP_KEYS, keys=judged_keys(profile)), **kw)  # type: ignore[arg-type]


def bad(j: Judgement) -> dict[tuple[str, int], str]:
    return {(r.metric, r.expectation): r.verdict for r in j.results if r.verdict != "pass"}


def result(j: Judgement, metric: str, i: int = 0):  # noqa: ANN201
    return next(r for r in j.results if (r.metric, r.expectation) == (metric, i))


def test_a_corrupt_line_in_the_middle_leaves_its_step_missing_not_passed(
    tmp_path: Path, profile: ProfileExport
) -> None:
    (f,) = run_forms.write_dashboard(clean(), tmp_path / "d")
    lines = f.read_text("utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"rollout/step": 7,' in line)
    lines[at] = lines[at][:40] + "\n"  # the record of rollout/step 7, cut mid-way: unreadable
    f.write_text("".join(lines), "utf-8")
    j = judged([f], profile)
    assert [(p.line, p.severity) for p in j.problems] == [(1, "warning"), (at + 1, "error")]
    assert j.run.steps["rollout/step"].no_record == [Span(first=7, last=7)]
    r = result(j, "rollout/raw_reward")
    assert (r.verdict, r.steps_missing) == ("error", 1) and j.exit_code == 2


# --- silent passes that now fail or error -------------------------------------------------


def _set(key: str, step: int, value: float) -> Callable[[run_forms.Series], None]:
    def plant(run: run_forms.Series) -> None:
        run[key][step] = value

    return plant


def _stop(key: str, at: int) -> Callable[[run_forms.Series], None]:
    def plant(run: run_forms.Series) -> None:
        run[key] = {s: v for s, v in run[key].items() if s < at}

    return plant


def _drop(key: str, step: int) -> Callable[[run_forms.Series], None]:
    def plant(run: run_forms.Series) -> None:
        del run[key][step]

    return plant


def _drop_step(step_key: str, step: int) -> Callable[[run_forms.Series], None]:
    """Every value of `step` of the keys of `step_key`'s namespaces: no record of the step at all."""

    def plant(run: run_forms.Series) -> None:
        for key in run:
            if STEP_KEYS[key.split("/")[0]] == step_key:
                run[key].pop(step, None)

    return plant


# name -> (forms, planting, {(metric, expectation): verdict}, a phrase of the reason)
SILENT = {
    "a NaN outside the steps a band covers": (
        FORMS,
        _set("rollout/raw_reward", 15, math.nan),
        {("rollout/raw_reward", 0): "error"},
        "not a finite number at 1 step: step 15",
    ),
    "an infinity after the window": (
        FORMS,
        _set("train/grad_norm", 12, math.inf),
        {("train/grad_norm", 0): "error", ("train/grad_norm", 1): "error"},
        "not a finite number at 1 step: step 12",
    ),
    "a metric that stops being logged half-way": (
        FORMS,
        _stop("train/grad_norm", 10),
        {("train/grad_norm", 0): "error"},
        "missing at 10 steps it covers: steps 10-19",
    ),
    "one step missing (a W&B CSV's empty cell)": (
        FORMS,
        _drop("train/pg_clipfrac", 7),
        {("train/pg_clipfrac", 0): "error"},
        "missing at 1 step it covers: step 7",
    ),
    "a median over steps one of which is missing": (
        FORMS,
        _drop("rollout/response_lengths", 3),
        {("rollout/response_lengths", 0): "error"},
        "step 3",
    ),
    # helper-14's newcomer: a line deleted from the middle of a dashboard log passed, 47 of 48 steps.
    "a step the run logged nothing at, between two it did (a deleted line)": (
        FORMS,
        _drop_step("rollout/step", 7),
        {("rollout/raw_reward", 0): "error", ("rollout/response_lengths", 0): "error", ("perf/step_time", 0): "fail"},
        "missing at 1 step it covers: step 7",
    ),
}


@pytest.mark.parametrize("name", SILENT)
@pytest.mark.parametrize("form", FORMS)
def test_a_silent_pass_is_now_an_error(name: str, form: str, tmp_path: Path, profile: ProfileExport) -> None:
    forms, plant, expected, phrase = SILENT[name]
    if form not in forms:
        pytest.skip("the form cannot hold this fault")
    need(form)
    run = clean()
    plant(run)
    run_forms.write(form, run, tmp_path / form)
    j = judged([tmp_path / form], profile)
    assert bad(j) == expected, form
    assert j.exit_code == 1
    (metric, i) = next(iter(expected))
    r = result(j, metric, i)
    assert phrase in r.reason, r.reason
    if "missing" in phrase:
        assert r.steps_missing == (10 if "10-19" in phrase else 1)
        if form == "wandb-csv":
            assert "empty cell" in r.reason


# A value that is not a number at all, written as each JSON form writes it.
NOT_NUMBERS = {
    "a string": '"1e9"',
    "a bool": "true",
    "an integer out of float range": "1" + "0" * 400,
    "an object": '{"v": 1}',
}


def _replace_value(text: str, form: str, key: str, step: int, token: str) -> str:
    """The value of `key` at `step` in a JSON form's text replaced by a raw JSON token."""
    out = []
    for line in text.splitlines():
        rec = json.loads(line)
        if form == "ci-history" and rec["metric"] == key:
            line = line.replace(f"[{step}, {json.dumps(rec['series'][step][1])}]", f"[{step}, {token}]")
        elif form != "ci-history" and rec.get("metrics", {}).get(key) is not None:
            sk = STEP_KEYS[key.split("/")[0]]
            if rec["metrics"].get(sk) == step:
                value = json.dumps(rec["metrics"][key], separators=(",", ":") if form == "events" else (", ", ": "))
                sep = ":" if form == "events" else ": "
                line = line.replace(f'"{key}"{sep}{value}', f'"{key}"{sep}{token}')
        out.append(line)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("what", NOT_NUMBERS)
@pytest.mark.parametrize("form", JSON_FORMS)
def test_a_value_that_is_not_a_number_is_an_error_wherever_it_lies(
    what: str, form: str, tmp_path: Path, profile: ProfileExport
) -> None:
    files = run_forms.write(form, clean(), tmp_path / form)
    for f in files:
        before = f.read_text("utf-8")
        after = _replace_value(before, form, "rollout/raw_reward", 15, NOT_NUMBERS[what])
        f.write_text(after, "utf-8")
    j = judged(files, profile)
    assert bad(j) == {("rollout/raw_reward", 0): "error"}, form
    assert "not a finite number at 1 step: step 15" in result(j, "rollout/raw_reward").reason
    assert j.exit_code == 1 and "Traceback" not in j.to_json()


def test_null_in_a_dashboard_is_an_error_not_an_absent_value(tmp_path: Path, profile: ProfileExport) -> None:
    (f,) = run_forms.write_dashboard(clean(), tmp_path)
    f.write_text(_replace_value(f.read_text("utf-8"), "dashboard", "train/grad_norm", 4, "null"), "utf-8")
    j = judged([f], profile)
    assert bad(j) == {("train/grad_norm", 0): "error", ("train/grad_norm", 1): "error"}
    assert "step 4: null" in result(j, "train/grad_norm").reason


@pytest.mark.parametrize("form", FORMS)
def test_two_files_that_disagree_are_an_error_naming_both(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    need(form)
    run_forms.write(form, clean(), tmp_path / "a")
    other = clean()
    other["train/grad_norm"][6] = 1.25
    run_forms.write(form, other, tmp_path / "b")
    j = judged([tmp_path / "a", tmp_path / "b"], profile)
    # Like a value that is not a number, a conflict spoils every expectation of the metric.
    assert bad(j) == {("train/grad_norm", 0): "error", ("train/grad_norm", 1): "error"}
    reason = result(j, "train/grad_norm").reason
    assert "two files disagree at 1 step (step 6)" in reason
    assert str(tmp_path / "a") in reason and str(tmp_path / "b") in reason
    # The same values in two files (a run read in two forms) agree; excluding the step resolves it.
    assert bad(judged([tmp_path / "a", tmp_path / "b"], profile, exclude_steps=[6])) == {}
    same = judged([tmp_path / "a", tmp_path / "a"], profile)
    assert bad(same) == {}


def test_the_attempt_rule_decides_between_two_files(tmp_path: Path, profile: ProfileExport) -> None:
    run_forms.write_events(clean(), tmp_path / "a")
    retry = tmp_path / "b" / "retry.jsonl"
    retry.parent.mkdir()
    line = {
        "timestamp": "t",
        "source": {"component": "actor"},
        "type": "metric",
        "rollout_id": None,
        "attempt": 1,
        "metrics": {"train/step": 6, "train/grad_norm": 1.25},
    }
    retry.write_text(json.dumps(line) + "\n", "utf-8")
    run = read([tmp_path / "a", tmp_path / "b"], profile)
    assert run.series["train/grad_norm"][6] == 1.25 and run.conflicts == {}  # type: ignore[attr-defined]


def _resumed(form: str, tmp: Path) -> list[Path]:
    """A run logged to step 14 with wrong values at 10-14, then resumed from step 10 into the same file."""
    first = {k: {s: v for s, v in series.items() if s < 15} for k, series in clean().items()}
    for s in range(10, 15):
        first["train/grad_norm"][s] = 99.0
    second = {k: {s: v for s, v in series.items() if s >= 10} for k, series in clean().items()}
    a = run_forms.write(form, first, tmp / "a")
    b = run_forms.write(form, second, tmp / "b")
    for fa, fb in zip(a, b, strict=True):
        more = fb.read_bytes()
        if form == "wandb-csv":
            more = more.split(b"\n", 1)[1]
        fa.write_bytes(fa.read_bytes() + more)
    return a


@pytest.mark.parametrize("form", ["events", "dashboard", "wandb-csv"])
def test_a_resumed_run_is_judged_on_what_it_logged_last(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    files = _resumed(form, tmp_path)
    j = judged(files, profile)
    assert bad(j) == {} and j.exit_code == 0
    relogged = {(r.step_key, tuple((s.first, s.last) for s in r.steps)) for r in j.run.relogged}
    assert ("train/step", ((10, 14),)) in relogged
    assert "re-logged" in run_cli_text(j)


def run_cli_text(j: Judgement) -> str:
    from metrics_manual.judge.report_text import text

    return text(j)


@pytest.mark.parametrize("form", FORMS)
def test_a_cut_last_line_leaves_the_last_step_unfinished(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    need(form)
    run = clean()
    del run["perf/step_time"][N - 1]  # the step being written when the file was read
    files = run_forms.write(form, run, tmp_path / form)
    assert bad(judged(files, profile)) == {("perf/step_time", 0): "fail"}  # a finished run: it is missing
    cut = {
        "events": b'{"timestamp":"t","source":{"component":"main"},"type":"metric","metrics":{"rollout/st',
        "dashboard": b'{"ts": 1, "step_key": "rollout/step", "step": 19, "metr',
        "ci-history": b'{"metric": "perf/step_time", "series": [[0, 30.0], [1',
        "wandb-csv": b"40,210.0,17960",
        "tensorboard": b"\x40\x00\x00\x00\x00\x00\x00\x00\x01\x02",
        "console": b"(RolloutManager pid=4100) [2026-11-30 01:00:00.000 rollout_manager] metrics.py:89 - perf 19: {'pe",
    }[form]
    target = max(files, key=lambda f: f.stat().st_size) if form != "tensorboard" else files[0]
    target.write_bytes(target.read_bytes() + cut)
    j = judged(files, profile)
    assert bad(j) == {} and j.exit_code == 0, [r.reason for r in j.results if r.verdict != "pass"]
    assert j.run.unfinished_steps["rollout/step"] == N - 1
    assert [p.severity for p in j.problems] == ["warning"] and "unfinished" in j.problems[0].message


def test_the_ci_history_form_judges_only_its_whitelist(tmp_path: Path, profile: ProfileExport) -> None:
    run = {k: v for k, v in clean().items() if k in TARGET_METRIC_KEYS}  # what CiHistoryBackend writes
    run["train/grad_norm"][5] = 7.0
    files = run_forms.write_ci_history(run, tmp_path)
    j = judged(files, profile)
    assert bad(j) == {("train/grad_norm", 0): "fail"}
    reasons = {n.metric: n.reason for n in j.not_judged if n.expectation is not None}
    assert set(reasons) == {"rollout/response_lengths", "train/pg_clipfrac", "perf/step_time"}
    assert all("TARGET_METRIC_KEYS" in r for r in reasons.values())
    assert len(TARGET_METRIC_KEYS) == 7
    # A clean run of that form passes: judging it can exit 0.
    run["train/grad_norm"][5] = 1.0
    run_forms.write_ci_history(run, tmp_path / "clean")
    assert judged([tmp_path / "clean"], profile).exit_code == 0


@pytest.mark.parametrize("form", ["events", "dashboard", "wandb-csv"])
def test_a_metric_under_another_step_key_says_so(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    run = clean()
    moved = run.pop("train/grad_norm")
    run["rollout/moved"] = moved  # logged in the rollout/step call ...
    files = run_forms.write(form, run, tmp_path / form)
    for f in files:  # ... under the key train/grad_norm
        f.write_text(f.read_text("utf-8").replace("rollout/moved", "train/grad_norm"), "utf-8")
    j = judged(files, profile)
    r = result(j, "train/grad_norm")
    assert r.verdict == "error" and "not in the run" not in r.reason
    assert "logged only with the step key rollout/step, not with its own train/step" in r.reason


# --- JSON is read for what it means ---------------------------------------------------------


def _spell(v: object, rnd: random.Random, escape: float, spaces: list[str]) -> str:
    def ws() -> str:
        return rnd.choice(spaces)

    if isinstance(v, dict):
        items = list(v.items())
        rnd.shuffle(items)
        inner = ("," + ws()).join(
            _spell(k, rnd, escape, spaces) + ws() + ":" + ws() + _spell(x, rnd, escape, spaces) for k, x in items
        )
        return "{" + ws() + inner + ws() + "}"
    if isinstance(v, list):
        return "[" + ws() + ("," + ws()).join(_spell(x, rnd, escape, spaces) for x in v) + ws() + "]"
    if isinstance(v, str):
        return (
            '"'
            + "".join(
                json.dumps(c)[1:-1]
                if c in '"\\' or ord(c) < 0x20
                else (f"\\u{ord(c):04x}" if rnd.random() < 0.5 else f"\\u{ord(c):04X}")
                if rnd.random() < escape
                else c
                for c in v
            )
            + '"'
        )
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def _faulty() -> run_forms.Series:
    run = clean()
    run["train/grad_norm"][7] = 7.2
    run["rollout/raw_reward"][4] = math.nan
    run["train/ppo_kl"][0] = 0.5
    return run


@pytest.fixture(scope="module")
def spelled_base(tmp_path_factory: pytest.TempPathFactory, profile: ProfileExport) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("spelling")
    want = {}
    for form in JSON_FORMS:
        run_forms.write(form, _faulty(), tmp / form)
        want[form] = bad(judged([tmp / form], profile))
        assert want[form] == {
            ("train/grad_norm", 0): "fail",
            ("rollout/raw_reward", 0): "error",
            ("train/ppo_kl", 0): "fail",
        }
    return tmp, want


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 2**32 - 1),
    escape=st.sampled_from([0.0, 0.3, 1.0]),
    spaces=st.lists(st.sampled_from(["", " ", "  ", "\t", " \r"]), min_size=1, max_size=3),
)
def test_json_spelling_does_not_change_a_verdict(
    seed: int, escape: float, spaces: list[str], spelled_base: tuple[Path, dict], profile: ProfileExport, tmp_path: Path
) -> None:
    base, want = spelled_base
    rnd = random.Random(seed)
    for form in JSON_FORMS:
        out = Path(tempfile.mkdtemp(prefix=form, dir=tmp_path))
        for f in sorted((base / form).iterdir()):
            lines = [_spell(json.loads(line), rnd, escape, spaces) for line in f.read_text("utf-8").splitlines()]
            (out / f.name).write_text("".join(line + "\n" for line in lines), "utf-8")
        j = judge(profile, read_run([out], STEP_KEYS, input_format=form, keys=judged_keys(profile)))
        assert bad(j) == want[form], (form, seed)
        assert j.problems == []


def test_a_type_key_inside_a_large_source_does_not_hide_a_metric_line(tmp_path: Path, profile: ProfileExport) -> None:
    files = run_forms.write_events(clean(), tmp_path / "ev")
    line = {
        "source": {"type": "actor", "pad": "x" * 5000},
        "timestamp": "t",
        "type": "metric",
        "metrics": {"train/step": 3, "train/grad_norm": 9.5},
    }
    with files[-1].open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
    assert bad(judged(files, profile)) == {("train/grad_norm", 0): "fail"}


# --- hostile run data: exit 2 and a finding, never a traceback ---------------------------------


def _events_line(metrics: str) -> str:
    return '{"timestamp":"t","source":{"component":"main"},"type":"metric","attempt":null,"metrics":' + metrics + "}\n"


def _dash_line(metrics: str, step: str = "3") -> str:
    return '{"ts": 1.0, "step_key": "train/step", "step": ' + step + ', "metrics": ' + metrics + "}\n"


DEEP = "[" * 100_000 + "]" * 100_000
# name -> (form, text appended to the form's first file, a phrase of the finding)
HOSTILE = {
    "events: a step of 2^63": (
        "events",
        _events_line('{"train/step": 9223372036854775808, "train/grad_norm": 1}'),
        "not a step",
    ),
    "dashboard: a step of 2^63": (
        "dashboard",
        _dash_line('{"train/grad_norm": 1}', "9223372036854775808"),
        "not a step",
    ),
    "ci-history: a step of 2^63": (
        "ci-history",
        '{"metric": "train/grad_norm", "series": [[9223372036854775808, 1.0]]}\n',
        "0 to 2^63-1",
    ),
    "wandb-csv: a step of 1e20": ("wandb-csv", None, "not an integer from 0 to 2^63-1"),
    # A step far past the others: the steps between are no lost record to fill in (memory), but never a pass.
    "events: a step of 2^62 after 20": (
        "events",
        _events_line('{"train/step": 4611686018427387904, "train/grad_norm": 1}'),
        "not filled in and not judged",
    ),
    "dashboard: a step of 2^62 after 20": (
        "dashboard",
        _dash_line('{"train/step": 4611686018427387904, "train/grad_norm": 1}', "4611686018427387904"),
        "no record at 4,611,686,018,427,387,884 steps: 20-4611686018427387903",
    ),
    "events: JSON nested 100k deep": (
        "events",
        _events_line('{"train/step": 3, "x": ' + DEEP + "}"),
        "nested too deeply",
    ),
    "dashboard: JSON nested 100k deep": ("dashboard", _dash_line(DEEP), "nested too deeply"),
    "ci-history: JSON nested 100k deep": (
        "ci-history",
        '{"metric": "train/grad_norm", "series": ' + DEEP + "}\n",
        "nested too deeply",
    ),
    "events: a lone surrogate in a key": (
        "events",
        _events_line('{"train/step": 3, "train/x\\ud800": 1}'),
        "lone surrogate",
    ),
    "dashboard: a lone surrogate in a key": (
        "dashboard",
        _dash_line('{"train/step": 3, "tr\\udfffain/x": 1}'),
        "lone surrogate",
    ),
    "ci-history: a lone surrogate in a key": (
        "ci-history",
        '{"metric": "train/\\uD834", "series": [[1, 1.0]]}\n',
        "lone surrogate",
    ),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_run_data_is_a_finding_and_exit_2(name: str, tmp_path: Path, project: Path) -> None:
    form, extra, phrase = HOSTILE[name]
    files = run_forms.write(form, clean(), tmp_path / form)
    if extra is None:  # the CSV row whose step is 1e20
        text = files[0].read_text("utf-8").splitlines()
        header = text[0].split(",")
        row = ["1"] * len(header)
        row[header.index("train/step")] = "1e20"
        files[0].write_text("\n".join([*text, ",".join(row)]) + "\n", "utf-8")
    else:
        with files[0].open("a", encoding="utf-8") as fh:
            fh.write(extra)
    ran = run_cli("judge", "--profile", "judged", str(tmp_path / form), cwd=project)
    assert ran.returncode == 2, (ran.stdout, ran.stderr)
    assert phrase in ran.stdout and "error:" in ran.stdout and "Traceback" not in ran.stdout + ran.stderr
    assert ran.stdout.splitlines()[-1].endswith("1 reading error(s)")


def test_a_file_name_that_is_not_utf8_is_read_and_named_escaped(tmp_path: Path, project: Path) -> None:
    (f,) = run_forms.write_dashboard(clean(), tmp_path / "d")
    odd = os.fsdecode(os.fsencode(f.parent) + b"/metrics-\xff.jsonl")
    try:
        os.rename(f, odd)
    except OSError:
        pytest.skip("the file system refuses the name")
    for fmt in ("text", "json", "junit", "github"):
        ran = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--format", fmt, cwd=project)
        shown = json.loads(ran.stdout)["problems"][0]["path"] if fmt == "json" else ran.stdout
        assert ran.returncode == 2 and "\\xff" in shown, fmt
    assert "not UTF-8" in ran.stdout and "metrics-\\xff.jsonl" in ran.stdout


def test_a_tensorboard_tensor_of_several_numbers_is_an_error_of_its_metric(
    tmp_path: Path, profile: ProfileExport
) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto import (
        event_pb2,
        summary_pb2,
        tensor_pb2,
        tensor_shape_pb2,
        types_pb2,
    )
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    run = clean()
    del run["train/grad_norm"][12]
    run_forms.write_tensorboard(run, tmp_path / "tb")
    w = EventFileWriter(str(tmp_path / "tb" / "extra"))
    shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=3)])
    tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape=shape, float_val=[1.0, 2.0, 3.0])
    meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
    value = summary_pb2.Summary.Value(tag="train/grad_norm", tensor=tensor, metadata=meta)
    w.add_event(event_pb2.Event(step=12, wall_time=1.0, summary=summary_pb2.Summary(value=[value])))
    w.close()
    j = judged([tmp_path / "tb"], profile)
    assert bad(j) == {("train/grad_norm", 0): "error", ("train/grad_norm", 1): "error"}
    assert "step 12: a tensor of 3 numbers, not a scalar" in result(j, "train/grad_norm").reason


@pytest.mark.parametrize("form", [*JSON_FORMS, "wandb-csv", "console"])  # the forms read line by line
def test_a_line_longer_than_the_cap_is_a_finding(
    form: str, tmp_path: Path, profile: ProfileExport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_lines, "MAX_LINE", 1 << 20)  # chunks of 1 MB: the line runs over four
    files = run_forms.write(form, clean(), tmp_path / form)
    text = files[0].read_bytes()
    cut = text.index(b"\n") + 1
    files[0].write_bytes(text[:cut] + b"x" * (3 << 20) + b"\n" + text[cut:])
    j = judged(files, profile)
    assert [p.message[:30] for p in j.problems] == ["a line longer than 1 MB; it wa"]
    assert j.problems[0].line == 2 and j.exit_code == 2 and bad(j) == {}


@pytest.mark.slow
@pytest.mark.parametrize("form", ["events", "dashboard"])
def test_a_256_mb_line_without_a_newline_is_read_in_linear_time(
    form: str, tmp_path: Path, profile: ProfileExport
) -> None:
    files = run_forms.write(form, clean(), tmp_path / form)
    with files[0].open("ab") as fh:
        block = b"y" * (1 << 20)
        for _ in range(256):
            fh.write(block)
    start = time.perf_counter()
    j = judged(files, profile)
    took = time.perf_counter() - start
    assert any("longer than 64 MB" in p.message for p in j.problems), j.problems
    assert took < 20, took  # was 42 s, quadratic; linear reading takes a few seconds here


@pytest.mark.parametrize("many", [30_000, pytest.param(300_000, marks=pytest.mark.slow)])
def test_distinct_unknown_keys_are_counted_past_the_cap_not_kept(
    many: int, tmp_path: Path, profile: ProfileExport
) -> None:
    (f,) = run_forms.write_dashboard(clean(), tmp_path / "d")
    per = 50_000
    with f.open("a", encoding="utf-8") as fh:
        for start in range(0, many, per):
            keys = {f"rollout/unknown_{i}": 1.0 for i in range(start, min(many, start + per))}
            fh.write(json.dumps({"ts": 1, "step_key": "rollout/step", "step": 3, "metrics": keys}) + "\n")
    run = read([f], profile)
    assert len(run.unread) <= collect.KEYS_KEPT  # type: ignore[attr-defined]
    counted = len(run.unread) + run.unread_beyond  # type: ignore[attr-defined]
    assert counted == many, counted  # counted exactly below KEYS_COUNTED
    j = judge(profile, run)  # type: ignore[arg-type]
    assert len(j.not_judged) <= collect.KEYS_KEPT + 10 and len(j.to_json()) < 3_000_000
    assert bad(j) == {} and j.summary.not_judged >= many * 0.97


def test_exclude_steps_are_ranges_not_sets_of_steps(tmp_path: Path, project: Path) -> None:
    run_forms.write_dashboard(clean(), tmp_path / "d")
    spans = ",".join(f"{k * 20_000_000 + 100}-{k * 20_000_000 + 10_000_099}" for k in range(20))
    start = time.perf_counter()
    ran = run_cli(
        "judge",
        "--profile",
        "judged",
        str(tmp_path / "d"),
        "--exclude-steps",
        f"3,{spans}",
        "--format",
        "json",
        cwd=project,
    )
    assert ran.returncode == 0 and time.perf_counter() - start < 10
    data = json.loads(ran.stdout)
    assert data["run"]["excluded_steps"][0] == {"first": 3, "last": 3} and len(data["run"]["excluded_steps"]) == 21
    ran = run_cli(
        "judge", "--profile", "judged", str(tmp_path / "d"), "--exclude-steps", "0-9223372036854775808", cwd=project
    )
    assert ran.returncode == 2 and "at most 2^63-1" in ran.stderr


FORGED = ["rollout/x\n8 pass, 0 fail", "rollout/\x1b]0;pwned\x07y", "\x1b[2J\x1b[31mred", "rollout/\u009b31m"]


@pytest.mark.parametrize("fmt", ["text", "github", "junit"])
def test_keys_from_the_run_are_printed_with_control_characters_escaped(fmt: str, tmp_path: Path, project: Path) -> None:
    run = clean()
    files = run_forms.write_dashboard(run, tmp_path / "d")
    with files[0].open("a", encoding="utf-8") as fh:
        metrics = {"rollout/step": 3, **{k: 1.0 for k in FORGED}, "train/grad_norm": 1.0}  # the last: no step key
        fh.write(json.dumps({"ts": 1, "step_key": "rollout/step", "step": 3, "metrics": metrics}) + "\n")
        fh.write(json.dumps({"ts": 1, "step_key": "x\n8 pass, 0 fail\x1b[0m", "step": 3, "metrics": {}}) + "\n")
    ran = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--format", fmt, cwd=project)
    assert "Traceback" not in ran.stderr
    out = ran.stdout
    assert not any(c in out for c in "\x1b\x07\x9b\r"), fmt
    assert not any(line.lstrip().startswith("8 pass, 0 fail") for line in out.splitlines()), fmt
    if fmt == "text":
        assert "rollout/x\\n8 pass, 0 fail" in out and "rollout/\\x1b]0;pwned\\x07y" in out
    if fmt == "junit":
        ET.fromstring(out)


# --- judge anywhere -----------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_judge_takes_an_exported_profile_outside_any_project(suffix: str, tmp_path: Path, project: Path) -> None:
    exported = tmp_path / f"judged.{suffix}"
    assert (
        run_cli("export", "--profile", "judged", "--format", suffix, "-o", str(exported), cwd=project).returncode == 0
    )
    elsewhere = tmp_path / "ci"
    elsewhere.mkdir()
    run_forms.write_events(_faulty(), elsewhere / "events")
    by_path = run_cli("judge", "--profile", str(exported), "events", "--format", "json", cwd=elsewhere)
    by_id = run_cli("judge", "--profile", "judged", str(elsewhere / "events"), "--format", "json", cwd=project)
    assert by_path.returncode == by_id.returncode == 1, by_path.stderr
    a, b = json.loads(by_path.stdout), json.loads(by_id.stdout)
    assert a["results"] == b["results"] and a["summary"] == b["summary"]
    report = run_cli("judge", "--profile", str(exported), "events", "--report", "r.html", cwd=elsewhere)
    assert report.returncode == 1 and (elsewhere / "r.html").read_text("utf-8").startswith("<!")


def test_a_bad_profile_path_is_bad_input(tmp_path: Path, project: Path) -> None:
    run_forms.write_events(clean(), tmp_path / "ev")
    old = tmp_path / "old.json"
    assert run_cli("export", "--profile", "judged", "-o", str(old), cwd=project).returncode == 0
    data = json.loads(old.read_text("utf-8"))
    del data["step_keys"]
    old.write_text(json.dumps(data), "utf-8")
    for value, phrase in [
        (str(tmp_path / "missing.json"), "no such file"),
        (str(old), "names no step_keys"),
    ]:
        ran = run_cli("judge", "--profile", value, str(tmp_path / "ev"), cwd=tmp_path)
        assert ran.returncode == 2 and phrase in ran.stderr and "Traceback" not in ran.stderr
    (tmp_path / "junk.yaml").write_text("a: [\n", "utf-8")
    ran = run_cli("judge", "--profile", str(tmp_path / "junk.yaml"), str(tmp_path / "ev"), cwd=tmp_path)
    assert ran.returncode == 2 and f"{tmp_path / 'junk.yaml'}:2:1: error: invalid YAML: " in ran.stderr
    assert ran.stderr.rstrip().endswith("[MM201]")


def test_no_known_form_names_the_forms_tried(tmp_path: Path, project: Path) -> None:
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.json").write_text('{"lr": 1e-6}\n', "utf-8")
    ran = run_cli("judge", "--profile", "judged", str(tmp_path / "cfg"), cwd=project)
    assert ran.returncode == 2
    for phrase in (
        "no metrics file of a known form",
        ", ".join(FORMS),
        "--input-format",
    ):
        assert phrase in ran.stderr


# --- the judging page states the rules in the code's words ---------------------------------------


def _words(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def test_the_judging_page_states_the_rules_and_caps_of_the_code() -> None:
    from metrics_manual.judge import unearned

    page = _words((Path(__file__).parents[2] / "docs" / "judging.md").read_text("utf-8"))
    merge = collect.__doc__.split("The rules of a merge (docs/judging.md states them in these words):")[1]
    for bullet in merge.strip().split("\n- "):
        assert _words(bullet.lstrip("- ")) in page, bullet
    before = unearned.__doc__.split(
        "Before any rule, what makes a pass unearned (ERRORS below, the words of docs/judging.md):"
    )[1]
    assert _words(before.split(". Excluded steps")[0]) in page
    assert f"a line of at most {run_lines.MAX_LINE >> 20} MB" in page
    assert f"{collect.KEYS_KEPT:,} distinct keys" in page and f"up to {collect.KEYS_COUNTED:,} more" in page
    assert "from 0 to 2^63-1" in page and MAX_STEP == 2**63 - 1


@pytest.mark.parametrize(
    "spelling",
    [
        '"type" : "metric"',
        '"type":"\\u006detric"',
        '"\\u0074ype":"metric"',
        '"type":"weight_checksum","type":"metric"',  # json.loads keeps the last of a duplicate key
    ],
)
def test_a_metric_line_in_any_spelling_is_read(spelling: str, tmp_path: Path, profile: ProfileExport) -> None:
    files = run_forms.write_events(clean(), tmp_path / "ev")
    line = (
        '{"timestamp":"t","source":{"component":"actor"},'
        + spelling
        + ',"metrics":{"train/step":3,"train/grad_norm":9.5}}'
    )
    with files[-1].open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    assert bad(judged(files, profile)) == {("train/grad_norm", 0): "fail"}, spelling


def test_excluding_the_steps_of_a_gap_clears_its_finding(tmp_path: Path, project: Path) -> None:
    (f,) = run_forms.write_dashboard(clean(), tmp_path / "d")
    with f.open("a", encoding="utf-8") as fh:  # train/step jumps from 19 to 10,000,000: too far to fill in
        fh.write(_dash_line('{"train/step": 10000000, "train/grad_norm": 1}', "10000000"))
    ran = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), cwd=project)
    assert ran.returncode == 2 and "[MM514]" in ran.stdout
    ran = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), "--exclude-steps", "20-9999999", cwd=project)
    # No reading error left (exit 1: that lone record lacks the other train/ metrics, an error of theirs).
    assert (
        ran.returncode == 1 and "MM514" not in ran.stdout and "missing at 1 step it covers: step 10000000" in ran.stdout
    )
