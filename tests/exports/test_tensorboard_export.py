"""`export --format tensorboard -o DIR`: a log folder with each range's bounds over the steps it covers and a
custom-scalars layout, read back with TensorBoard's own EventAccumulator and with `judge`; written whole."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import TINY_CATALOG, TINY_PROFILE, run_cli, snapshot, write_project
from metrics_manual.exports import folder
from metrics_manual.exports.folder import MARKER

pytest.importorskip("tensorboard")  # the tensorboard extra: the test extra holds it

CATALOG = (
    TINY_CATALOG.replace(
        "      - key: rollout/raw_reward\n",
        "      - key: rollout/raw_reward\n        renamed_from: [{key: rollout/reward_old, commit: abcdef12}]\n",
    )
    .replace(
        "      - key: train/pg_clipfrac\n",
        "      - key: train/ppo_kl\n        meaning: the KL of the update\n"
        '      - {key: "train/k.A-b@c", meaning: a key of every character}\n'
        "      - key: train/pg_clipfrac\n",
    )
    .replace(
        "step_keys: {train: train/step, rollout: rollout/step}",
        "step_keys: {train: train/step, rollout: rollout/step, perf: rollout/step}",
    )
    + "  - id: perf\n    title: Performance\n    metrics:\n"
    "      - {key: perf/train_wait_time, meaning: the wait before training, unit: s}\n"
)
PROFILE = (
    TINY_PROFILE.split("expectations:")[0].replace("steps: 10", "steps: 60")
    + """\
