"""The CI history's reader: a series per metric, no time (so a resumed process's file cannot be ordered)."""

from __future__ import annotations

import pytest

from metrics_manual.api import judge
from metrics_manual.model.schema import ProfileExport
from miles_runs import MILES, bad, miles_profile, read, result


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return miles_profile(tmp_path_factory)


def test_a_ci_history_of_a_resumed_process_cannot_be_ordered_and_is_a_conflict(profile: ProfileExport) -> None:
    # CiHistoryBackend writes no time: its resumed process's file (a new pid-uuid.jsonl) is not known to be later.
    paths = [MILES / "resume/own-file/first/ci-history", MILES / "resume/own-file/resumed/ci-history"]
    j = judge(profile, read(paths, profile))
    assert bad(j)["train/grad_norm"] == "error" and j.exit_code != 0
    reason = result(j, "train/grad_norm").reason
    files = [f for p in paths for f in p.iterdir()]
    assert len(files) == 2 and "two files disagree at 20 steps" in reason and all(str(f) in reason for f in files)
