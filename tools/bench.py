"""Benchmarks: print figures, assert nothing (the machine is shared: compare ratios within one run).

    python tools/bench.py [--quick] [--validate]

1. load + validate time and peak memory, real source and a generated one (10,000 metrics, 10 profiles);
2. `metrics-manual build` next to `mkdocs build` on the same tree (median of several runs, ratio);
3. `metrics-manual check` next to `mkdocs build`, in sync and with every generated file drifted.
4. `metrics-manual judge` on a generated 1 GB event log (metric lines among large non-metric
   events) and a 1 GB dashboard log: throughput and peak memory (--part judge, --judge-mb N).
5. realistic run logs (--part realistic): an event log whose metric lines are ~9% of the bytes, a
   dashboard log of ~110 keys a record with bare NaN, a TensorBoard run written by its own writer (a
   step an event, and a scalar an event as add_scalar writes) and a W&B CSV, each beside its baselines (CPU seconds: a stdlib json loop, orjson alone, `grep -c` as
   the read floor, EventAccumulator, a csv loop) with the ratio.
   A console log (--part console): Miles' metric lines among SGLang's and other lines (~5% of the
   bytes), beside plain-Python loops that find the metric lines and parse their dicts.
6. `metrics-manual derive`: the size of a compact capture of a 48-step run, and derive's time on three runs;
   the same runs as corridors (--kind corridor): derive's time, the reference capture, validate and exports.
7. `mkdocs serve` (--part serve): from saving a band to the served page showing it, and the builds a save starts.
8. `metrics-manual judge --follow` (--part follow) beside a dashboard log that grows: the time from the
   write that makes a finding certain to the finding's line, at run lengths of 1,000 to 100,000 steps;
   the time to read a run's history when started late; peak RSS next to judge's on the same files.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
KINDS = [
    "{{kind: band, min: {a}, max: {b}, steps: 48}}",
    "{{kind: median, value: {b}, steps: 48, condition: in a run made before the heat guard}}",
    "{{kind: exact, value: 0, at: every_step}}",
    "{{kind: band, min: {a}, max: {b}, window: {{first: 2}}, condition: with plain sampling}}",
    "{{kind: presence, at: every_step}}",
]


def generated_source(root: Path, metrics: int, profiles: int, per_section: int = 100) -> None:
    """A project of `metrics` metrics in sections of `per_section`, and `profiles` profiles ranging each metric."""
    for part in ("templates", "docs"):
        shutil.copytree(REPO / part, root / part)
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    for stale in ("reference", "profiles", "export"):
        shutil.rmtree(root / "docs" / stale, ignore_errors=True)
    (root / "docs/.generated.json").unlink(missing_ok=True)
    (root / "ranges/profiles").mkdir(parents=True)
    lines = [
        "title: Metrics",
        "code: {repository: radixark/miles, branch: main, commit: 31f1ca96}",
        "step_keys: {train: train/step}",
        "sections:",
    ]
    keys = []
    for s in range(metrics // per_section):
        lines += [f"  - id: section-{s}", f"    title: Section {s}", "    metrics:"]
        for i in range(per_section):
            key = f"train/metric_{s}_{i}"
            keys.append(key)
            lines += [
                f"      - key: {key}",
                f"        meaning: the value number {i} of section {s}",
                "        unit: s" if i % 3 == 0 else "        unit: tokens",
            ]
    (root / "ranges/catalog.yaml").write_text("\n".join(lines) + "\n", "utf-8")
    lab = (REPO / "ranges/profiles/lab-gb10.yaml").read_text("utf-8").split("section_notes:")[0]
    for p in range(profiles):
        out = [
            lab.replace("id: lab-gb10", f"id: profile-{p}").replace(
                "title: Lab runs on one GB10", f"title: Profile {p}"
            ),
            "expectations:",
        ]
        for n, key in enumerate(keys):
            a = round(0.001 * (n % 997) + p, 4)
            out += [f"  {key}:", "    - " + KINDS[(n + p) % len(KINDS)].format(a=a, b=round(a + 1.5, 4))]
        (root / f"ranges/profiles/profile-{p}.yaml").write_text("\n".join(out) + "\n", "utf-8")


def timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (MiB) of one command in a child process."""
    took, rss, _ = timed_cpu(cmd, cwd)
    return took, rss


def timed_cpu(cmd: list[str], cwd: Path) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds of one command."""
    before = time.perf_counter()
    # Each measurement in a fresh shell so ru_maxrss is this child's own peak.
    script = (
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
        "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(u.ru_maxrss, u.ru_utime + u.ru_stime); sys.exit(r.returncode)"
    )
    proc = subprocess.run([sys.executable, "-c", script, *cmd], cwd=cwd, env=ENV, capture_output=True, text=True)
    took = time.perf_counter() - before
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    rss, cpu = proc.stdout.strip().splitlines()[-1].split()
    return took, int(rss) // 1024, float(cpu)


# The floor of validate: libyaml's event stream alone on the same files, building nothing: a fresh
# interpreter, as a command is.
FLOOR = """\
import sys
import yaml

def events(path):
    loader = yaml.CSafeLoader(open(path, "rb").read().decode("utf-8"))
    get, end, n = loader.get_event, yaml.StreamEndEvent, 0
    while type(get()) is not end:
        n += 1
    loader.dispose()
    return n

print(sum(map(events, sys.argv[1:])))
"""


def floor(root: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds of libyaml's events alone on root's source, and the events."""
    paths = [root / "ranges/catalog.yaml", *sorted((root / "ranges/profiles").glob("*.yaml"))]
    cmd = [sys.executable, "-c", FLOOR, *map(str, paths)]
    wall, _, cpu = timed_cpu(cmd, root)
    out = subprocess.run(cmd, capture_output=True, text=True, env=ENV, check=True, cwd=root)
    return wall, cpu, int(out.stdout)


