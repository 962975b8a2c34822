"""The coverage scan on small Miles-shaped trees written here (never a real checkout), and its comparison."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run_cli, write_project
from metrics_manual.coverage.scan import scan
from miles_tree import NS, tree


def keys(root: Path) -> dict[str, str]:
    return {e.key: e.form for e in scan(root, NS).emissions}


def test_literal_and_fstring_keys(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "miles/a.py": """
        def log(args, label):
            d = {"perf/step_time": 1.0, "rollout/step": 3}
            d[f"perf/cpu_memory_{label}_gb"] = 2.0
            d["not_a_namespace/x"] = 1
            tracking.log(args, d, step_key="rollout/step")
        """
        },
    )
    assert keys(root) == {
        "perf/step_time": "literal",
        "rollout/step": "literal",
        "perf/cpu_memory_{label}_gb": "fstring",
    }


def test_dict_add_prefix_over_a_dict_built_in_the_same_function_and_in_a_callee(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "miles/utils/metric_utils.py": """
            def dict_add_prefix(d, prefix):
                return {f"{prefix}{k}": v for k, v in d.items()}

            def compute_statistics(values):
                return {"mean": 1, "max": 2}
            """,
            "miles/ray/metrics.py": """
            from miles.utils.metric_utils import compute_statistics, dict_add_prefix

            def _samples(samples):
                log_dict = {}
                log_dict |= dict_add_prefix(compute_statistics(samples), "response_len/")
                log_dict["truncated_ratio"] = 0.5
                return log_dict

            def log_rollout_data(samples):
                out = dict_add_prefix(_samples(samples), "rollout/")
                out |= dict_add_prefix({"rollout_time": 1.0}, "perf/")
            """,
        },
    )
    got = keys(root)
    assert {k for k, f in got.items() if f == "dict_add_prefix"} == {
        "rollout/response_len/mean",
        "rollout/response_len/max",
        "rollout/truncated_ratio",
        "perf/rollout_time",
    }


def test_keys_of_the_dict_a_loss_function_returns(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "miles/losses.py": """
        def policy_loss_function(args, batch):
            reported = {"loss": 1, "pg_loss": 2}
            if args.use_kl_loss:
                reported["kl_loss"] = 3
            return 0.0, reported

        def helper():
            return 0.0, {"keys": [], "values": 1}, {"not": 1}
        """
        },
    )
    assert keys(root) == {
        "train/loss": "loss_function",
        "train/pg_loss": "loss_function",
        "train/kl_loss": "loss_function",
    }


def test_timer_names_become_perf_keys(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "miles/actor.py": """
        class Actor:
            @with_defer(lambda: Timer().start("train_wait"))
            def train(self, prefix):
                with timer("actor_train"):
                    pass
                with timer(f"{prefix}log_probs"):
                    pass

            @timer
            def update_weights(self):
                pass
        """
        },
    )
    assert keys(root) == {
        "perf/train_wait_time": "timer",
        "perf/actor_train_time": "timer",
        "perf/{prefix}log_probs_time": "timer",
        "perf/update_weights_time": "timer",
    }


def test_a_function_that_prefixes_a_dict_argument(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "miles/log_utils.py": """
        def gather_log_data(metric_name, log_dict):
            reduced = dict(log_dict)
            return {f"{metric_name}/{key}": v for key, v in reduced.items()}

        def log_extra(args):
            log_dict = {}
            log_dict["round_number_mean"] = 1.0
            gather_log_data("rollout", log_dict)
        """
        },
    )
    assert keys(root) == {"rollout/round_number_mean": "prefix_argument"}


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ('path = f"rollout/global_dataset_state_dict_{rollout_id}.pt"', "path"),
        ('logger.info(f"eval/{key}: {n} samples")', "log_message"),
        ('wandb.define_metric("train/*", step_metric="train/step")', "glob"),
        ('if "perf/train_time" in d: pass', "read"),
    ],
)
def test_false_positives_are_excluded_by_rule(tmp_path: Path, code: str, rule: str) -> None:
    root = tree(tmp_path, {"miles/x.py": f"def f(d, key, n, rollout_id):\n    {code}\n"})
    result = scan(root, NS)
    assert result.emissions == []
    assert rule in {e.rule for e in result.excluded}


def test_tests_examples_docs_and_js_are_not_read(tmp_path: Path) -> None:
    body = 'd = {"perf/hidden_time": 1}\n'
    root = tree(
        tmp_path,
        {
            "tests/test_a.py": body,
            "examples/run.py": body,
            "docs/conf.py": body,
            "miles/dashboard/app.js": "const k = {'perf/hidden_time': 1};\n",
            "miles/ok.py": 'd = {"perf/seen_time": 1}\n',
        },
    )
    assert keys(root) == {"perf/seen_time": "literal"}


def test_unparsable_files_are_reported_not_raised(tmp_path: Path) -> None:
    root = tree(tmp_path, {"miles/bad.py": "def (:\n", "miles/ok.py": 'd = {"perf/a_time": 1}\n'})
    result = scan(root, NS)
    assert [(u.path, u.line) for u in result.unreadable] == [("miles/bad.py", 1)]
    assert [e.key for e in result.emissions] == ["perf/a_time"]


CATALOG = """\
title: Metrics
code: {repository: radixark/miles, branch: main, commit: 0123abcd}
step_keys: {perf: rollout/step, eval: eval/step}
sections:
  - id: time
    title: Time
    metrics:
      - key: perf/step_time
        meaning: the full step
        origin: {path: miles/train_metric_utils.py, symbol: log_perf_data_raw, computed: a sum, logged: every step}
        renamed_from: [{key: perf/total_train_time, commit: 26695d7b}]
      - key: perf/gone_time
        meaning: a timer Miles removed
      - key: "eval/{dataset}"
        meaning: the eval reward
