"""Which `derive --method` should be the default, how far should a band reach, and how wide is a
median's tolerance? Measured on generated Miles-shaped runs.

    python tools/derive_methods.py [--trials 40] [--steps 400] [--seeds 3] [--longer 1.5]

A clean run has what real runs have: a per-run offset (seed effects), a trend over training,
per-step noise, skewed metrics (lengths, times) and rare spikes (gradient norm). Bands are derived
from `--seeds` clean runs of `--steps` steps as derive writes them (`stats.band_bounds`: envelope,
kept to the domain, rounded outward to 3 digits; a margin widens by a factor for a metric whose
domain starts at 0), reaching every step unless the runs trend (`trend.trend`), else their steps;
the times are medians over the runs' steps with the tolerance derive writes (`stats.median_range`:
a multiple of how far the runs' medians lie apart, or of a run's median's standard error, at
least a floor).
The next runs are the same training carried on, `--longer` times as long. For each method the
table gives how often the next clean run passes every band and median and, for each planted fault
in a run of its own, how often the faulted metric fails and how many other metrics fail beside it.
The faults: the reward collapses, the gradient norm spikes, the answers run past the length limit,
the gradient norm collapses to a tenth of its lowest value (a floor), the gradient norm spikes
after the steps the bands were measured on (late), and every step takes 30% longer (slow).
The row "margin:0.25, before" is the previous default: a margin of an amount on every metric,
every band over the steps measured, and medians with no tolerance (judge's --rtol). A second
table holds the medians alone, with their tolerance as derive writes it, as a band's margin of
the runs' medians would make it, and without one of its parts (TOLERANCES): how often the next
clean run's medians pass, how often a step time 30% (slow) or 15% slower fails, and the typical
tolerance of the noisiest time. A third table holds corridors (`derive --kind corridor`,
derive/corridor.py) by their SPREAD: how often each seed passes the corridors derived from the
others (leave-one-out), how often a fourth clean seed passes them, and how often a run whose
training lags 20 steps, or whose reward collapses, fails one. Tests import the generator from here.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from metrics_manual.derive import corridor  # noqa: E402
from metrics_manual.derive.methods import DEFAULT_METHOD  # noqa: E402
from metrics_manual.derive.stats import (  # noqa: E402
    MedianRange,
    Method,
    band_bounds,
    median_range,
    round_down,
    round_up,
)
from metrics_manual.derive.trend import trend  # noqa: E402
from metrics_manual.model.schema import DOMAIN_BOUNDS, Domain  # noqa: E402
from metrics_manual.model.tolerance import DEFAULT_RTOL  # noqa: E402

Series = dict[str, dict[int, float]]

# key -> its domain in the real catalog (ranges/catalog.yaml): lengths in tokens and a norm cannot be negative.
BANDED: dict[str, Domain] = {
    "rollout/raw_reward": "any",
    "rollout/response_lengths": "non-negative",
    "train/grad_norm": "non-negative",
    "train/ppo_kl": "any",
}
# Times, in seconds (the real catalog's unit s): derive ranges them by a median.
MEDIANS = ("perf/step_time", "perf/train_wait_time", "perf/rollout_time")
# the metrics faulty_run breaks
FAULTS = ("rollout/raw_reward", "train/grad_norm", "rollout/response_lengths", "perf/step_time")
TOKEN_LIMIT = 1024


def clean_run(seed: int, steps: int, horizon: int | None = None) -> Series:
    """One clean run: what two seeds of one setup differ by, and what one run's steps differ by.

    `horizon`: the steps the training schedule spans (default: `steps`); a run longer than its
    horizon is the same training carried on past it.
    """
    rng = random.Random(seed)
    offset = {k: rng.gauss(0, 1) for k in ("reward", "length", "grad", "time")}  # the seed's own level
    span = max((horizon or steps) - 1, 1)
    run: Series = {}
    for s in range(steps):
        progress = s / span
        reward = 0.35 + 0.4 / (1 + math.exp(-8 * (progress - 0.4))) + 0.015 * offset["reward"]
        length = 520 * (1 + 0.35 * progress) * math.exp(0.04 * offset["length"])
        grad = 1.1 * math.exp(0.12 * offset["grad"]) * (2.2 if s < 3 else 1.0)
        values = {
            "rollout/raw_reward": reward + rng.gauss(0, 0.03),
            "rollout/response_lengths": min(length * rng.lognormvariate(0, 0.08), TOKEN_LIMIT),
            # log-normal with a rare heavier spike: a gradient norm's own tail
            "train/grad_norm": grad
            * rng.lognormvariate(0, 0.25)
            * (rng.uniform(1.5, 2.5) if rng.random() < 0.004 else 1),
            "train/pg_clipfrac": 0.0,
            "train/ppo_kl": 0.0 if s == 0 else rng.gauss(2e-4, 1.2e-4),
            "perf/step_time": 150 * math.exp(0.03 * offset["time"]) + rng.gammavariate(2, 4),
            "perf/train_wait_time": rng.gammavariate(2, 1),
            # longer answers take longer to generate: the seed that writes longer ones rolls out slower
            "perf/rollout_time": (45 + rng.gammavariate(3, 2)) * math.exp(0.06 * offset["length"]),
        }
        for key, value in values.items():
            run.setdefault(key, {})[s] = value
    return run


def _reward_collapse(run: Series, measured: int) -> None:
    for s in range(measured // 2, measured // 2 + max(measured // 20, 3)):
        run["rollout/raw_reward"][s] = 0.02


def _grad_spikes(run: Series, measured: int) -> None:
    for s in (measured // 3, measured // 3 + 7, measured // 3 + 19):
        run["train/grad_norm"][s] *= 40


def _lengths_past_the_limit(run: Series, measured: int) -> None:
    for s in range(2 * measured // 3, 2 * measured // 3 + 10):
        run["rollout/response_lengths"][s] = float(TOKEN_LIMIT) * 2.5  # far past any clean run (a broken limit)


def _grad_floor(run: Series, measured: int) -> None:
    lowest = min(run["train/grad_norm"].values())
    for s in range(measured // 4, measured // 4 + 10):
        run["train/grad_norm"][s] = lowest / 10  # the updates vanish: a tenth of the run's own lowest


def _late_grad_spike(run: Series, measured: int) -> None:
    late = [s for s in run["train/grad_norm"] if s >= measured]
    for s in late[len(late) // 2 : len(late) // 2 + 3]:
        run["train/grad_norm"][s] *= 40


def _slower(run: Series, factor: float) -> None:
    for s in run["perf/step_time"]:
        run["perf/step_time"][s] *= factor


def _slow(run: Series, measured: int) -> None:
    _slower(run, 1.3)  # every step 30% slower


# name -> (the metric it breaks, how it is planted in a run of which `measured` steps were measured).
PLANTED: dict[str, tuple[str, Callable[[Series, int], None]]] = {
    "reward collapse": ("rollout/raw_reward", _reward_collapse),
    "gradient spikes": ("train/grad_norm", _grad_spikes),
    "lengths past the limit": ("rollout/response_lengths", _lengths_past_the_limit),
    "floor": ("train/grad_norm", _grad_floor),
    "late": ("train/grad_norm", _late_grad_spike),
    "slow": ("perf/step_time", _slow),
}


def faulty_run(seed: int, steps: int) -> Series:
    """A clean run with the faults of FAULTS planted: a reward collapse, gradient spikes and a collapse
    of the gradient norm to a tenth of its lowest, lengths past the limit, every step 30% slower."""
    run = clean_run(seed, steps)
    for name in ("reward collapse", "gradient spikes", "lengths past the limit", "floor", "slow"):
        PLANTED[name][1](run, steps)
    return run


Band = tuple[float, float, int | None]  # min, max, and the steps it reaches (None: every step)
Median = tuple[float, float, int]  # value, relative tolerance, steps


def failing(run: Series, bands: dict[str, Band], medians: dict[str, Median]) -> set[str]:
    """The metrics the run fails: a value outside its band, or a median farther than its tolerance (as judge)."""
    out = {
        k for k, (lo, hi, n) in bands.items() if any(not lo <= v <= hi for s, v in run[k].items() if n is None or s < n)
    }
    for k, (value, tolerance, n) in medians.items():
        if abs(statistics.median(v for s, v in run[k].items() if s < n) - value) > tolerance * abs(value):
            out.add(k)
    return out


def _before(values: list[float], method: Method, domain: Domain) -> tuple[float, float]:
    """The previous default's bounds: the envelope of an amount, then kept to the domain, rounded outward."""
    low, high = DOMAIN_BOUNDS[domain]
    lo, hi = method.envelope(values, "any")
    lo, hi = (max(lo, low), max(hi, low)) if low is not None else (lo, hi)
    lo, hi = (min(lo, high), min(hi, high)) if high is not None else (lo, hi)
    return round_down(lo, 3), round_up(hi, 3)