def in_process(root: Path, what: str, runs: int) -> float:
    """Median seconds of load_manual or generate alone, without interpreter start-up."""
    code = (
        "import statistics, sys, time; from pathlib import Path; from metrics_manual.build import generate; "
        "from metrics_manual.source.load import load_manual; f = {'load': load_manual, 'generate': generate}[sys.argv[2]]; "
        "r = Path(sys.argv[1]); ts = []\n"
        "for _ in range(int(sys.argv[3])):\n t = time.perf_counter(); f(r); ts.append(time.perf_counter() - t)\n"
        "print(statistics.median(ts))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root), what, str(runs)], capture_output=True, text=True, env=ENV, check=True
    )
    return float(out.stdout)


def load_times(root: Path, runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of load_manual in process: CPU time stays meaningful on a busy machine."""
    code = (
        "import statistics, sys, time; from pathlib import Path; from metrics_manual.source.load import load_manual\n"
        "walls, cpus = [], []\n"
        "for _ in range(int(sys.argv[2])):\n"
        " w, c = time.perf_counter(), time.process_time(); load_manual(Path(sys.argv[1]))\n"
        " walls.append(time.perf_counter() - w); cpus.append(time.process_time() - c)\n"
        "print(statistics.median(walls), statistics.median(cpus))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root), str(runs)], capture_output=True, text=True, env=ENV, check=True
    )
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def median_of(runs: int, cmd: list[str], cwd: Path) -> float:
    return statistics.median(timed(cmd, cwd)[0] for _ in range(runs))


def report(name: str, root: Path, runs: int, validate_only: bool = False) -> None:
    mm = [sys.executable, "-m", "metrics_manual"]
    load, cpu = load_times(root, runs)
    walls, rsss, cpus = zip(*(timed_cpu([*mm, "validate"], root) for _ in range(runs)))
    wall, rss = statistics.median(walls), max(rsss)
    print(
        f"[{name}] load+validate: {load:.3f} s in process ({cpu:.3f} s of CPU);"
        f" `metrics-manual validate` {wall:.2f} s wall, {statistics.median(cpus):.2f} s of CPU,"
        f" peak RSS {rss} MiB (median of {runs})"
    )
    floors = [floor(root) for _ in range(runs)]
    print(
        f"[{name}] floor, libyaml's {floors[0][2]:,} events alone on the same files:"
        f" {statistics.median(f[0] for f in floors):.2f} s wall, {statistics.median(f[1] for f in floors):.2f} s of CPU"
        f" (median of {runs}); validate / floor: {wall / statistics.median(f[0] for f in floors):.2f} wall,"
        f" {statistics.median(cpus) / statistics.median(f[1] for f in floors):.2f} CPU"
    )
    if validate_only:
        return
    timed([*mm, "build"], root)  # the tree now holds every generated file: later builds write nothing
    gen = in_process(root, "generate", runs)
    build = median_of(runs, [*mm, "build"], root)
    check = median_of(runs, [*mm, "check"], root)
    site = Path(tempfile.mkdtemp())
    mkdocs = median_of(runs, [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(site)], root)
    shutil.rmtree(site)
    print(
        f"[{name}] median of {runs}: `metrics-manual build` {build:.2f} s (generator in process {gen:.2f} s), "
        f"`metrics-manual check` {check:.2f} s, `mkdocs build` {mkdocs:.2f} s (it runs the generator too)"
    )
    drifted, shown = drift(root, mm)
    print(
        f"[{name}] ratios to mkdocs build: build {build / mkdocs:.2f}, generator in process {gen / mkdocs:.2f}, "
        f"check {check / mkdocs:.2f}, check with every page and export drifted {drifted / mkdocs:.2f} "
        f"({drifted:.2f} s; {drifted / check:.2f} of a clean check)"
    )
    print(
        f"[{name}] check's output with every page and export drifted: {len(shown.encode()):,} bytes, {shown.count(chr(10)):,} lines"
    )


def drift(root: Path, mm: list[str]) -> tuple[float, str]:
    """`metrics-manual check` after a change that moves every number of every profile: its time and what it
    prints."""
    profiles = sorted((root / "ranges/profiles").glob("*.yaml"))
    originals = {p: p.read_text("utf-8") for p in profiles}
    for p, text in originals.items():
        p.write_text(text.replace("min: ", "min: -1"), "utf-8")
    took = timed([*mm, "check"], root)[0]
    shown = subprocess.run([*mm, "check"], cwd=root, env=ENV, capture_output=True, text=True).stdout
    for p, text in originals.items():
        p.write_text(text, "utf-8")
    return took, shown


def derive_figures(tmp: Path) -> None:
    """Capture size and derive time on runs made up here (never published: a temp dir only)."""
    import random

    sys.path.insert(0, str(REPO / "tools"))
    from metrics_manual.runs.capture import capture_text
    from metrics_manual.runs.run import Run
    from metrics_manual.source.load import load_manual

    root = Path(tmp) / "derive"
    (root / "ranges" / "profiles").mkdir(parents=True)
    shutil.copy(REPO / "ranges" / "catalog.yaml", root / "ranges" / "catalog.yaml")
    catalog = load_manual(REPO).catalog
    # Keys a run logs: no {name} pattern, no key the catalog says no process logs. The real profiles come
    # along, for the catalog's quotes of their words (lab_vs_code).
    for profile in (REPO / "ranges" / "profiles").iterdir():
        shutil.copy(profile, root / "ranges" / "profiles" / profile.name)
    keys = [
        k
        for s in catalog.sections
        for m in s.metrics
        if m.not_logged is None
        for k in (m.members or [m.key])
        if "{" not in k
    ]
    lines = "".join(f"  {k}:\n    - {{kind: band, min: 0, max: 1}}\n" for k in keys)
    (root / "ranges" / "profiles" / "bench.yaml").write_text(
        "id: bench\ntitle: Bench\nsummary: Made up.\nadvice: None.\nsetup: {framework: Miles, model: M, dataset: D, "
        "hardware: {count: 1, name: G}, prompts_per_step: 1, answers_per_prompt: 1, token_limit: 1, steps: 48}\n"
        "sources:\n  code: {kind: log, path: x.log}\nexpectations:\n" + lines,
        "utf-8",
    )
    for steps in (48, 10_000):
        args = []
        for seed in (1, 2, 3):
            rng = random.Random(seed)
            run = Run(series={k: {s: rng.uniform(0, 1000) for s in range(steps)} for k in keys})
            path = root / f"run{seed}-{steps}.jsonl"
            path.write_text(capture_text(run, keys), "utf-8")
            args.append(f"--run=s{seed}={path}")
        size = (root / f"run1-{steps}.jsonl").stat().st_size
        wall, rss = timed(
            [
                sys.executable,
                "-m",
                "metrics_manual",
                "derive",
                "--profile",
                "bench",
                *args,
                "--capture-to",
                str(root / "captures"),
            ],
            root,
        )
        print(
            f"[derive] {steps:,}-step run, {len(keys)} keys: compact capture {size / 1024:.1f} KiB; "
            f"derive from 3 runs (dry run, captures in memory) {wall:.2f} s wall, peak RSS {rss} MiB"
        )
        # The same runs as corridors (--kind corridor): the reference capture, and what reading it costs.
        project = root / f"corridor-{steps}"
        shutil.copytree(root / "ranges", project / "ranges", ignore=shutil.ignore_patterns("captures"))
        mm = [sys.executable, "-m", "metrics_manual"]
        wall, rss = timed([*mm, "derive", "--profile", "bench", "--kind", "corridor", *args, "--write"], project)
        reference = project / "captures" / "bench" / "reference.jsonl"
        load, _ = timed([*mm, "validate"], project)
        exports = {
            fmt: timed(
                [*mm, "export", "--profile", "bench", "--format", fmt, "-o", str(project / f"x.{fmt}")], project
            )[0]
            for fmt in ("json", "yaml", "csv")
        }
        print(
            f"[derive] {steps:,}-step runs as corridors of {len(keys)} keys: derive --kind corridor --write {wall:.2f} s "
            f"wall, peak RSS {rss} MiB; reference capture {reference.stat().st_size / 2**20:.1f} MiB; validate "
            f"{load:.2f} s; export " + ", ".join(f"{fmt} {t:.2f} s" for fmt, t in exports.items())
        )


def _catalog_keys() -> tuple[dict[str, list[str]], dict[str, str]]:
    """The real catalog's metric keys grouped by step key, and its step keys."""
    sys.path.insert(0, str(REPO / "tools"))
    from metrics_manual.source.load import load_manual

    catalog = load_manual(REPO).catalog
    groups: dict[str, list[str]] = {}
    for section in catalog.sections:
        for m in section.metrics:
            for key in m.members or [m.key]:
                sk = catalog.step_keys.get(key.split("/", 1)[0])
                if sk:
                    groups.setdefault(sk, []).append(key)
    return groups, dict(catalog.step_keys)


def event_log(path: Path, mb: int, big_kb: int = 64, per_step: int = 8) -> int:
    """An event log of about `mb` MB, streamed to disk: per step one metric line per step key
    and `per_step` non-metric events of `big_kb` KB (weight checksums). Returns the steps."""
    groups, _ = _catalog_keys()
    checksums = ",".join(f'"layer.{i}":"{i:064x}"' for i in range(big_kb * 1024 // 80))
    big = (
        '{"timestamp":"2026-11-30T01:00:00.000000Z","source":{"component":"actor_cell0_rank0"},'
        '"type":"weight_checksum","rollout_id":%d,"attempt":null,"checksums":{' + checksums + "}}\n"
    )
    step = 0
    with path.open("w", encoding="utf-8") as fh:
        while fh.tell() < mb * 1_000_000:
            for _ in range(per_step):
                fh.write(big % step)
            for sk, keys in groups.items():
                metrics = ",".join([f'"{sk}":{step}'] + [f'"{k}":{0.5 + (step % 97) / 1000}' for k in keys])
                fh.write(
                    '{"timestamp":"2026-11-30T01:00:00.000000Z","source":{"component":"main"},"type":"metric",'
                    f'"rollout_id":null,"attempt":null,"metrics":{{{metrics}}}}}\n'
                )
            step += 1
    return step


def dashboard_log(path: Path, mb: int, extra: int = 80) -> int:
    """A dashboard metrics.jsonl of about `mb` MB: one record per log() call, as Miles writes it,
    with the catalog's keys and `extra` keys the manual does not describe (Miles logs many)."""
    groups, _ = _catalog_keys()
    groups = {sk: keys + [f"{keys[0].split('/')[0]}/extra_{i}" for i in range(extra)] for sk, keys in groups.items()}
    step = 0
    with path.open("w", encoding="utf-8") as fh:
        while fh.tell() < mb * 1_000_000:
            for sk, keys in groups.items():
                metrics = ", ".join([f'"{sk}": {step}'] + [f'"{k}": {0.5 + (step % 97) / 1000}' for k in keys])
                fh.write(
                    f'{{"ts": {1796000000 + step}.5, "step_key": "{sk}", "step": {step}, "metrics": {{{metrics}}}}}\n'
                )
            step += 1
    return step


# --- realistic run logs, each beside its baselines (CPU seconds of a child process) -------------

_LOOP = {
    "stdlib json loop": "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    line.strip() and json.loads(line)",
    "orjson alone": "import orjson, sys\nfor line in open(sys.argv[1], 'rb'):\n    try: line.strip() and orjson.loads(line)\n    except orjson.JSONDecodeError: pass",
    # orjson fails at a line's first bare NaN, so "orjson alone" reads no dashboard line to its end:
    # the parse judge does is each line with NaN spelled as a string (runs/jsonl.py).
    "orjson, NaN spelled": "import orjson, sys\nfh = open(sys.argv[1], 'rb')\nwhile c := fh.read(1 << 22):\n"
    "    for line in c.replace(b'NaN', b'\"~\"').split(b'\\n'):\n"
    "        try: line.strip() and orjson.loads(line)\n        except orjson.JSONDecodeError: pass",
    "judge's start-up alone": "import metrics_manual.cli.main, metrics_manual.cli.judge",
}


def cpu_of(cmd: list[str], cwd: Path = REPO) -> float:
    """User + system CPU seconds of one command run as a child (start-up included)."""
    script = (
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
        "u = resource.getrusage(resource.RUSAGE_CHILDREN); print(u.ru_utime + u.ru_stime); sys.exit(0)"
    )
    out = subprocess.run([sys.executable, "-c", script, *cmd], cwd=cwd, env=ENV, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def startup_report(runs: int) -> None:
    """Each command's --help, --version and a validate of the real tree: CPU seconds beyond `python -c pass`
    (the median of `runs`), the price a user pays before the command does anything."""
    from metrics_manual.cli.main import COMMANDS

    floor = statistics.median(cpu_of([sys.executable, "-c", "pass"]) for _ in range(runs))
    entry = [sys.executable, "-m", "metrics_manual"]
    cases = {f"{name} --help": [name, "--help"] for name in sorted(COMMANDS)}
    cases |= {"--help": ["--help"], "--version": ["--version"], "validate (the real tree)": ["validate"]}
    print(f"[startup] python -c pass: {floor:.3f} s CPU (the floor); median of {runs} runs, beyond it:")
    for label, args in cases.items():
        cpu = statistics.median(cpu_of([*entry, *args]) for _ in range(runs))
        print(f"[startup]   metrics-manual {label:<26} {cpu - floor:.3f} s")


def realistic_event_log(path: Path, mb: int, metric_share: float = 0.09) -> int:
    """An event log whose metric lines are about `metric_share` of the bytes (the rest: weight checksums)."""
    groups, _ = _catalog_keys()
    extra = {sk: keys + [f"{keys[0].split('/')[0]}/extra_{i}" for i in range(80)] for sk, keys in groups.items()}
    step, metric_bytes, other_bytes = 0, 0, 0
    with path.open("w", encoding="utf-8") as fh:
        while fh.tell() < mb * 1_000_000:
            for sk, keys in extra.items():
                metrics = ",".join([f'"{sk}":{step}'] + [f'"{k}":{0.5 + (step % 97) / 1000}' for k in keys])
                line = (
                    '{"timestamp":"2026-11-30T01:00:00.000000Z","source":{"component":"main"},"type":"metric",'
                    f'"rollout_id":null,"attempt":null,"metrics":{{{metrics}}}}}\n'
                )
                fh.write(line)
                metric_bytes += len(line)
            while other_bytes < metric_bytes * (1 - metric_share) / metric_share:
                n = 200
                line = (
                    '{"timestamp":"2026-11-30T01:00:00.000000Z","source":{"component":"actor_cell0_rank0"},'
                    f'"type":"weight_checksum","rollout_id":{step},"attempt":null,"checksums":{{'
                    + ",".join(f'"layer.{i}":"{(i * 7919 + step):064x}"' for i in range(n))
                    + "}}\n"
                )
                fh.write(line)
                other_bytes += len(line)
            step += 1
    return step


def nan_dashboard_log(path: Path, mb: int) -> int:
    """A dashboard log of ~110 keys a record, as json.dumps writes it: a non-finite value is a bare NaN."""
    groups, _ = _catalog_keys()
    groups = {
        sk: keys + [f"{keys[0].split('/')[0]}/extra_{i}" for i in range(110 - len(keys))] for sk, keys in groups.items()
    }
    step = 0
    with path.open("w", encoding="utf-8") as fh:
        while fh.tell() < mb * 1_000_000:
            for sk, keys in groups.items():
                values = [
                    f'"{k}": {"NaN" if (step + i) % 37 == 0 else 0.5 + (step % 97) / 1000}' for i, k in enumerate(keys)
                ]
                metrics = ", ".join([f'"{sk}": {step}', *values])
                fh.write(
                    f'{{"ts": {1796000000 + step}.5, "step_key": "{sk}", "step": {step}, "metrics": {{{metrics}}}}}\n'
                )
            step += 1
    return step


def tensorboard_run(folder: Path, steps: int, *, per_event: bool = False) -> int:
    """A TensorBoard run written by the tensorboard package's own writer: the catalog's keys and 80 more,
    all of a step in one event, or one scalar an event (`per_event`, as SummaryWriter.add_scalar writes)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer import record_writer
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    from metrics_manual.runs.tensorboard import _crc32c, masked

    crc = _crc32c()  # the writer's pure-Python CRC32C would take most of a minute; the bytes are the same
    record_writer.masked_crc32c = lambda data: masked(crc(data))  # type: ignore[attr-defined]
    groups, _ = _catalog_keys()
    keys = [k for ks in groups.values() for k in ks] + [f"train/extra_{i}" for i in range(80)]
    writer = EventFileWriter(str(folder))
    for step in range(steps):
        values = [summary_pb2.Summary.Value(tag=k, simple_value=0.5 + (step % 97) / 1000) for k in keys]
        values += [summary_pb2.Summary.Value(tag=sk, simple_value=step) for sk in groups]
        for part in [[v] for v in values] if per_event else [values]:
            writer.add_event(event_pb2.Event(step=step, wall_time=1.0 + step, summary=summary_pb2.Summary(value=part)))
    writer.close()
    return steps * (len(keys) + len(groups))


def wandb_csv(path: Path, steps: int) -> int:
    """A W&B CSV export: one row per step, a column per key (the catalog's and 80 more)."""
    groups, _ = _catalog_keys()
    keys = [k for ks in groups.values() for k in ks] + [f"train/extra_{i}" for i in range(80)]
    with path.open("w", encoding="utf-8") as fh:
        fh.write(",".join(["_step", *groups, *keys]) + "\n")
        for step in range(steps):
            fh.write(
                ",".join([str(step), *(str(step) for _ in groups), *(str(0.5 + (step % 97) / 1000) for _ in keys)])
                + "\n"
            )
    return steps


def realistic_report(mb: int, runs: int = 3) -> None:
    """judge on realistic logs beside its baselines, CPU seconds in one run: the ratio is what counts."""
    from metrics_manual.source.load import load_manual

    profile = load_manual(REPO).profiles[0].id
    judge = [sys.executable, "-m", "metrics_manual", "judge", "--profile", profile, "--format", "json", "--no-progress"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in (
            ("event log (~9% metric lines)", realistic_event_log),
            ("dashboard log (~110 keys, NaN)", nan_dashboard_log),
        ):
            path = Path(tmp) / "run.jsonl"
            steps = make(path, mb)
            size = path.stat().st_size / 1e6
            # The least of `runs` runs each, taken in turns: other jobs on the machine move one run by 30%.
            base = dict.fromkeys(_LOOP, float("inf"))
            ours = fixed = start = float("inf")
            one = Path(tmp) / "one.jsonl"  # judge's fixed cost: start-up, the profile, the verdict of one line
            with path.open("rb") as fh:
                one.write_bytes(fh.readline())
            for _ in range(runs):
                for k, code in _LOOP.items():
                    base[k] = min(base[k], cpu_of([sys.executable, "-c", code, str(path)]))
                ours = min(ours, cpu_of([*judge, str(path)]))
                fixed = min(fixed, cpu_of([*judge, str(one)]))
                start = min(start, cpu_of([sys.executable, "-c", "import json, sys"]))  # the loop's own start-up
            began = time.perf_counter()  # grep's CPU time is near zero: its wall time is the read floor
            # Its output is read: GNU grep stops at the first match when its output is /dev/null.
            subprocess.run(["grep", "-c", "metrics", str(path)], stdout=subprocess.PIPE, check=False)
            grep = time.perf_counter() - began
            print(
                f"[judge] {name}, {size:,.0f} MB, {steps:,} steps: judge {ours:.2f} s CPU ({size / ours:,.0f} MB/s); "
                + "; ".join(f"{k} {v:.2f} s ({v / ours:.1f}x judge's)" for k, v in base.items())
                + f"; grep -c {grep:.2f} s wall (the read floor, {size / grep:,.0f} MB/s)"
            )
            loop = base["stdlib json loop"]
            print(
                f"[judge]   judge of its first line alone {fixed:.2f} s (start-up, the profile, a verdict); "
                f"the rest {ours - fixed:.2f} s ({size / max(ours - fixed, 1e-9):,.0f} MB/s), "
                f"the loop without its start-up {loop - start:.2f} s ({(loop - start) / max(ours - fixed, 1e-9):.1f}x)"
            )
            path.unlink()
        for name, per_event in (("a step an event", False), ("a scalar an event, as add_scalar writes", True)):
            try:
                folder = Path(tmp) / f"tb-{per_event}"
                scalars = tensorboard_run(folder, 2000, per_event=per_event)
            except ImportError:
                print("[judge] TensorBoard: the tensorboard package is not installed")
                break
            ours = cpu_of([*judge, str(folder)])
            acc = (
                "import sys\nfrom tensorboard.backend.event_processing.event_accumulator import EventAccumulator\n"
                "a = EventAccumulator(sys.argv[1], size_guidance={'scalars': 0}); a.Reload()\n"
                "sum(len(a.Scalars(t)) for t in a.Tags()['scalars'])"
            )
            base = cpu_of([sys.executable, "-c", acc, str(folder)])
            print(
                f"[judge] TensorBoard run of {scalars:,} scalars ({name}): judge {ours:.2f} s CPU "
                f"({scalars / ours:,.0f} scalars/s); EventAccumulator {base:.2f} s ({scalars / base:,.0f} scalars/s, "
                f"{base / ours:.1f}x judge's)"
            )
            shutil.rmtree(folder)
        path = Path(tmp) / "run.csv"
        steps = wandb_csv(path, 20_000)
        size = path.stat().st_size / 1e6
        ours = cpu_of([*judge, str(path)])
        loop = cpu_of(
            [sys.executable, "-c", "import csv, sys\nfor row in csv.reader(open(sys.argv[1])): pass", str(path)]
        )
        print(
            f"[judge] W&B CSV, {size:,.0f} MB, {steps:,} steps: judge {ours:.2f} s CPU ({size / ours:,.0f} MB/s); "
            f"stdlib csv loop {loop:.2f} s ({loop / ours:.1f}x judge's)"
        )


def console_log(path: Path, mb: int, metric_share: float = 0.05) -> tuple[int, float]:
    """A driver's console whose metric lines are about `metric_share` of the bytes: each rollout, the
    rollout side's `perf N` (~110 keys) and the trainer's `rollout N`, `step N` and `perf N` lines, in
    Miles' logging format behind Ray's prefix, among SGLang's decode lines and other log lines (some
    holding a dict, `: {` included). Returns the rollouts and the metric lines' share of the bytes."""
    groups, _ = _catalog_keys()
    keys = {
        sk: ks + [f"{ks[0].split('/')[0]}/extra_{i}" for i in range(max(0, 110 - len(ks)))] for sk, ks in groups.items()
    }
    ray = "\x1b[36m({actor} pid={pid})\x1b[0m [2026-11-30 01:{m:02d}:{s:02d}.{ms:03d} {name}] {where} - "
    step, metric_bytes, other_bytes = 0, 0, 0
    with path.open("w", encoding="utf-8") as fh:
        while fh.tell() < mb * 1_000_000:
            at = {"m": step // 60 % 60, "s": step % 60, "ms": step % 1000}
            manager = ray.format(actor="RolloutManager", pid=4100, name="rollout_manager", where="metrics.py:89", **at)
            actor = ray.format(
                actor="MegatronTrainRayActor", pid=4101, name="actor_cell0_rank0", where="log_utils.py:542", **at
            )
            value = 0.5 + (step % 97) / 1000
            lines = []
            for sk, ks in keys.items():
                d = {k: value for k in ks if k != sk}
                if sk == "train/step":
                    lines.append(actor + f"step {step}: {d | {sk: step}}\n")
                elif sk == "rollout/step":
                    lines.append(manager + f"perf {step}: {d}\n")
                else:
                    lines.append(manager.replace("metrics.py:89", "metrics.py:53") + f"eval {step}: {d}\n")
            for line in lines:
                fh.write(line)
                metric_bytes += len(line)
            i = 0
            while other_bytes < metric_bytes * (1 - metric_share) / metric_share:
                line = (
                    f"(SGLangEngine pid=4200) [2026-11-30 01:00:00 TP0] Decode batch. #running-req: {i % 64}, "
                    f"#token: {i * 37 % 90000}, token usage: 0.{i % 100:02d}, gen throughput (token/s): {i % 5000}.00, "
                    "#queue-req: 0\n"
                    if i % 10
                    else actor.replace("log_utils.py:542", "log_utils.py:100")
                    + f"ft op=cross_cell phase=start rank=0 cfg: {{'i': {i}}}\n"
                )
                fh.write(line)
                other_bytes += len(line)
                i += 1
            step += 1
    return step, metric_bytes / (metric_bytes + other_bytes)


# Plain-Python loops over a console: find the metric lines, and read their dicts as a script would (safely).
_CONSOLE_LOOP = {
    "a line loop finding ': {'": "import sys\nn = 0\nfor line in open(sys.argv[1], 'rb'):\n    if b': {' in line: n += 1",
    "that loop + a regex + ast.parse of each dict": "import ast, re, sys\n"
    "head = re.compile(rb'\\] \\S+:\\d+ - (?:\\w+-)?(?:step|perf|rollout|multi_turn|eval) \\d+: (\\{.*)')\n"
    "for line in open(sys.argv[1], 'rb'):\n"
    "    if b': {' in line and (m := head.search(line)): ast.parse(m.group(1), mode='eval')",
}


def console_report(mb: int, runs: int = 3) -> None:
    """judge on a large console log, mostly other lines, beside plain-Python loops (CPU seconds, least of `runs`)."""
    from metrics_manual.source.load import load_manual

    profile = load_manual(REPO).profiles[0].id
    judge = [sys.executable, "-m", "metrics_manual", "judge", "--profile", profile, "--format", "json", "--no-progress"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.log"
        steps, share = console_log(path, mb)
        size = path.stat().st_size / 1e6
        lines = sum(1 for _ in path.open("rb"))
        one = Path(tmp) / "one.log"  # judge's fixed cost: start-up, the profile, the verdict of one metric line
        with path.open("rb") as fh:
            one.write_bytes(fh.readline())
        base = dict.fromkeys(_CONSOLE_LOOP, float("inf"))
        ours = fixed = start = float("inf")
        for _ in range(runs):  # in turns: other jobs on the machine move one run by 30%
            for k, code in _CONSOLE_LOOP.items():
                base[k] = min(base[k], cpu_of([sys.executable, "-c", code, str(path)]))
            ours = min(ours, cpu_of([*judge, str(path)]))
            fixed = min(fixed, cpu_of([*judge, str(one)]))
            start = min(start, cpu_of([sys.executable, "-c", "import sys"]))
        began = time.perf_counter()
        subprocess.run(["grep", "-c", ": {", str(path)], stdout=subprocess.PIPE, check=False)
        grep = time.perf_counter() - began
        print(
            f"[judge] console log, {size:,.0f} MB, {lines:,} lines, {steps:,} rollouts, metric lines {share:.0%} of "
            f"the bytes: judge {ours:.2f} s CPU ({size / ours:,.0f} MB/s); "
            + "; ".join(f"{k} {v:.2f} s ({v / ours:.1f}x judge's)" for k, v in base.items())
            + f"; grep -c {grep:.2f} s wall (the read floor, {size / grep:,.0f} MB/s)"
        )
        loop = base["a line loop finding ': {'"]
        print(
            f"[judge]   judge of its first line alone {fixed:.2f} s (start-up, the profile, a verdict); "
            f"the rest {ours - fixed:.2f} s ({size / max(ours - fixed, 1e-9):,.0f} MB/s), "
            f"the line loop without its start-up {loop - start:.2f} s ({(loop - start) / max(ours - fixed, 1e-9):.1f}x)"
        )


def judge_report(mb: int) -> None:
    """Throughput and peak RSS of `metrics-manual judge` on generated logs of `mb` MB (the real manual's profile)."""
    mm = [sys.executable, "-m", "metrics_manual"]
    _, _ = _catalog_keys()
    from metrics_manual.source.load import load_manual

    profile = load_manual(REPO).profiles[0].id
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in (("event log", event_log), ("dashboard log", dashboard_log)):
            path = Path(tmp) / f"{name.split()[0]}.jsonl"
            steps = make(path, mb)
            size = path.stat().st_size
            wall, rss = timed(
                [*mm, "judge", "--profile", profile, "--format", "json", "--no-progress", str(path)], REPO
            )
            print(
                f"[judge] {name} of {size / 1e6:,.0f} MB ({steps:,} steps): {wall:.2f} s wall, "
                f"{size / 1e6 / wall:,.0f} MB/s, peak RSS {rss} MiB"
            )
            path.unlink()


def serve_report(saves: int) -> None:
    """`mkdocs serve` on the real manual: the time from saving a band under ranges/ to the served page
    showing it, the builds each save starts, and the build's own time as MkDocs logs it."""
    import html
    import re
    import signal
    import socket
    import urllib.request

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "real"
        for part in ("ranges", "templates", "docs"):
            shutil.copytree(REPO / part, root / part)
        shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
        profile = sorted((root / "ranges/profiles").glob("*.yaml"))[0]
        original = profile.read_text("utf-8")
        band = re.search(r"max: (\d+(?:\.\d+)?)\}", original)
        if band is None:
            raise SystemExit(f"no band with a max in {profile}")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        log = (Path(tmp) / "serve.log").open("w")
        cmd = [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}", "-f", str(root / "mkdocs.yml")]
        proc = subprocess.Popen(cmd, cwd=root, env=ENV, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        page = f"http://127.0.0.1:{port}/profiles/{profile.stem}/"

        def fetch() -> str:
            try:
                with urllib.request.urlopen(page, timeout=5) as r:
                    return html.unescape(r.read().decode("utf-8"))
            except OSError:
                return ""

        def builds() -> int:
            return (Path(tmp) / "serve.log").read_text("utf-8").count("Building documentation")

        try:
            began = time.perf_counter()
            while "metrics" not in fetch():
                if time.perf_counter() - began > 120:
                    raise SystemExit("mkdocs serve did not come up in 2 minutes")
                time.sleep(0.2)
            time.sleep(3)

            def cpu() -> float:  # the server's CPU seconds so far (Linux: /proc)
                fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

            took, per_save, cpu_before = [], [], cpu()
            for n in range(saves):
                value = f"{9000 + n}.25"
                before = builds()
                profile.write_text(original[: band.start(1)] + value + original[band.end(1) :], "utf-8")
                began = time.perf_counter()
                while f"{9000 + n:,}.25" not in fetch():
                    if time.perf_counter() - began > 60:
                        raise SystemExit(f"the saved band did not show in a minute (see {tmp}/serve.log)")
                    time.sleep(0.05)
                took.append(time.perf_counter() - began)
                time.sleep(3)  # a second build, if the save started one, has started by now
                per_save.append(builds() - before)
            cpu_per_save = (cpu() - cpu_before) / saves
            built = [
                float(s)
                for s in re.findall(
                    r"Documentation built in ([\d.]+) seconds", (Path(tmp) / "serve.log").read_text("utf-8")
                )
            ]
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
            log.close()
        print(
            f"[serve] real manual, {saves} saves of a band in {profile.name}: shown on the served page after "
            f"{statistics.median(took):.2f} s (median; {min(took):.2f}-{max(took):.2f} s), builds per save "
            f"{sorted(set(per_save))}, a build {statistics.median(built[1:]):.2f} s as MkDocs logs it (median), "
            f"the server's CPU {cpu_per_save:.2f} s a save (its 3 s of quiet after each included)"
        )


def _follow_record(step: int, sk: str, keys: dict[str, float], nan: str | None = None) -> str:
    metrics = ", ".join([f'"{sk}": {step}'] + [f'"{k}": {"NaN" if k == nan else v}' for k, v in keys.items()])
    return f'{{"ts": {1796000000 + step}.5, "step_key": "{sk}", "step": {step}, "metrics": {{{metrics}}}}}\n'


def follow_report(lengths: list[int]) -> None:
    """judge --follow beside a growing dashboard log of the real manual's first profile's keys: after
    `n` steps written, a NaN in a new metric at each of a few steps, one step written every 0.5 s; the
    latency is from the write of the next step (which makes the NaN certain) to its line on stdout."""
    import json
    import threading

    sys.path.insert(0, str(REPO / "tools"))
    from metrics_manual.exports.profile import exported_profile
    from metrics_manual.judge.judging import judged_keys
    from metrics_manual.model.kinds import numbers

    manual, profile = exported_profile(REPO, manual_first_profile())
    step_keys = manual.catalog.step_keys
    # A healthy run: each judged key at the middle of its first expectation's numbers.
    healthy = {
        key: statistics.fmean(next((n for e in m.expectations if (n := numbers(e))), [1.0]))
        for m in profile.metrics
        if m.expectations
        for key in m.members or [m.key]
    }
    groups: dict[str, dict[str, float]] = {}
    for key in sorted(judged_keys(profile)):
        if sk := step_keys.get(key.split("/", 1)[0]):
            groups.setdefault(sk, {})[key] = healthy[key]
    sk, keys = max(groups.items(), key=lambda kv: len(kv[1]))
    probes = list(keys)[:4]
    for n in lengths:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "dashboard" / "metrics.jsonl"
            log.parent.mkdir()
            with log.open("w", encoding="utf-8") as fh:
                for step in range(n):
                    for g, ks in groups.items():
                        fh.write(_follow_record(step, g, ks))
            mb = log.stat().st_size / 1e6
            cmd = [sys.executable, "-m", "metrics_manual", "judge", "--follow", "--format", "json"]
            proc = subprocess.Popen(
                [*cmd, "--profile", profile.profile.id, tmp], cwd=REPO, env=ENV, stdout=subprocess.PIPE, text=True
            )
            arrived: dict[int, float] = {}

            def read(proc: subprocess.Popen[str] = proc, arrived: dict[int, float] = arrived) -> None:
                assert proc.stdout is not None
                for line in proc.stdout:
                    f = json.loads(line)
                    if f.get("finding") == "not_finite":
                        arrived[f["step"]] = time.monotonic()

            reader = threading.Thread(target=read)
            reader.start()
            certain: dict[int, float] = {}
            with log.open("a", encoding="utf-8") as fh:
                for i, step in enumerate(range(n, n + 2 * len(probes) + 1)):
                    nan = probes[i // 2] if i % 2 == 0 and i // 2 < len(probes) else None
                    for g, ks in groups.items():
                        fh.write(_follow_record(step, g, ks, nan if g == sk else None))
                    fh.flush()
                    certain[step - 1] = time.monotonic()
                    if i == 1:  # the history is read whole first: wait for the first finding
                        while not arrived and proc.poll() is None:
                            time.sleep(0.01)
                    time.sleep(0.5 if i else 0.0)
            time.sleep(1.0)
            hwm = _vm_hwm(proc.pid)
            proc.terminate()
            proc.wait()
            reader.join()
            lat = sorted(arrived[s] - certain[s] for s in arrived if s in certain and s != n)
            first = arrived.get(n, float("nan")) - certain.get(n, float("nan"))
            _, judge_rss = timed([*cmd[:-4], "judge", "--profile", profile.profile.id, "--format", "json", tmp], REPO)
            print(
                f"[follow] {n:,} steps ({mb:,.0f} MB) before: the history read and the first finding in {first:.2f} s; "
                f"then latency median {statistics.median(lat):.3f} s, max {max(lat):.3f} s ({len(lat)} findings, "
                f"poll 0.2 s); peak RSS {hwm} MiB (judge on the same files: {judge_rss} MiB)"
            )


def manual_first_profile() -> str:
    sys.path.insert(0, str(REPO / "tools"))
    from metrics_manual.source.load import load_manual

    return load_manual(REPO).profiles[0].id


def _vm_hwm(pid: int) -> int:
    """Peak RSS (MiB) of a running process, from /proc (0 where there is none)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1,000 metrics instead of 10,000, one run each")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--part",
        choices=("all", "startup", "manual", "judge", "realistic", "console", "derive", "serve", "follow"),
        default="all",
    )
    parser.add_argument(
        "--judge-mb",
        type=int,
        default=None,
        help="size of each generated run log in MB (default: 1000 for --part judge, 300 for the realistic logs)",
    )
    parser.add_argument(
        "--validate",
        action="store_true",
        help="only load+validate (the reader and the model), 10,000 x 10 unless --quick",
    )
    args = parser.parse_args()
    # The package's bytecode, as an installed package has it: this machine sets PYTHONDONTWRITEBYTECODE,
    # and compiling the package's own modules at each start would be timed with every command.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "tools" / "metrics_manual")], check=True)
    if args.part in ("all", "startup") and not args.validate:
        startup_report(args.runs)
    if args.part in ("all", "judge") and not args.validate:
        judge_report(100 if args.quick else args.judge_mb or 1000)
    if args.part in ("all", "realistic") and not args.validate:
        # 300 MB unless asked: each realistic log is read a dozen times (judge and its baselines, 3 runs each)
        realistic_report(100 if args.quick else args.judge_mb or 300, 1 if args.quick else args.runs)
    if args.part in ("all", "console") and not args.validate:
        console_report(100 if args.quick else args.judge_mb or 300, 1 if args.quick else args.runs)
    if args.part in ("all", "derive") and not args.validate:
        with tempfile.TemporaryDirectory() as tmp:
            derive_figures(Path(tmp))
    if args.part in ("all", "serve") and not args.validate:
        serve_report(3 if args.quick else 5)
    if args.part in ("all", "follow") and not args.validate:
        follow_report([1_000, 10_000] if args.quick else [1_000, 10_000, 100_000])
    if args.part in ("startup", "judge", "realistic", "console", "derive", "serve", "follow"):
        return
    with tempfile.TemporaryDirectory() as tmp:
        real = Path(tmp) / "real"
        for part in ("ranges", "templates", "docs"):
            shutil.copytree(REPO / part, real / part)
        shutil.copy(REPO / "mkdocs.yml", real / "mkdocs.yml")
        report("real manual", real, args.runs, args.validate)
        n = 1000 if args.quick else 10_000
        big = Path(tmp) / "big"
        generated_source(big, n, 10)
        report(f"{n:,} metrics x 10 profiles", big, 1 if args.quick and not args.validate else args.runs, args.validate)


if __name__ == "__main__":
    main()