expectations:
  rollout/raw_reward:
    - {kind: band, min: 0.5, max: 0.9, steps: 48}
  rollout/response_lengths:
    - {kind: median, value: 400, steps: 48, tolerance: 0.1}
  train/grad_norm:
    - {kind: band, min: 0.25, max: 4.5}
    - {kind: band, min: 1, max: 3, window: {first: 2}}
  train/ppo_kl:
    - {kind: exact, value: 0, at: {step: 0}}
  "train/k.A-b@c":
    - {kind: band, min: 0.0136}
  train/pg_clipfrac:
    - {kind: exact, value: 0, at: every_step}
  train/weight/*:
    - {kind: band, min: 0, max: 0.0164}
  perf/train_wait_time:
    - {kind: presence, at: every_step}
"""
)
EVERY, FIRST_48 = list(range(60)), list(range(48))  # the profile's runs last 60 steps
# (run folder, tag) -> the range it draws (metric, index of the expectation), the bound and its steps.
DRAWN: dict[tuple[str, str], tuple[tuple[str, int], float, list[int]]] = {
    ("min", "rollout/raw_reward"): (("rollout/raw_reward", 0), 0.5, FIRST_48),
    ("max", "rollout/raw_reward"): (("rollout/raw_reward", 0), 0.9, FIRST_48),
    ("median", "rollout/response_lengths"): (("rollout/response_lengths", 0), 400, FIRST_48),
    ("median-low", "rollout/response_lengths"): (("rollout/response_lengths", 0), 360, FIRST_48),
    ("median-high", "rollout/response_lengths"): (("rollout/response_lengths", 0), 440, FIRST_48),
    ("min", "train/grad_norm"): (("train/grad_norm", 0), 0.25, EVERY),
    ("max", "train/grad_norm"): (("train/grad_norm", 0), 4.5, EVERY),
    ("min-2", "train/grad_norm"): (("train/grad_norm", 1), 1, [0, 1]),
    ("max-2", "train/grad_norm"): (("train/grad_norm", 1), 3, [0, 1]),
    ("exact", "train/ppo_kl"): (("train/ppo_kl", 0), 0, [0]),
    ("min", "train/k.A-b@c"): (("train/k.A-b@c", 0), 0.0136, EVERY),
    ("exact", "train/pg_clipfrac"): (("train/pg_clipfrac", 0), 0, EVERY),
    ("min", "train/weight/mean"): (("train/weight/mean", 0), 0, EVERY),
    ("max", "train/weight/mean"): (("train/weight/mean", 0), 0.0164, EVERY),
    ("min", "train/weight/max"): (("train/weight/max", 0), 0, EVERY),
    ("max", "train/weight/max"): (("train/weight/max", 0), 0.0164, EVERY),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "p", CATALOG, {"tiny": PROFILE})


def export(project: Path, out: Path) -> Any:
    return run_cli("export", "--root", str(project), "--profile", "tiny", "--format", "tensorboard", "-o", str(out))


def read_folder(folder: Path) -> tuple[dict[tuple[str, str], list[tuple[int, float]]], Any]:
    """Every (run, tag) -> its (step, value) points, and the custom-scalars layout, as TensorBoard reads them."""
    from tensorboard.backend.event_processing.plugin_event_accumulator import EventAccumulator
    from tensorboard.plugins.custom_scalar import layout_pb2
    from tensorboard.util import tensor_util

    series: dict[tuple[str, str], list[tuple[int, float]]] = {}
    layout = None
    for run in sorted(p.name for p in folder.iterdir() if p.is_dir()):
        acc = EventAccumulator(str(folder / run), size_guidance={"tensors": 0})  # 0: every point, none sampled away
        acc.Reload()
        for tag in acc.Tags()["tensors"]:
            events = acc.Tensors(tag)
            if tag == "custom_scalars__config__":
                layout = layout_pb2.Layout.FromString(tensor_util.make_ndarray(events[0].tensor_proto).item())
                continue
            series[run, tag] = [(e.step, float(tensor_util.make_ndarray(e.tensor_proto).item())) for e in events]
    return series, layout


def test_each_bound_is_drawn_over_the_steps_its_range_covers(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "manual"
    result = export(project, out)
    assert result.returncode == 0, result.stderr
    series, _ = read_folder(out)
    assert set(series) == set(DRAWN)  # presence draws nothing
    for (run, tag), (_, bound, steps) in DRAWN.items():
        points = series[run, tag]
        assert [s for s, _ in points] == steps, (run, tag)
        values = {v for _, v in points}
        assert len(values) == 1, (run, tag)
        value = values.pop()
        # The float32 nearest the bound, on the inside of its range (a min rounded up, a max down).
        assert abs(value - bound) <= 2**-23 * abs(bound), (run, tag, value)  # one float32 step
        if run.startswith(("min", "median-low")):
            assert value >= bound, (run, tag, value)
        if run.startswith(("max", "median-high")):
            assert value <= bound, (run, tag, value)


def test_the_layout_has_a_chart_per_metric_that_matches_its_tags_only(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "manual"
    assert export(project, out).returncode == 0
    series, layout = read_folder(out)
    assert layout is not None
    charts = {c.title: list(c.multiline.tag) for cat in layout.category for c in cat.chart}
    assert [cat.title for cat in layout.category] == ["Rollout", "Training"]  # sections with a drawn range, in order
    assert list(charts) == [
        "rollout/raw_reward",
        "rollout/response_lengths",
        "train/grad_norm",
        "train/ppo_kl",
        "train/k.A-b@c",
        "train/pg_clipfrac",
        "train/weight/mean",
        "train/weight/max",
    ]
    tags = {tag for _, tag in series}
    # The run's own tags, the bounds' tags and tags a sloppy regex would catch.
    others = [
        "rollout/raw_reward_std",
        "rollout/raw_rewardX",
        "xrollout/raw_reward",
        "train/kxA-b@c",
        "train/k.A-b@c/x",
    ]
    for title, (regex,) in ((t, r) for t, r in charts.items()):
        # TensorBoard's custom-scalars plugin: re.compile(regex).match(tag).
        matched = {t for t in [*tags, *others, "rollout/reward_old"] if re.compile(regex).match(t)}
        former = {"rollout/reward_old"} if title == "rollout/raw_reward" else set()
        assert matched == {title} | former, (title, regex)


def test_judge_reads_each_bound_as_in_its_range(project: Path, tmp_path: Path) -> None:
    """Each run folder of bounds, judged as a run: every range whose bound it holds passes, on every step
    it covers (a max of 0.0164 written as TensorBoard's own writers round it, up, would fail)."""
    out = tmp_path / "manual"
    assert export(project, out).returncode == 0
    for run in sorted({run for run, _ in DRAWN}):
        result = run_cli("judge", "--root", str(project), "--profile", "tiny", "--format", "json", str(out / run))
        assert result.returncode in (0, 1), result.stderr  # the folder holds one kind of bound: others fail
        verdicts = {(r["metric"], r["expectation"]): r for r in json.loads(result.stdout)["results"]}
        for (drawn_run, _), (judged, _, steps) in DRAWN.items():
            if drawn_run == run:
                r = verdicts[judged]
                assert (r["verdict"], r["steps_judged"]) == ("pass", len(steps)), (run, judged, r["reason"])


def test_same_profile_gives_the_same_bytes_and_replaces_an_earlier_export(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "manual"
    assert export(project, out).returncode == 0
    first = snapshot(out)
    assert MARKER in first and all(p == MARKER or "/events.out.tfevents." in p for p in first)
    assert export(project, out).returncode == 0  # over its own earlier export
    assert snapshot(out) == first
    # A profile without the window: its runs go with it.
    (project / "ranges/profiles/tiny.yaml").write_text(
        PROFILE.replace("    - {kind: band, min: 1, max: 3, window: {first: 2}}\n", ""), "utf-8"
    )
    assert export(project, out).returncode == 0
    assert not (out / "min-2").exists() and (out / "min").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manual", "p"]  # nothing left beside it


def test_it_writes_into_an_empty_folder(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "manual"
    out.mkdir()
    assert export(project, out).returncode == 0
    assert (out / "min" / "events.out.tfevents.0.metrics-manual").is_file()


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda d: (d.mkdir(), (d / "notes.txt").write_text("mine")), "not empty and not a folder that"),
        (lambda d: d.write_text("a file"), "it is not a folder"),
        (lambda d: ((d.parent / "real").mkdir(), d.symlink_to(d.parent / "real")), "it is a symlink"),
    ],
    ids=["someone's folder", "a file", "a symlink to a folder"],
)
def test_it_refuses_a_place_that_is_not_its_own(project: Path, tmp_path: Path, make: Any, why: str) -> None:
    out = tmp_path / "manual"
    make(out)
    before = {p.name: snapshot(p) if p.is_dir() and not p.is_symlink() else None for p in tmp_path.iterdir()}
    result = export(project, out)
    assert result.returncode == 2 and why in result.stderr and "Traceback" not in result.stderr
    assert {p.name: snapshot(p) if p.is_dir() and not p.is_symlink() else None for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize("added", ["notes.txt", "min/notes.txt", "link"])
def test_it_refuses_an_earlier_export_that_holds_more(project: Path, tmp_path: Path, added: str) -> None:
    out = tmp_path / "manual"
    assert export(project, out).returncode == 0
    if added == "link":
        (out / "link").symlink_to(tmp_path)
    else:
        (out / added).write_text("mine", "utf-8")
    before = snapshot(out)
    result = export(project, out)
    assert result.returncode == 2 and "nothing was written" in result.stderr
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manual", "p"]


@pytest.mark.parametrize(
    "stop", [OSError(28, "No space left on device"), KeyboardInterrupt()], ids=["disk full", "Ctrl-C"]
)
def test_a_failed_write_leaves_the_earlier_export_whole(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop: BaseException
) -> None:
    out = tmp_path / "manual"
    assert export(project, out).returncode == 0
    before = snapshot(out)
    real_open = open
    written = []

    def failing_open(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode == "xb":
            written.append(path)
            if len(written) == 3:  # half-way through the folder
                raise stop
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", failing_open)
    result = export(project, out)
    monkeypatch.undo()
    assert result.returncode != 0 and "Traceback" not in result.stderr
    if isinstance(stop, OSError):
        assert result.returncode == 2 and "No space left on device; nothing was written" in result.stderr
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manual", "p"]  # the half-written folder is gone


def test_a_failed_switch_puts_the_earlier_export_back(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the system has no exchange: the earlier export moved aside, the new one cannot move in: the
    earlier one is back in place."""
    out = tmp_path / "manual"
    assert export(project, out).returncode == 0
    before = snapshot(out)
    monkeypatch.setattr(folder, "exchange", lambda a, b: False)
    real_rename = os.rename
    renames = []

    def failing_rename(src: Any, dst: Any) -> None:
        renames.append((src, dst))
        if len(renames) == 2:  # the new folder into place
            raise OSError(13, "Permission denied")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", failing_rename)
    result = export(project, out)
    monkeypatch.undo()
    assert result.returncode == 2 and "Permission denied; nothing was written" in result.stderr
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manual", "p"]


def test_a_folder_format_needs_a_folder(project: Path) -> None:
    result = run_cli("export", "--root", str(project), "--profile", "tiny", "--format", "tensorboard")
    assert result.returncode == 2 and "--format tensorboard writes a folder: name it with -o DIR" in result.stderr


def test_without_the_extra_it_says_how_to_install(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    real = builtins.__import__

    def no_tensorboard(name: str, *args: Any, **kw: Any) -> Any:
        if name.startswith("tensorboard"):
            raise ImportError(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_tensorboard)
    result = export(project, tmp_path / "manual")
    monkeypatch.undo()
    assert result.returncode == 2
    assert (
        "writing a TensorBoard log folder needs the tensorboard extra: pip install 'metrics-manual[tensorboard]'"
        in result.stderr
    )
    assert not (tmp_path / "manual").exists() and os.listdir(tmp_path) == ["p"]


def test_an_exact_value_at_a_far_step_is_one_point_there(tmp_path: Path) -> None:
    """Steps between the lines of a run are skipped, not walked: an exact value at step 10^12 is one event."""
    profile = TINY_PROFILE.split("expectations:")[0].replace("steps: 10", "steps: 1000000000001") + (
        "expectations:\n"
        "  train/grad_norm: [{kind: band, min: 1, max: 3, steps: 3}]\n"
        "  train/pg_clipfrac: [{kind: exact, value: 0, at: {step: 1000000000000}}]\n"
    )
    root = write_project(tmp_path / "p", TINY_CATALOG, {"tiny": profile})
    out = tmp_path / "manual"
    assert export(root, out).returncode == 0
    series, _ = read_folder(out)
    assert series["exact", "train/pg_clipfrac"] == [(10**12, 0.0)]
    assert [s for s, _ in series["min", "train/grad_norm"]] == [0, 1, 2]


def test_a_folder_whose_parent_is_missing_is_an_error(project: Path, tmp_path: Path) -> None:
    result = export(project, tmp_path / "missing" / "manual")
    assert result.returncode == 2 and "No such file or directory; nothing was written" in result.stderr
    assert not (tmp_path / "missing").exists()
