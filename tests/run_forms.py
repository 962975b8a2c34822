"""Write one run in each form a Miles run writes its metrics, with the shapes of miles-facts.

A run here is {key: {step: value}}; each writer groups a step's values the way Miles'
`log()` calls do: one call per step key (rollout/step for rollout/* and perf/*, train/step
for train/*), with the step key inside the metrics.
"""

from __future__ import annotations

import csv
import json
import math
import time
from pathlib import Path
from typing import Any

from metrics_manual.runs.forms import RUN_FORMATS

# `moe`: a namespace of a fork's own (tests/derive/test_team_keys.py), logged with train/step as Miles logs train/*.
STEP_KEYS = {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step", "moe": "train/step"}
FORMS = RUN_FORMATS
Series = dict[str, dict[int, float]]


def calls(run: Series) -> list[tuple[str, int, dict[str, float]]]:
    """(step key, step, metrics) per log() call, in the order a run logs them."""
    by: dict[tuple[str, int], dict[str, float]] = {}
    for key, values in run.items():
        sk = STEP_KEYS[key.split("/")[0]]
        for step, v in values.items():
            by.setdefault((sk, step), {})[key] = v
    return [
        (sk, step, {sk: step, **metrics})
        for (sk, step), metrics in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    ]


def _pydantic_json(obj: Any) -> str:
    """model_dump_json: no spaces, non-finite floats as null."""

    def clean(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        return v

    return json.dumps(clean(obj), separators=(",", ":"), allow_nan=False)


def _process(sk: str) -> str:
    return "actor_cell0_rank0" if sk == "train/step" else "main"


def write_events(run: Series, folder: Path, *, retry_step: int | None = None) -> list[Path]:
    """D/events/{main,actor_cell0_rank0}.jsonl; other event types in between; optionally a retried step."""
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, list[str]] = {}
    for sk, step, metrics in calls(run):
        lines = files.setdefault(_process(sk), [])
        ts = f"2026-11-30T01:{step // 60:02d}:{step % 60:02d}.000000Z"
        lines.append(
            _pydantic_json(
                {
                    "timestamp": ts,
                    "source": {"component": _process(sk)},
                    "type": "weight_checksum",
                    "rollout_id": step,
                    "attempt": None,
                    "checksums": {"layer.0": "ab" * 40},
                }
            )
        )
        if step == retry_step:  # a first attempt whose values a retry replaces
            wrong = {k: (v if k == sk else 1e9) for k, v in metrics.items()}
            lines.append(
                _pydantic_json(
                    {
                        "timestamp": ts,
                        "source": {"component": _process(sk)},
                        "type": "metric",
                        "rollout_id": None,
                        "attempt": 0,
                        "metrics": wrong,
                    }
                )
            )
        lines.append(
            _pydantic_json(
                {
                    "timestamp": ts,
                    "source": {"component": _process(sk)},
                    "type": "metric",
                    "rollout_id": None,
                    "attempt": 1 if step == retry_step else None,
                    "metrics": metrics,
                }
            )
        )
    out = []
    for name, lines in files.items():
        path = folder / f"{name}.jsonl"
        path.write_text("".join(line + "\n" for line in lines), "utf-8")
        out.append(path)
    return out


def write_dashboard(run: Series, folder: Path) -> list[Path]:
    """{dump_details}/dashboard/metrics.jsonl, written with json.dumps (NaN tokens)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "metrics.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i, (sk, step, metrics) in enumerate(calls(run)):
            fh.write(json.dumps({"ts": 1796000000.0 + i, "step_key": sk, "step": step, "metrics": metrics}) + "\n")
    return [path]


def _ci_value(v: float) -> Any:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def write_ci_history(run: Series, folder: Path) -> list[Path]:
    """One pid-uuid.jsonl per process, one line per metric: {"metric", "series": [[step, value], ...]}.

    Miles records only a whitelist of keys; this writes every key so that one run reads the
    same in every form.
    """
    folder.mkdir(parents=True, exist_ok=True)
    per: dict[str, list[str]] = {}
    for key, values in run.items():
        proc = _process(STEP_KEYS[key.split("/")[0]])
        per.setdefault(proc, []).append(
            json.dumps({"metric": key, "series": [[s, _ci_value(v)] for s, v in sorted(values.items())]})
        )
    out = []
    for i, (proc, lines) in enumerate(sorted(per.items())):
        path = folder / f"{4100 + i}-0c9f3b2a-{proc}.jsonl"
        path.write_text("\n".join(lines) + "\n", "utf-8")
        out.append(path)
    return out


def write_tensorboard(run: Series, folder: Path) -> list[Path]:
    """SummaryWriter.add_scalar(key, value, step) per process, each in its own time-stamped folder."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writers: dict[str, EventFileWriter] = {}
    for i, (sk, step, metrics) in enumerate(calls(run)):
        proc = _process(sk)
        if proc not in writers:
            writers[proc] = EventFileWriter(str(folder / f"20261130-01{len(writers):02d}00-{proc}"))
        for key, v in metrics.items():
            value = summary_pb2.Summary.Value(tag=key, simple_value=v)
            # The run's own times (as the other writers give), not the test's: two runs written one after the
            # other are not a run and its resumed life (the rules of a merge).
            wall = 1796000000.0 + i
            writers[proc].add_event(
                event_pb2.Event(step=step, wall_time=wall, summary=summary_pb2.Summary(value=[value]))
            )
    for w in writers.values():
        w.close()
    return sorted(folder.rglob("*tfevents*"))


def write_wandb_csv(run: Series, folder: Path) -> list[Path]:
    """A W&B history export: _step counts log() calls; the training steps are in train/step / rollout/step."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = calls(run)
    keys = sorted({k for _, _, m in rows for k in m})
    path = folder / "wandb_export_2026-11-30T01_00_00.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["_step", "_runtime", "_timestamp", *keys])
        for i, (_, _, metrics) in enumerate(rows):
            w.writerow([i, 10.5 * i, 1796000000 + i, *(_csv(metrics[k]) if k in metrics else "" for k in keys)])
    return [path]


def _csv(v: float) -> str:
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        return str(int(v)) if abs(v) < 1e15 else repr(v)
    return "NaN" if math.isnan(v) else repr(v)


def console_time(i: int) -> str:
    """The time of Miles' logging format (`%(asctime)s.%(msecs)03d`) of the run's i-th second."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1796000000 + i)) + ".000"


def write_console(run: Series, folder: Path) -> list[Path]:
    """The driver's console of a Ray run: each actor's lines behind Ray's prefix, in Miles' logging format,
    among other lines. The trainer prints `step N: {...}` with train/step in the dict (log_utils.py:542),
    the rollout side `perf N: {...}` before rollout/step is added (metrics.py:89)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [  # the driver's first lines: Miles' own (configure_logger_raw("main") parses the args), then Ray's
        f"[{console_time(-1)} main] train.py:12 - the run starts\n",
        "2026-11-30 01:00:00,000\tINFO worker.py:1821 -- Started a local Ray instance.\n",
    ]
    for i, (sk, step, metrics) in enumerate(calls(run)):
        at = console_time(i)
        if sk == "train/step":
            prefix = f"(MegatronTrainRayActor pid=4101) [{at} actor_cell0_rank0] "
            lines.append(prefix + f"model.py:820 - grad norm clipped: {{'step': {step}}}\n")  # no metric line
            logged = {k: v for k, v in metrics.items() if k != sk} | {sk: step}  # log_train_step: train/step last
            lines.append(prefix + f"log_utils.py:542 - step {step}: {logged}\n")
        else:
            rest = {k: v for k, v in metrics.items() if k != sk}
            prefix = f"(RolloutManager pid=4100) [{at} rollout_manager] "
            lines.append(
                f"Rollout {step}:  50%|#####     | 32/64 [00:03<00:03]\r"
                + prefix
                + f"metrics.py:89 - perf {step}: {rest}\n"
            )
        lines.append(
            f"[2026-11-30 01:00:0{i % 10} TP0] Decode batch. #running-req: 8, #token: {i}, gen throughput: 1.0\n"
        )
    path = folder / "run.log"
    path.write_text("".join(lines), "utf-8")
    return [path]


WRITERS = {
    "events": write_events,
    "dashboard": write_dashboard,
    "ci-history": write_ci_history,
    "tensorboard": write_tensorboard,
    "wandb-csv": write_wandb_csv,
    "console": write_console,
}


def write(form: str, run: Series, folder: Path) -> list[Path]:
    return WRITERS[form](run, folder)