def bands_from(runs: list[Series], method: Method, before: bool = False) -> dict[str, Band]:
    """Each banded metric's band from the runs, as derive writes it (`before`: as it wrote it until now)."""
    out: dict[str, Band] = {}
    steps = min(len(r["train/grad_norm"]) for r in runs)
    for key, domain in BANDED.items():
        values = [v for r in runs for v in r[key].values()]
        if before:
            out[key] = (*_before(values, method, domain), steps)
            continue
        reach = steps if trend([sorted(r[key].items()) for r in runs]).trending else None
        out[key] = (*band_bounds(values, method, 3, domain), reach)
    return out


def _written(r: MedianRange) -> tuple[float, float]:
    assert r.tolerance is not None  # no time of these runs has a median of 0
    return r.value, r.tolerance


def _margin_of_medians(runs: list[list[float]]) -> tuple[float, float]:
    """The default method's envelope of the runs' medians, as a band's of its values (a time cannot be negative)."""
    r = median_range(runs, 3)
    lo, hi = Method.parse(DEFAULT_METHOD).envelope(r.medians, "non-negative")
    return r.value, round_up(max(r.value - lo, hi - r.value) / r.value, 3)


# A median's tolerance as derive writes it; none (judge's --rtol: "before"); the default method's
# margin applied to the runs' medians; one of its parts left out or changed: what each part does.
TOLERANCES: dict[str, Callable[[list[list[float]]], tuple[float, float]]] = {
    "as derive writes it": lambda runs: _written(median_range(runs, 3)),
    "none, judge's --rtol (before)": lambda runs: (median_range(runs, 3).value, DEFAULT_RTOL),
    f"{DEFAULT_METHOD} of the runs' medians, as a band": _margin_of_medians,
    "without the noise of a run's median": lambda runs: _written(median_range(runs, 3, errors=0)),
    "without the floor": lambda runs: _written(median_range(runs, 3, floor=0)),
    "a multiplier of 2": lambda runs: _written(median_range(runs, 3, spread=2)),
    "a multiplier of 4": lambda runs: _written(median_range(runs, 3, spread=4)),
}
WRITTEN, NONE = list(TOLERANCES)[:2]


