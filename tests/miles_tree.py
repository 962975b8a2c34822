"""Small Miles-shaped source trees that the coverage tests write in tmp dirs (never a real checkout)."""

from __future__ import annotations

import textwrap
from pathlib import Path

NS = frozenset({"train", "rollout", "perf", "eval"})

# Miles' Timer and its flush, as at 31f1ca96 (miles/utils/timer.py, miles/utils/train_metric_utils.py), cut down.
TIMER = {
    "miles/utils/timer.py": """
        class Timer(metaclass=SingletonMeta):
            def __init__(self):
                self.timers = {}

            def start(self, name):
                self.timers[name] = 0.0

            def log_dict(self):
                return self.timers

        def timer(name_or_func):
            return Timer().context(name_or_func)

        def inverse_timer(name):
            Timer().end(name)
        """,
    "miles/utils/train_metric_utils.py": """
        from miles.utils.timer import Timer

        def log_perf_data_raw(rollout_id, args):
            timer_instance = Timer()
            log_dict = {f"perf/{key}_time": val for key, val in timer_instance.log_dict().items()}
            tracking.log(args, log_dict, step_key="rollout/step")
        """,
}


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), "utf-8")
    return root
