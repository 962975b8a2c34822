"""Helpers for the tests that run exported alerting rules through `promtool test rules`."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path
from typing import Any

import yaml


def held(v: float, samples: int = 4) -> str:
    """A value held over `samples` samples, in promtool's series notation (which has no NaNx3)."""
    return " ".join([sample(v)] * samples)


def sample(v: float | None) -> str:
    """One sample in promtool's series notation: `_` for none (the gauge not yet set)."""
    return "_" if v is None else "NaN" if math.isnan(v) else repr(v)


def go_number(v: float) -> str:
    """A float64 as Prometheus prints $value (Go's shortest form)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e21 else repr(float(v))


def expand(text: str, run: str, value: float) -> str:
    """The annotation as Prometheus renders it for one alert."""
    return (
        text.replace("{{ $labels.run_name }}", run)
        .replace("{{ $value }}", go_number(value))
        .replace('{{ "{{" }}', "{{")
    )


def doc_rules(rule_file: Path) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = yaml.safe_load(rule_file.read_text("utf-8"))["groups"][0]["rules"]
    return rules


def fired(rule: dict[str, Any], run: str, value: float) -> dict[str, Any]:
    """The alert `rule` gives for `run` whose gauge reads `value`, as promtool's exp_alerts holds it."""
    return {
        "exp_labels": {**rule["labels"], "run_name": run},
        "exp_annotations": {k: expand(v, run, value) for k, v in rule["annotations"].items()},
    }


def promtool_test(promtool: str, rule_file: Path, tests: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    """`promtool test rules` on `tests` (each with interval, input_series, alert_rule_test), every minute evaluated."""
    spec = {"rule_files": [str(rule_file)], "evaluation_interval": "1m", "tests": tests}
    test_file = rule_file.with_suffix(".test.yml")
    test_file.write_text(yaml.safe_dump(spec, sort_keys=False), "utf-8")
    return subprocess.run([promtool, "test", "rules", str(test_file)], capture_output=True, text=True)