"""

MILES = {
    "miles/train_metric_utils.py": """
        def log_perf_data_raw(args):
            d = {"perf/step_time": 1, "rollout/step": 1}
            d["perf/new_\\x1b[31m_time"] = 2
        """,
    "miles/eval.py": """
        def log_eval(data):
            for key in data.keys():
                out = {f"eval/{key}": 1}
        """,
}


def test_coverage_command_json_and_exit_codes(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", catalog=CATALOG, profiles={})
    miles = tree(tmp_path / "miles", MILES)
    ran = run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "json")
    assert ran.returncode == 1
    out = json.loads(ran.stdout)
    assert set(out) >= {"commit", "documented_and_emitted", "emitted_not_documented", "documented_not_emitted"}
    assert out["documented_and_emitted"] == ["perf/step_time", "eval/{dataset}"]
    assert [u["key"] for u in out["emitted_not_documented"]] == ["perf/new_\x1b[31m_time"]
    assert [g["key"] for g in out["documented_not_emitted"]] == ["perf/gone_time"]
    text = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    assert "\x1b" not in text.stdout and "perf/new_\\x1b[31m_time" in text.stdout


def test_a_teams_own_keys_are_not_held_against_miles(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", catalog=CATALOG, profiles={})
    (project / "ranges" / "catalogs").mkdir()
    (project / "ranges" / "catalogs" / "moe-team.yaml").write_text(
        "team: the MoE team\n"
        "code: {repository: moe-lab/miles, branch: moe, commit: abcdef12}\n"
        "step_keys: {moe: train/step}\n"
        "sections:\n"
        "  - id: moe\n"
        "    title: MoE\n"
        "    metrics:\n"
        "      - key: perf/fork_only_time\n"
        "        meaning: a timer of the fork\n"
        "        origin: {path: miles/moe.py, symbol: log_moe, computed: a sum, logged: every step}\n"
        "      - {key: moe/expert_utilization, meaning: the share of experts used}\n",
        "utf-8",
    )
    miles = tree(tmp_path / "miles", MILES)
    out = json.loads(run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "json").stdout)
    # As without the team's catalog: its keys are neither Miles' keys gone, nor its origins Miles' code.
    assert [g["key"] for g in out["documented_not_emitted"]] == ["perf/gone_time"]
    assert "miles/moe.py" not in json.dumps(out["evidence"])


def test_known_keys_in_coverage_yaml_pass(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", catalog=CATALOG, profiles={})
    (project / "ranges" / "coverage.yaml").write_text(
        "commit: 0123abcd\n"
        "undocumented: [{key: 'perf/new_{x}_time', reason: a debug timer}]\n"
        "not_visible: [{key: perf/gone_time, reason: named at run time}]\n",
        "utf-8",
    )
    miles = tree(tmp_path / "miles", MILES)
    ran = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    assert ran.returncode == 0, ran.stdout


def catalog_annotations(project: Path, miles: Path) -> list[tuple[str, int, int, str]]:
    """(code, line, col, message) of each annotation `coverage --format github` puts on the catalog's origins
    (the checkout's unknown commit and the places without evidence, warnings, aside)."""
    ran = run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "github")
    found = re.findall(r"^::\w+ file=([^,]+),line=(\d+),col=(\d+),title=(MM\d+) [^:]*::(.*)$", ran.stdout, re.M)
    return [
        (code, int(line), int(col), message)
        for file, line, col, code, message in found
        if file == "ranges/catalog.yaml" and code not in ("MM602", "MM616", "MM617")
    ]


