"""The API's profile: `expected(key)` for a key the catalog lacks is a clear KeyError, not a bare one."""

from __future__ import annotations

import pytest

from conftest import run_cli
from judge_fixture import judged_project, profile_head
from metrics_manual.api import UnknownMetric, load_profile
from metrics_manual.model.schema import ProfileExport

CATALOG = """\
title: Metrics
code: {repository: example/miles, branch: main, commit: 31f1ca96}
step_keys: {train: train/step, eval: eval/step}
sections:
  - id: training
    title: Training
    metrics:
      - {key: train/grad_norm, meaning: the gradient norm}
      - {key: train/entropy_loss, meaning: the entropy}
  - id: eval
    title: Evaluation
    metrics:
      - {key: "eval/{dataset}", meaning: the mean reward on a dataset}
"""

PROFILE = (
    profile_head()
    + """\
  train/grad_norm:
    - {kind: band, min: 0.1, max: 5}
"""
)


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    project = judged_project(tmp_path_factory.mktemp("api") / "p", CATALOG, PROFILE)
    out = project / "judged.json"
    assert run_cli("export", "--profile", "judged", "-o", str(out), cwd=project).returncode == 0
    return load_profile(out)


def test_a_key_the_catalog_lacks_raises_a_key_error_that_says_so(profile: ProfileExport) -> None:
    with pytest.raises(UnknownMetric) as caught:
        profile.expected("train/grad_nrm")
    assert isinstance(caught.value, KeyError) and caught.value.key == "train/grad_nrm"
    assert str(caught.value) == (
        "'train/grad_nrm' is not a metric of the catalog of profile 'judged'; did you mean 'train/grad_norm'?"
    )
    with pytest.raises(KeyError, match=r"^'nope' is not a metric of the catalog of profile 'judged'$"):
        profile.expected("nope")


def test_a_documented_key_with_no_range_is_empty_and_a_pattern_s_key_is_documented(profile: ProfileExport) -> None:
    assert profile.expected("train/entropy_loss") == []
    assert [e.kind for e in profile.expected("train/grad_norm")] == ["band"]
    # eval/{dataset} documents eval/gsm8k (a profile ranges no pattern: no range, not unknown).
    assert profile.expected("eval/gsm8k") == [] and profile.metric("eval/aime").key == "eval/{dataset}"