def medians_from(runs: list[Series], tolerance: str = WRITTEN) -> dict[str, Median]:
    """Each time's median and its tolerance (one of TOLERANCES) from the runs."""
    steps = min(len(r["perf/step_time"]) for r in runs)
    return {key: (*TOLERANCES[tolerance]([list(run[key].values()) for run in runs]), steps) for key in MEDIANS}


METHODS = (
    "minmax",
    "margin:0.1",
    "margin:0.25",
    "margin:0.35",
    "margin:0.5",
    "sigma:3",
    "sigma:4",
    "sigma:5",
    "percentile:1,99",
)
BEFORE = f"{DEFAULT_METHOD}, before"


class Row:
    def __init__(self, name: str) -> None:
        self.name = name
        self.passes = self.false_faulty = 0
        self.caught: dict[str, int] = dict.fromkeys(PLANTED, 0)


def measure(trials: int, steps: int, seeds: int, longer: float = 1.5) -> list[Row]:
    """Per method (and the previous default): what the next clean run and each planted fault give."""
    rows = {name: Row(name) for name in (*METHODS, BEFORE)}
    methods = {name: Method.parse(name.removesuffix(", before")) for name in rows}
    following = max(steps, round(steps * longer))
    for t in range(trials):
        base = 1000 * t
        runs = [clean_run(base + i, steps) for i in range(seeds)]
        clean = clean_run(base + 900, following, horizon=steps)
        faulty = {}
        for name, (key, plant) in PLANTED.items():
            run = clean_run(base + 901, following, horizon=steps)
            plant(run, steps)
            faulty[name] = (key, run)
        for name, row in rows.items():
            bands = bands_from(runs, methods[name], before=name == BEFORE)
            medians = medians_from(runs, NONE if name == BEFORE else WRITTEN)
            fails = failing(clean, bands, medians)
            row.passes += not fails
            for fault, (key, run) in faulty.items():
                fails = failing(run, bands, medians)
                row.caught[fault] += key in fails
                row.false_faulty += len(fails - {key})
    return list(rows.values())


class MedianRow:
    def __init__(self, name: str) -> None:
        self.name = name
        self.passes = self.slow = self.slower = 0
        self.wait: list[float] = []  # the wait time's tolerance, per trial


def measure_medians(trials: int, steps: int, seeds: int, longer: float = 1.5) -> list[MedianRow]:
    """Per tolerance of TOLERANCES: how often the next clean run's medians pass, and how often a step
    time 30% (slow) or 15% slower fails."""
    rows = {name: MedianRow(name) for name in TOLERANCES}
    following = max(steps, round(steps * longer))
    for t in range(trials):
        base = 1000 * t
        runs = [clean_run(base + i, steps) for i in range(seeds)]
        clean = clean_run(base + 900, following, horizon=steps)
        slow = clean_run(base + 901, following, horizon=steps)
        _slow(slow, steps)
        slower = clean_run(base + 901, following, horizon=steps)
        _slower(slower, 1.15)
        for name, row in rows.items():
            medians = medians_from(runs, name)
            row.passes += not failing(clean, {}, medians)
            row.slow += "perf/step_time" in failing(slow, {}, medians)
            row.slower += "perf/step_time" in failing(slower, {}, medians)
            row.wait.append(medians["perf/train_wait_time"][1])
    return list(rows.values())


