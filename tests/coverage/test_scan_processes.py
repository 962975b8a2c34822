"""Timers logged or only timed: the process model on small Miles-shaped trees (never a real checkout)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli, write_project
from metrics_manual.coverage.scan import scan
from miles_tree import NS, TIMER, tree

# A trainer class run as two roles: only the actor's path reaches the flush (log_perf_data_raw).
TRAINER = {
    **TIMER,
    "miles/backends/log_utils.py": """
        from miles.utils import train_metric_utils

        def log_perf_data(rollout_id, args):
            train_metric_utils.log_perf_data_raw(rollout_id, args)
        """,
    "miles/backends/actor.py": """
        from typing import Literal

        from miles.backends.log_utils import log_perf_data
        from miles.utils.timer import Timer, timer

        class TrainActor:
            def __init__(self, args, role: Literal["actor", "critic"]):
                self.role = role

            @with_defer(lambda: Timer().start("train_wait"))
            def init(self):
                pass

            def train(self, rollout_id, data):
                with timer("data_preprocess"):
                    pass
                if self.role == "critic":
                    with timer("critic_train"):
                        self.train_critic(rollout_id, data)
                else:
                    self.train_actor(rollout_id, data)

            def train_critic(self, rollout_id, data):
                pass

            def train_actor(self, rollout_id, data):
                with timer("actor_train"):
                    pass
                log_perf_data(rollout_id, self.args)

            @timer
            def sleep(self):
                pass
        """,
    "miles/ray/rollout_manager.py": """
        from miles.utils.metric_utils import dict_add_prefix
        from miles.utils.timer import timer

        class RolloutManager:
            def generate(self, rollout_id):
                with timer("rollout"):
                    pass
                tracking.log(self.args, dict_add_prefix({"rollout_time": 1.0}, "perf/"), step_key="rollout/step")

            def eval(self, rollout_id):
                with timer("eval_rollout"):
                    pass
        """,
    "miles/ray/group.py": """
        class Driver:
            def step(self, actors, manager, rollout_id):
                for a in actors:
                    a.init.remote()
                    a.train.remote(rollout_id, None)
                manager.generate.remote(rollout_id)
                manager.eval.remote(rollout_id)
                self._broadcast("sleep")
        """,
}


def test_a_timer_in_a_process_that_never_flushes_is_timed_not_logged(tmp_path: Path) -> None:
    result = scan(tree(tmp_path, TRAINER), NS)
    logged = set(result.keys())
    timed = result.timed_not_logged()
    assert {"perf/data_preprocess_time", "perf/actor_train_time", "perf/sleep_time", "perf/train_wait_time"} <= logged
    # The critic's branch never reaches the flush; the rollout manager never flushes at all.
    assert set(timed) == {"perf/critic_train_time", "perf/eval_rollout_time", "perf/rollout_time"} - logged
    assert "perf/critic_train_time" not in logged and "perf/eval_rollout_time" not in logged
    assert [e.runs_in for e in timed["perf/critic_train_time"]] == [("TrainActor (role critic)",)]
    assert [e.runs_in for e in timed["perf/eval_rollout_time"]] == [("RolloutManager",)]


def test_a_key_both_timed_in_vain_and_logged_from_a_dict_is_logged(tmp_path: Path) -> None:
    result = scan(tree(tmp_path, TRAINER), NS)
    # `timer("rollout")` runs in the rollout manager, which never flushes; the dict carries the key instead.
    assert [e.form for e in result.keys()["perf/rollout_time"]] == ["dict_add_prefix"]
    assert "perf/rollout_time" not in result.timed_not_logged()
    assert [e.logged for e in result.emissions if e.key == "perf/rollout_time" and e.form == "timer"] == [False]


def test_a_method_another_process_calls_is_an_entry_of_every_role(tmp_path: Path) -> None:
    # train_actor called from outside: the critic's process may run it too, and then it flushes.
    files = {**TRAINER, "miles/ray/debug.py": "def debug(a):\n    a.train_actor.remote(0, None)\n"}
    result = scan(tree(tmp_path, files), NS)
    assert result.unreadable == []
    assert "perf/critic_train_time" in result.keys()


def test_timed_not_logged_is_its_own_category_in_the_json(tmp_path: Path) -> None:
    catalog = """\
title: Metrics
code: {repository: radixark/miles, branch: main, commit: 0123abcd}
step_keys: {perf: rollout/step}
sections:
  - id: time
    title: Time
    metrics:
      - key: perf/actor_train_time
        meaning: the train block
      - key: perf/critic_train_time
        meaning: the critic's train block
"""
    project = write_project(tmp_path / "p", catalog=catalog, profiles={})
    miles = tree(tmp_path / "miles", TRAINER)
    ran = run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "json")
    out = json.loads(ran.stdout)
    assert ran.returncode == 1
    assert out["documented_and_emitted"] == ["perf/actor_train_time"]
    assert out["documented_not_emitted"] == []
    timed = {t["key"]: t for t in out["timed_not_logged"]}
    assert timed["perf/critic_train_time"]["documented"] is True
    assert timed["perf/critic_train_time"]["runs_in"] == ["TrainActor (role critic)"]
    assert timed["perf/eval_rollout_time"]["documented"] is False
    github = run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "github").stdout
    assert "perf/critic_train_time is documented" in github and "never logs its timers" in github


def test_a_key_marked_not_logged_passes_when_only_timed_and_fails_when_logged(tmp_path: Path) -> None:
    catalog = """\
title: Metrics
code: {repository: radixark/miles, branch: main, commit: 0123abcd}
step_keys: {perf: rollout/step}
sections:
  - id: time
    title: Time
    metrics:
      - key: perf/critic_train_time
        meaning: the critic's train block
        not_logged: the critic's process never flushes its timers
      - key: perf/eval_rollout_time
        meaning: the eval rollout
        not_logged: the rollout manager never flushes its timers
      - key: perf/eval_time
        meaning: gone from the code
        not_logged: no timer of that name
"""
    project = write_project(tmp_path / "p", catalog=catalog, profiles={})
    miles = tree(tmp_path / "miles", TRAINER)
    out = json.loads(run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "json").stdout)
    assert {t["key"]: t["marked"] for t in out["timed_not_logged"]} == {
        "perf/critic_train_time": True,
        "perf/eval_rollout_time": True,
    }
    assert [n["key"] for n in out["not_logged"]] == [
        "perf/critic_train_time",
        "perf/eval_rollout_time",
        "perf/eval_time",
    ]
    assert out["documented_not_emitted"] == [] and out["documented_and_emitted"] == []
    github = run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "github").stdout
    assert "perf/critic_train_time" not in github and "perf/eval_time" not in github  # the tree's other timers remain
    logged_after_all = catalog.replace("perf/eval_time", "perf/actor_train_time")
    project = write_project(tmp_path / "p2", catalog=logged_after_all, profiles={})
    out = json.loads(run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "json").stdout)
    assert [b["key"] for b in out["marked_but_logged"]] == ["perf/actor_train_time"]
    github = run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "github").stdout
    assert "perf/actor_train_time is logged here, but ranges/catalog.yaml marks it not logged" in github
