"""Which `derive --method` should be the default? Measured on generated Miles-shaped runs.

    python tools/derive_methods.py [--trials 40] [--steps 400] [--seeds 3]

A clean run has what real runs have: a per-run offset (seed effects), a trend over training,
per-step noise, skewed metrics (lengths, times) and rare spikes (gradient norm). A faulty run
is a clean one with three planted faults: the reward collapses, the gradient norm spikes,
the answers hit the length limit. For each method the table gives how often a fresh clean
run of the same setup passes every derived band (the next run's view), how many clean
metrics fail per run, and how many of the faulty run's faults are caught, with how many
false fails beside them. Bands are what derive writes: envelope, clamped to the domain,
rounded outward to 3 digits (`stats.band_bounds`). Tests import the generator from here.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from metrics_manual.derive.stats import Method, band_bounds  # noqa: E402
from metrics_manual.model.schema import Domain  # noqa: E402

Series = dict[str, dict[int, float]]

# key -> the domain its unit or declaration gives in the test catalog (derive_helpers.SEEDS_CATALOG).
BANDED: dict[str, Domain] = {
    "rollout/raw_reward": "any",
    "rollout/response_lengths": "non-negative",
    "train/grad_norm": "non-negative",
    "train/ppo_kl": "any",
}
FAULTS = ("rollout/raw_reward", "train/grad_norm", "rollout/response_lengths")
TOKEN_LIMIT = 1024


def clean_run(seed: int, steps: int) -> Series:
    """One clean run: what two seeds of one setup differ by, and what one run's steps differ by."""
    rng = random.Random(seed)
    offset = {k: rng.gauss(0, 1) for k in ("reward", "length", "grad", "time")}  # the seed's own level
    run: Series = {}
    for s in range(steps):
        progress = s / max(steps - 1, 1)
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
            "perf/rollout_time": 45 + rng.gammavariate(3, 2),
        }
        for key, value in values.items():
            run.setdefault(key, {})[s] = value
    return run


def faulty_run(seed: int, steps: int) -> Series:
    """A clean run with the faults of FAULTS planted: a reward collapse, gradient spikes, lengths at the limit."""
    run = clean_run(seed, steps)
    for s in range(steps // 2, steps // 2 + max(steps // 20, 3)):
        run["rollout/raw_reward"][s] = 0.02
    for s in (steps // 3, steps // 3 + 7, steps // 3 + 19):
        run["train/grad_norm"][s] *= 40
    for s in range(2 * steps // 3, 2 * steps // 3 + 10):
        run["rollout/response_lengths"][s] = float(TOKEN_LIMIT) * 2.5  # far past any clean run (a broken limit)
    return run


def failing(run: Series, bands: dict[str, tuple[float, float]]) -> set[str]:
    return {k for k, (lo, hi) in bands.items() if any(not lo <= v <= hi for v in run[k].values())}


def bands_from(runs: list[Series], method: Method) -> dict[str, tuple[float, float]]:
    return {k: band_bounds([v for r in runs for v in r[k].values()], method, 3, d) for k, d in BANDED.items()}


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


def measure(trials: int, steps: int, seeds: int) -> list[tuple[str, float, float, float, float]]:
    """Per method: next clean run passes (share), clean metrics failing per run, faults caught (share),
    false fails of the faulty run per run."""
    rows = []
    for name in METHODS:
        method = Method.parse(name)
        passes = false_clean = caught = false_faulty = 0
        for t in range(trials):
            base = 1000 * t
            bands = bands_from([clean_run(base + i, steps) for i in range(seeds)], method)
            clean_fails = failing(clean_run(base + 900, steps), bands)
            passes += not clean_fails
            false_clean += len(clean_fails)
            faulty_fails = failing(faulty_run(base + 901, steps), bands)
            caught += len(faulty_fails & set(FAULTS))
            false_faulty += len(faulty_fails - set(FAULTS))
        rows.append(
            (name, passes / trials, false_clean / trials, caught / (trials * len(FAULTS)), false_faulty / trials)
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--seeds", type=int, default=3, help="clean runs a band is derived from")
    args = ap.parse_args()
    print(f"{args.trials} trials, {args.seeds} clean runs of {args.steps} steps each, {len(BANDED)} banded metrics")
    print(
        "| method | next clean run passes | clean metrics failing per run | faults caught | false fails beside the faults |"
    )
    print("|---|---|---|---|---|")
    for name, passed, false_clean, caught, false_faulty in measure(args.trials, args.steps, args.seeds):
        print(f"| {name} | {passed:.0%} | {false_clean:.2f} | {caught:.0%} | {false_faulty:.2f} |")


if __name__ == "__main__":
    main()
