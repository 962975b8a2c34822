"""Keys built from dicts, roles and callers' arguments, on small Miles-shaped trees (never a real checkout)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli, write_project
from metrics_manual.coverage.scan import scan
from miles_tree import NS, tree


def logged(root: Path) -> dict[str, str]:
    return {k: v[0].form for k, v in scan(root, NS).keys().items()}


def test_rollout_keys_of_a_typed_batch_minus_its_skip_list(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "miles/utils/types.py": "RolloutBatch = dict[str, list]\n",
            "miles/ray/conversion.py": """
                def package(data, partitions):
                    shards = []
                    for p in partitions:
                        rollout_data = {"partition": p}
                        for key in ["tokens", "raw_reward", "response_lengths"]:
                            rollout_data[key] = data[key]
                        shards.append(rollout_data)
                    return shards

                def process_shard(rollout_data):
                    rollout_data.pop("partition")
                    return rollout_data
                """,
            "miles/backends/loss.py": """
                def compute_advantages_and_returns(args, rollout_data):
                    rollout_data["advantages"] = [1.0]
                """,
            "miles/backends/log_utils.py": """
                from miles.utils.types import RolloutBatch

                def gather_log_data(metric_name, args, log_dict):
                    reduced = dict(log_dict)
                    out = {f"{metric_name}/{key}": v for key, v in reduced.items()}
                    tracking.log(args, out, step_key="rollout/step")

                def log_rollout_data(rollout_id, args, rollout_data: RolloutBatch):
                    log_dict = {}
                    for key, val in rollout_data.items():
                        if key in ["tokens", "loss_masks"]:
                            continue
                        if key in ["log_probs", "advantages"]:
                            val = sum(val)
                        log_dict[key] = val
                    gather_log_data("rollout", args, log_dict)

                def log_eval(args, data):
                    out = {}
                    for key in data:
                        out[f"eval/{key}"] = 1
                    tracking.log(args, out, step_key="eval/step")

                def build(data):
                    data["untyped"] = 1
                """,
        },
    )
    assert scan(root, NS).unreadable == []
    keys = logged(root)
    rollout = {k for k in keys if k.startswith("rollout/") and k != "rollout/step"}
    # written in the shards and by the trainer, named by the loop; skipped and popped keys left out
    assert rollout == {"rollout/raw_reward", "rollout/response_lengths", "rollout/advantages", "rollout/log_probs"}
    assert keys["rollout/raw_reward"] == "prefix_argument"
    # an untyped parameter is not every dict of its name: its keys stay an open family
    assert "eval/untyped" not in keys
    assert [e.open for e in scan(root, NS).keys()["eval/{key}"]] == [True]


ROLES = {
    "miles/backends/losses.py": """
        def policy_loss_function(args, batch):
            return 0.0, {"pg_loss": 1.0}

        def value_loss_function(args, batch):
            return 0.0, {"value_loss": 1.0}

        def get_loss_function(args):
            match args.loss_type:
                case "policy_loss":
                    return policy_loss_function
                case "value_loss":
                    return value_loss_function
        """,
    "miles/backends/log_utils.py": """
        def log_train_step(args, loss_dict, grad_norm, role="actor", extra_metrics=None):
            role_tag = "" if role == "actor" else f"{role}-"
            out = {f"train/{role_tag}{key}": v for key, v in loss_dict.items()}
            out[f"train/{role_tag}grad_norm"] = grad_norm
            if extra_metrics:
                for key, val in extra_metrics.items():
                    out[f"train/{role_tag}{key}"] = val
            tracking.log(args, out, step_key="train/step")
        """,
    "miles/backends/model.py": """
        from miles.backends.log_utils import log_train_step

        def train(args, model):
            role = getattr(model, "role", "actor")
            extra = {"lr": 0.1}
            log_train_step(args, {}, 1.0, role=role, extra_metrics=extra)
        """,
    "miles/backends/fsdp.py": """
        from miles.backends.log_utils import log_train_step

        def fsdp_step(args):
            log_train_step(args, {}, 1.0, role="actor", extra_metrics={"fsdp_lr": 0.1})
        """,
    "miles/backends/actor.py": """
        from typing import Literal

        from miles.backends.model import train

        class TrainActor:
            def __init__(self, args, role: Literal["actor", "critic"]):
                self.role = role

            def train(self, rollout_id):
                if self.role == "critic":
                    self.train_critic(rollout_id)
                else:
                    train(self.args, self.model)

            def train_critic(self, rollout_id):
                self.args.loss_type = "value_loss"
                train(self.args, self.model)
        """,
    "miles/ray/group.py": """
        def step(actors):
            for a in actors:
                a.train.remote(0)
        """,
}


def test_role_prefixed_loss_keys(tmp_path: Path) -> None:
    keys = logged(tree(tmp_path, ROLES))
    train = {k for k in keys if k.startswith("train/") and k != "train/step"}
    assert train == {
        "train/pg_loss",  # the actor runs the loss functions no role selects in code
        "train/critic-value_loss",  # the critic assigns loss_type "value_loss"
        "train/grad_norm",
        "train/critic-grad_norm",
        "train/lr",
        "train/critic-lr",
        "train/fsdp_lr",  # a call that passes role="actor": that role's tag only
    }
    assert keys["train/critic-value_loss"] == "loss_function"


def test_a_role_prefixed_loss_key_documented_is_seen(tmp_path: Path) -> None:
    catalog = """\