CORRIDORED = (*BANDED, "perf/step_time")
SPREADS = (1.5, 2.0, 3.0, corridor.SPREAD)


def corridors_from(runs: list[Series], spread: float) -> dict[str, corridor.Fit]:
    """A corridor per metric of CORRIDORED, as derive fits it (its tolerances unrounded)."""
    out = {}
    for key in CORRIDORED:
        fitted = corridor.fit({str(i): run[key] for i, run in enumerate(runs)}, spread)
        assert not isinstance(fitted, str), fitted
        out[key] = fitted
    return out


def outside(run: Series, corridors: dict[str, corridor.Fit]) -> set[str]:
    """The metrics whose value lies outside their corridor at a step of its reference (as judge holds it)."""
    out = set()
    for key, f in corridors.items():
        for s, ref in f.points:
            up = max((f.up.rel or 0) * abs(ref), f.up.floor or 0)
            down = max((f.down.rel or 0) * abs(ref), f.down.floor or 0)
            if s in run[key] and not ref - down <= run[key][s] <= ref + up:
                out.add(key)
                break
    return out


def _lagging(run: Series, lag: int) -> Series:
    """The same training `lag` steps late: each metric at step s is what it was at step s - lag."""
    return {k: {s: v[max(s - lag, 0)] for s in v} for k, v in run.items()}


@dataclass
class CorridorRow:
    spread: float
    left_out: int = 0  # seed sets where each seed passes the corridors of the others
    fourth: int = 0  # a fourth clean seed passes every corridor
    lag: int = 0  # a run 20 steps late fails the reward's corridor
    collapse: int = 0  # a reward collapse fails the reward's corridor


def measure_corridors(trials: int, steps: int, seeds: int) -> list[CorridorRow]:
    rows = [CorridorRow(k) for k in SPREADS]
    for t in range(trials):
        base = 1000 * t
        runs = [clean_run(base + i, steps) for i in range(seeds)]
        fourth = clean_run(base + seeds, steps)
        late = _lagging(clean_run(base + seeds + 1, steps), 20)
        collapsed = clean_run(base + seeds + 2, steps)
        _reward_collapse(collapsed, steps)
        for row in rows:
            row.left_out += all(
                not outside(run, corridors_from(runs[:i] + runs[i + 1 :], row.spread)) for i, run in enumerate(runs)
            )
            every = corridors_from(runs, row.spread)
            row.fourth += not outside(fourth, every)
            row.lag += "rollout/raw_reward" in outside(late, every)
            row.collapse += "rollout/raw_reward" in outside(collapsed, every)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--seeds", type=int, default=3, help="clean runs a band is derived from")
    ap.add_argument("--longer", type=float, default=1.5, help="the next runs' length, in the derived runs' steps")
    args = ap.parse_args()
    print(
        f"{args.trials} trials, {args.seeds} clean runs of {args.steps} steps each, {len(BANDED)} banded metrics, "
        f"{len(MEDIANS)} medians, "
        f"next runs of {max(args.steps, round(args.steps * args.longer))} steps, {len(PLANTED)} faults each in a run of its own"
    )
    # "slow" (a median's fault) is in the medians' table: a median's tolerance does not depend on the method.
    print("| method | next clean run passes | faults caught | floor | late | false fails |")
    print("|---|---|---|---|---|---|")
    n = args.trials
    for row in measure(n, args.steps, args.seeds, args.longer):
        caught = sum(row.caught.values()) / (n * len(PLANTED))
        print(
            f"| {row.name} | {row.passes / n:.0%} | {caught:.0%} "
            f"| {row.caught['floor'] / n:.0%} | {row.caught['late'] / n:.0%} | {row.false_faulty / (n * len(PLANTED)):.2f} |"
        )
    print()
    print("| a median's tolerance | next clean run's medians pass | slow | 15% slower | wait time's tolerance |")
    print("|---|---|---|---|---|")
    for m in measure_medians(n, args.steps, args.seeds, args.longer):
        print(
            f"| {m.name} | {m.passes / n:.0%} | {m.slow / n:.0%} | {m.slower / n:.0%} "
            f"| {statistics.median(m.wait):.0%} |"
        )
    print()
    print(f"corridors of {len(CORRIDORED)} metrics, from {args.seeds} clean runs of {args.steps} steps:")
    print("| spread | leave-one-out holds | a fourth seed passes | 20 steps late caught | reward collapse caught |")
    print("|---|---|---|---|---|")
    for c in measure_corridors(n, args.steps, args.seeds):
        print(f"| {c.spread:g} | {c.left_out / n:.0%} | {c.fourth / n:.0%} | {c.lag / n:.0%} | {c.collapse / n:.0%} |")


if __name__ == "__main__":
    main()
