"""A multi-LoRA run (issue 35, case 6): each adapter's keys judged on its own step key, and the
train/grad_norm 0.0 of a batch in which no adapter steps judged as what it is.

The run is tests/fixtures/miles-lives/multi-lora/, written by Miles' event logger, its adapter
statistics by Miles' own MultiLoRAWorkerMetrics: adapters `math` (steps at rollouts 1, 3, ..., 11)
and `code` (at 2, 5, 8, 11); no adapter steps at rollouts 0, 4, 6 and 10, where train/grad_norm is 0.0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO
from judge_fixture import judged_profile, judged_project, profile_head
from metrics_manual.judge.judging import judge, judged_keys
from metrics_manual.judge.verdict import Judgement
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.read import read_run

RUN = REPO / "tests" / "fixtures" / "miles-lives" / "multi-lora" / "events"

CATALOG = """\
title: Metrics
code: {repository: example/miles, branch: main, commit: 31f1ca96}
step_keys:
  train: train/step
  rollout: rollout/step
  perf: rollout/step
  "{adapter}": "{adapter}/step"
  "{adapter}/perf": rollout/step
sections:
  - id: training
    title: Training
    metrics:
      - key: train/grad_norm
        meaning: the gradient norm
        idle:
          value: 0
          when: perf/fully_async/batch_n_adapters_to_step
          equals: 0
          why: no adapter stepped in the batch
          at: {path: miles/backends/megatron_utils/multi_lora_utils.py, symbol: step_stepped_adapter_slots}
      - {key: perf/fully_async/batch_n_adapters_to_step, meaning: adapters that step with the batch}
  - id: adapters
    title: Adapters
    metrics:
      - key: "{adapter}/raw_reward_{stat}"
        meaning: an adapter's reward
        members: ["{adapter}/raw_reward_mean", "{adapter}/raw_reward_max"]
      - {key: "{adapter}/perf/queue_length", meaning: an adapter's queue}
"""

PROFILE = (
    profile_head(steps=12)
    + """\
  train/grad_norm:
    - {kind: band, min: 0.35, max: 5}
  "{adapter}/raw_reward_{stat}":
    - {kind: band, min: 0.5, max: 0.85}
  "{adapter}/perf/queue_length":
    - {kind: exact, value: 1, at: every_step}
"""
)


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return judged_profile(judged_project(tmp_path_factory.mktemp("lora") / "p", CATALOG, PROFILE))


def judged(paths: list[Path], profile: ProfileExport) -> Judgement:
    return judge(profile, read_run(paths, profile.step_keys, keys=judged_keys(profile)))


def test_each_adapter_is_judged_on_its_own_steps(profile: ProfileExport) -> None:
    j = judged([RUN], profile)
    got = {(r.metric, r.verdict, r.steps_judged) for r in j.results}
    # math's steps 1-6 (math/step) and code's 1-4, each family member of each adapter; code's rewards run
    # 0.1 higher, and its max leaves the band.
    assert {("math/raw_reward_mean", "pass", 6), ("math/raw_reward_max", "pass", 6)} <= got
    assert {("code/raw_reward_mean", "pass", 4), ("code/raw_reward_max", "fail", 4)} <= got
    assert ("math/perf/queue_length", "pass", 12) in got and ("code/perf/queue_length", "pass", 12) in got
    assert j.run.steps["math/step"].count == 6 and j.run.steps["code/step"].count == 4
    unknown = j.unknown_keys.listed  # the tiny catalog leaves out the adapters' other keys
    assert "math/log_probs" in unknown and not {"math/step", "math/raw_reward_min"} & set(unknown)
    assert j.problems == []


def test_a_zero_grad_norm_where_no_adapter_stepped_is_not_judged(profile: ProfileExport) -> None:
    j = judged([RUN], profile)
    [grad] = [r for r in j.results if r.metric == "train/grad_norm"]
    assert grad.verdict == "pass" and grad.steps_judged == 8, grad.reason
    [why] = [n.reason for n in j.not_judged if n.metric == "train/grad_norm"]
    assert why == (
        "not judged at steps 0, 4, 6, 10: perf/fully_async/batch_n_adapters_to_step is 0 there, so nothing was "
        "stepped and train/grad_norm 0 is no measurement (the catalog's idle: step_stepped_adapter_slots)"
    )


def test_a_zero_grad_norm_where_an_adapter_stepped_fails_the_floor(profile: ProfileExport) -> None:
    out = Collector(profile.step_keys, keys=judged_keys(profile))
    out.begin("f")
    for step, (n, grad_norm) in enumerate([(1, 1.2), (0, 0.0), (1, 0.0), (1, 1.3)]):
        out.put_step("rollout/step", step)
        out.put("perf/fully_async/batch_n_adapters_to_step", step, n)
        out.put_step("train/step", step)
        out.put("train/grad_norm", step, grad_norm)
    out.end()
    run = read_run([RUN], profile.step_keys, keys=judged_keys(profile))
    run.series = out.finish().series
    [grad] = [r for r in judge(profile, run).results if r.metric == "train/grad_norm"]
    assert grad.verdict == "fail" and [(p.step, p.value) for p in grad.failing_steps] == [(2, 0.0)]


def test_an_adapter_key_is_no_concrete_namespace_s(profile: ProfileExport) -> None:
    # `{adapter}/...` stands for every first segment a concrete namespace does not take.
    assert profile.metric("math/raw_reward_mean").key == "{adapter}/raw_reward_{stat}"
    with pytest.raises(KeyError):
        profile.metric("train/raw_reward_mean")


def test_derive_ranges_a_pattern_for_all_adapters(tmp_path: Path) -> None:
    """derive makes the range of `{adapter}/raw_reward_{stat}` from every adapter's values, each key of
    each run a run of its own; an exact value is checked on each adapter; an idle value is left out."""
    from metrics_manual.derive.stats import Options, derive
    from metrics_manual.source.load import load_manual

    manual = load_manual(judged_project(tmp_path / "p", CATALOG, PROFILE))
    profile = manual.profile("judged")
    run = read_run([RUN], manual.catalog.step_keys)
    outcomes = {(o.key, o.index): o for o in derive(manual, profile, {"seed-1": run}, Options()).outcomes}
    band = outcomes[("{adapter}/raw_reward_{stat}", 0)]
    values = [v for k, v in run.series.items() if k.split("/")[1].startswith("raw_reward_") for v in v.values()]
    assert band.problems == [] and band.values is not None
    assert band.values["min"] <= min(values) and band.values["max"] >= max(values) > 0.85  # code's max too
    grad = outcomes[("train/grad_norm", 0)]  # the idle 0.0 of no adapter's step is no value of its band
    assert grad.values is not None and grad.values["min"] > 1 and grad.summary.startswith("8 values")
    queue = outcomes[("{adapter}/perf/queue_length", 0)]
    assert queue.problems == [] and not queue.violation  # 1 at every step of both adapters