title: Metrics
code: {repository: radixark/miles, branch: main, commit: 0123abcd}
step_keys: {train: train/step}
sections:
  - id: train
    title: Train
    metrics:
      - key: train/critic-value_loss
        meaning: the critic's value loss
      - key: train/value_loss
        meaning: not a key Miles logs
"""
    project = write_project(tmp_path / "p", catalog=catalog, profiles={})
    miles = tree(tmp_path / "miles", ROLES)
    out = json.loads(run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "json").stdout)
    assert out["documented_and_emitted"] == ["train/critic-value_loss"]
    assert out["documented_not_emitted"] == [{"key": "train/value_loss"}]


def test_parameters_filled_from_callers_and_dicts_from_tuples(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "miles/utils/metric_utils.py": """
                def dict_add_prefix(d, prefix):
                    return {f"{prefix}{k}": v for k, v in d.items()}
                """,
            "miles/backends/actor.py": """
                from miles.utils.timer import timer

                class Actor:
                    def compute_log_prob(self, data, store_prefix=""):
                        with timer(f"{store_prefix}log_probs"):
                            pass

                    def train(self, data):
                        self.compute_log_prob(data, store_prefix="ref_")
                        self.compute_log_prob(data)

                def nobody_calls(name):
                    with timer(f"{name}_step"):
                        pass
                """,
            "miles/backends/corrections.py": """
                def vanilla_tis_function(args, pg_loss):
                    metrics = {"tis": 1.0, "tis_clipfrac": 0.0}
                    return pg_loss, None, metrics
                """,
            "miles/backends/losses.py": """
                from miles.backends.corrections import vanilla_tis_function
                from miles.utils.metric_utils import dict_add_prefix

                def policy_loss_function(args, batch):
                    if args.custom_tis_function_path is not None:
                        tis_func = load_function(args.custom_tis_function_path)
                    else:
                        tis_func = vanilla_tis_function
                    pg_loss, masks, tis_metrics = tis_func(args, 0.0)
                    reported = {"pg_loss": pg_loss}
                    for metric_key, value in tis_metrics.items():
                        key_name = f"{metric_key}"
                        reported[key_name] = value
                    return pg_loss, reported

                def log_stats(args, stats):
                    tracking.log(args, dict_add_prefix({"mean": 1.0, "max": 2.0}, "rollout/response_len/"))
                """,
        },
    )
    result = scan(root, NS)
    emitted = {e.key: e for e in result.emissions}
    assert {"perf/log_probs_time", "perf/ref_log_probs_time"} <= set(emitted)
    assert emitted["perf/{name}_step_time"].open  # no caller: the family, never a key
    assert {"train/tis", "train/tis_clipfrac", "train/pg_loss"} <= set(emitted)
    assert emitted["rollout/response_len/mean"].form == "dict_add_prefix"
    assert "rollout/response_len/max" in emitted


def test_not_visible_keys_have_their_own_field_and_a_stale_entry_fails(tmp_path: Path) -> None:
    catalog = """\
title: Metrics
code: {repository: radixark/miles, branch: main, commit: 0123abcd}
step_keys: {perf: rollout/step}
sections:
  - id: time
    title: Time
    metrics:
      - key: perf/seen_time
        meaning: a literal key
      - key: perf/custom_time
        meaning: named by a custom function
"""
    project = write_project(tmp_path / "p", catalog=catalog, profiles={})
    coverage = project / "ranges" / "coverage.yaml"
    coverage.write_text(
        "commit: 0123abcd\nnot_visible: [{key: perf/custom_time, reason: a custom log function names it}]\n", "utf-8"
    )
    miles = tree(tmp_path / "miles", {"miles/a.py": 'def f(args):\n    d = {"perf/seen_time": 1}\n'})
    ran = run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "json")
    out = json.loads(ran.stdout)
    assert ran.returncode == 0
    assert out["not_visible"] == [{"key": "perf/custom_time", "reason": "a custom log function names it"}]
    assert out["documented_not_emitted"] == []
    assert out["documented_concrete"] == {"total": 2, "seen": 1}
    coverage.write_text("commit: 0123abcd\nnot_visible: [{key: perf/seen_time, reason: once hidden}]\n", "utf-8")
    ran = run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "json")
    out = json.loads(ran.stdout)
    assert ran.returncode == 1
    assert out["visible_after_all"] == ["perf/seen_time"]
    assert out["documented_not_emitted"] == [{"key": "perf/custom_time"}]
