"""A metric the catalog marks `not_logged` (no profile may range it: MM114) in every export: said so where
the export lists metrics (JSON, YAML, CSV), and absent where it would be watched or drawn (rules, dashboard,
TensorBoard)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from conftest import TINY_CATALOG, run_cli, write_project
from metrics_manual.model.gauges import gauge_name
from metrics_manual.model.schema import ProfileExport

KEY = "train/critic_time"
WHY = "=the timer runs in the critic, which never flushes its timers"  # a formula start: kept inert in the CSV
CATALOG = TINY_CATALOG.replace(
    "      - key: train/pg_clipfrac\n",
    f"      - key: {KEY}\n        meaning: the critic's training\n        unit: s\n        not_logged: '{WHY}'\n"
    "      - key: train/pg_clipfrac\n",
)


def export(root: Path, fmt: str) -> str:
    ran = run_cli("export", "--root", str(root), "--profile", "tiny", "--format", fmt)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_a_metric_not_logged_is_marked_in_the_exports_that_list_metrics(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", CATALOG)
    text = export(root, "json")
    doc = ProfileExport.model_validate_json(text)  # what judge --profile FILE loads
    assert [(m.key, m.not_logged, m.expectations) for m in doc.metrics if m.not_logged] == [(KEY, WHY, [])]
    for data in (json.loads(text), yaml.safe_load(export(root, "yaml"))):
        entries = {m["key"]: m for m in data["metrics"]}
        assert entries[KEY]["not_logged"] == WHY and entries[KEY]["expectations"] == []
        assert [k for k, m in entries.items() if "not_logged" in m] == [KEY]
    rows = list(csv.DictReader(io.StringIO(export(root, "csv"), newline="")))
    assert [(r["key"], r["kind"], r["not_logged"]) for r in rows if r["not_logged"]] == [(KEY, "none", "'" + WHY)]
    assert len({len(r) for r in rows}) == 1 and None not in rows[0]  # every row has every column, no more


def test_a_metric_not_logged_is_never_watched_live(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", CATALOG)
    rules = export(root, "prometheus")
    dashboard = export(root, "grafana")
    # The other metrics are watched (so the exports are not empty); this one has no rule, no panel, no query.
    assert "train/grad_norm" in rules and gauge_name("train/grad_norm") in dashboard
    for text in (rules, dashboard):
        assert KEY not in text and gauge_name(KEY) not in text


def test_a_metric_not_logged_is_not_drawn_in_a_tensorboard_folder(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")  # the tensorboard extra: the test extra holds it
    root = write_project(tmp_path / "p", CATALOG)
    folder = tmp_path / "tb"
    ran = run_cli("export", "--root", str(root), "--profile", "tiny", "--format", "tensorboard", "-o", str(folder))
    assert ran.returncode == 0, ran.stderr
    # No run of bounds, no chart: the event files' tags and the layout's charts are the keys themselves.
    written = b"".join(f.read_bytes() for f in sorted(folder.rglob("*")) if f.is_file())
    assert b"train/grad_norm" in written and KEY.encode() not in written
