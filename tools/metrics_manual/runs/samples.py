"""What a form's reader reads from its sample line (runs/forms.py): the judging page shows it.

for key, step_key, step, value in sample_values(BY_NAME["console"], catalog.step_keys): ...
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from metrics_manual.runs.forms import RunForm
from metrics_manual.runs.read import read_run


def sample_values(form: RunForm, step_keys: Mapping[str, str]) -> list[tuple[str, str, int, float | str]]:
    """(key, its step key, step, value) of each value the form's reader reads from its sample, in the
    sample's order of keys (a value that is no number: its text); [] for a form without a sample line."""
    if not form.sample:
        return []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / form.sample_file
        path.write_text(form.sample + "\n", "utf-8")
        run = read_run([path], step_keys, form.name)
    return [
        (key, step_keys[key.split("/", 1)[0]], step, run.invalid.get(key, {}).get(step, value))
        for key, series in run.series.items()
        if key not in run.step_keys.values()
        for step, value in series.items()
    ]