def test_a_moved_file_or_symbol_is_one_finding_at_the_field_to_correct(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", catalog=CATALOG, profiles={})
    origin = CATALOG.splitlines()[9]  # perf/step_time's origin: a flow mapping, its fields on line 10
    path, symbol = (1 + origin.index(value) for value in ("miles/train_metric_utils.py", "log_perf_data_raw"))
    # The file moved (its keys are still logged): one finding, at the origin's path.
    moved = {
        "miles/utils/train_metric_utils.py": MILES["miles/train_metric_utils.py"],
        "miles/eval.py": MILES["miles/eval.py"],
    }
    assert catalog_annotations(project, tree(tmp_path / "m1", moved)) == [
        ("MM611", 10, path, "perf/step_time: origin: miles/train_metric_utils.py is not in the checkout")
    ]
    # The function renamed: one finding, at the origin's symbol.
    renamed = {
        **MILES,
        "miles/train_metric_utils.py": MILES["miles/train_metric_utils.py"].replace("log_perf_data_raw", "log_perf"),
    }
    ((code, line, col, message),) = catalog_annotations(project, tree(tmp_path / "m2", renamed))
    assert (code, line, col) == ("MM612", 10, symbol)
    assert message.startswith(
        "perf/step_time: origin: 'log_perf_data_raw' is not defined in miles/train_metric_utils.py"
    )
    # A method of a class the file does not have: the whole dotted name is held, not only its last part.
    dotted = write_project(
        tmp_path / "q",
        catalog=CATALOG.replace("symbol: log_perf_data_raw", "symbol: Perf.log_perf_data_raw"),
        profiles={},
    )
    assert [a[:3] for a in catalog_annotations(dotted, tree(tmp_path / "m3", MILES))] == [("MM612", 10, symbol)]
    # The JSON says so once too: in the evidence part, no other field of moved places.
    out = json.loads(
        run_cli("coverage", "--root", str(project), "--miles", str(tmp_path / "m1"), "--format", "json").stdout
    )
    assert "moved" not in out
    assert [(c["place"], [m["code"] for m in c["misses"]]) for c in out["evidence"]["checked"]] == [
        ("origin", ["MM611"])
    ]


def test_a_renamed_key_is_still_documented(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", catalog=CATALOG, profiles={})
    old = {
        "miles/train_metric_utils.py": 'def log_perf_data_raw():\n    d = {"perf/total_train_time": 1}\n',
        "miles/eval.py": MILES["miles/eval.py"],
    }
    out = json.loads(
        run_cli(
            "coverage", "--root", str(project), "--miles", str(tree(tmp_path / "m", old)), "--format", "json"
        ).stdout
    )
    assert out["emitted_not_documented"] == []
    assert "perf/step_time" in [g["key"] for g in out["documented_not_emitted"]]


def test_bad_path_exits_2(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", catalog=CATALOG, profiles={})
    assert run_cli("coverage", "--root", str(project), "--miles", str(tmp_path / "nowhere")).returncode == 2


def test_key_patterns_match_one_segment() -> None:
    from metrics_manual.model.keys import KeySet, overlap

    ks = KeySet(["eval/{dataset}", "train/grad_norm"])
    assert ks.match("eval/aime") == "eval/{dataset}"
    assert ks.match("eval/aime/extra") is None
    assert ks.match("train/grad_norm") == "train/grad_norm"
    assert overlap("train/{role}grad_norm", "train/grad_norm")
    assert not overlap("perf/a_time", "perf/b_time")
