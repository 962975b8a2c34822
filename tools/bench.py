"""Benchmarks: print figures, assert nothing (the machine is shared: compare ratios within one run).

    python tools/bench.py [--quick]

1. load + validate time and peak memory, real source and a generated one (10,000 metrics, 10 profiles);
2. `metrics-manual build` next to `mkdocs build` on the same tree (median of several runs, ratio);
3. `metrics-manual check` next to `mkdocs build`, in sync and with every generated file drifted.
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
    lines = ["title: Metrics", "code: {repository: radixark/miles, branch: main, commit: 31f1ca96}",
             "step_keys: {train: train/step}", "sections:"]
    keys = []
    for s in range(metrics // per_section):
        lines += [f"  - id: section-{s}", f"    title: Section {s}", "    metrics:"]
        for i in range(per_section):
            key = f"train/metric_{s}_{i}"
            keys.append(key)
            lines += [f"      - key: {key}", f"        meaning: the value number {i} of section {s}",
                      "        unit: s" if i % 3 == 0 else "        unit: tokens"]
    (root / "ranges/catalog.yaml").write_text("\n".join(lines) + "\n", "utf-8")
    lab = (REPO / "ranges/profiles/lab-gb10.yaml").read_text("utf-8").split("section_notes:")[0]
    for p in range(profiles):
        out = [lab.replace("id: lab-gb10", f"id: profile-{p}").replace("title: Lab runs on one GB10", f"title: Profile {p}"),
               "expectations:"]
        for n, key in enumerate(keys):
            a = round(0.001 * (n % 997) + p, 4)
            out += [f"  {key}:", "    - " + KINDS[(n + p) % len(KINDS)].format(a=a, b=round(a + 1.5, 4))]
        (root / f"ranges/profiles/profile-{p}.yaml").write_text("\n".join(out) + "\n", "utf-8")


def timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (MiB) of one command in a child process."""
    before = time.perf_counter()
    # Each measurement in a fresh shell so ru_maxrss is this child's own peak.
    script = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)")
    proc = subprocess.run([sys.executable, "-c", script, *cmd], cwd=cwd, env=ENV, capture_output=True, text=True)
    took = time.perf_counter() - before
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return took, int(proc.stdout.strip().splitlines()[-1]) // 1024


def in_process(root: Path, what: str, runs: int) -> float:
    """Median seconds of load_manual or generate alone, without interpreter start-up."""
    code = ("import statistics, sys, time; from pathlib import Path; from metrics_manual.build import generate; "
            "from metrics_manual.load import load_manual; f = {'load': load_manual, 'generate': generate}[sys.argv[2]]; "
            "r = Path(sys.argv[1]); ts = []\n"
            "for _ in range(int(sys.argv[3])):\n t = time.perf_counter(); f(r); ts.append(time.perf_counter() - t)\n"
            "print(statistics.median(ts))")
    out = subprocess.run([sys.executable, "-c", code, str(root), what, str(runs)], capture_output=True, text=True, env=ENV,
                         check=True)
    return float(out.stdout)


def median_of(runs: int, cmd: list[str], cwd: Path) -> float:
    return statistics.median(timed(cmd, cwd)[0] for _ in range(runs))


def report(name: str, root: Path, runs: int) -> None:
    mm = [sys.executable, "-m", "metrics_manual"]
    load = in_process(root, "load", runs)
    wall, rss = timed([*mm, "validate"], root)
    print(f"[{name}] load+validate: {load:.2f} s in process; `metrics-manual validate` {wall:.2f} s wall, peak RSS {rss} MiB")
    timed([*mm, "build"], root)  # the tree now holds every generated file: later builds write nothing
    gen = in_process(root, "generate", runs)
    build = median_of(runs, [*mm, "build"], root)
    check = median_of(runs, [*mm, "check"], root)
    site = Path(tempfile.mkdtemp())
    mkdocs = median_of(runs, [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(site)], root)
    shutil.rmtree(site)
    print(f"[{name}] median of {runs}: `metrics-manual build` {build:.2f} s (generator in process {gen:.2f} s), "
          f"`metrics-manual check` {check:.2f} s, `mkdocs build` {mkdocs:.2f} s (it runs the generator too)")
    drifted = drift(root, mm)
    print(f"[{name}] ratios to mkdocs build: build {build / mkdocs:.2f}, generator in process {gen / mkdocs:.2f}, "
          f"check {check / mkdocs:.2f}, check with every page and export drifted {drifted / mkdocs:.2f} "
          f"({drifted:.2f} s; {drifted / check:.2f} of a clean check)")


def drift(root: Path, mm: list[str]) -> float:
    """`metrics-manual check` after a change that moves every number of every profile (then build again)."""
    profiles = sorted((root / "ranges/profiles").glob("*.yaml"))
    originals = {p: p.read_text("utf-8") for p in profiles}
    for p, text in originals.items():
        p.write_text(text.replace("min: ", "min: -1"), "utf-8")
    took = timed([*mm, "check"], root)[0]
    for p, text in originals.items():
        p.write_text(text, "utf-8")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1,000 metrics instead of 10,000, one run each")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        real = Path(tmp) / "real"
        for part in ("ranges", "templates", "docs"):
            shutil.copytree(REPO / part, real / part)
        shutil.copy(REPO / "mkdocs.yml", real / "mkdocs.yml")
        report("real manual", real, args.runs)
        n = 1000 if args.quick else 10_000
        big = Path(tmp) / "big"
        generated_source(big, n, 10)
        report(f"{n:,} metrics x 10 profiles", big, 1 if args.quick else args.runs)


if __name__ == "__main__":
    main()
