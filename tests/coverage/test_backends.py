"""`coverage` holds each entry's `logged` to the training backend its origins live under (MM620)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli, write_project
from miles_tree import tree

MEGATRON = "miles/backends/megatron_utils/actor.py"
FSDP = "miles/backends/fsdp_utils/actor.py"
SHARED = "miles/backends/training_utils/log_utils.py"
CATALOG = """\
title: Metrics
code: {{repository: example/miles, branch: main, commit: 31f1ca96}}
step_keys: {{perf: perf/step}}
sections:
  - id: perf
    title: Perf
    metrics:
      - key: perf/x_time
        meaning: x{not_logged}
        origin:
          path: {path}
          computed: the seconds of x
          logged: {logged}
{named_at}"""


@pytest.mark.parametrize(
    ("path", "named_at", "logged", "not_logged", "finding"),
    [
        (MEGATRON, None, "every step", False, "Megatron"),
        (MEGATRON, SHARED, "every step", False, "Megatron"),  # shared code names it: still Megatron's alone
        (FSDP, None, "every step", False, "FSDP"),
        (MEGATRON, None, "every step, by the megatron backend only", False, None),
        (FSDP, None, "every step (the FSDP backend)", False, None),
        (MEGATRON, FSDP, "every step", False, None),  # both backends: no one backend to name
        (SHARED, None, "every step", False, None),
        (MEGATRON, None, "never", True, None),  # not logged: no backend logs it
        (MEGATRON, None, "every step of MegatronTrainer", False, "Megatron"),  # a word, not a part of one
    ],
)
def test_logged_names_the_one_backend_its_origins_live_under(
    tmp_path: Path, path: str, named_at: str | None, logged: str, not_logged: bool, finding: str | None
) -> None:
    text = CATALOG.format(
        path=path,
        logged=logged,
        not_logged="\n        not_logged: no process flushes it" if not_logged else "",
        named_at=f"          named_at: {{path: {named_at}, symbol: f}}\n" if named_at else "",
    )
    root = write_project(tmp_path / "p", text, profiles={})
    miles = tree(tmp_path / "miles", {"miles/x.py": "x = 1\n"})
    ran = run_cli("coverage", "--root", str(root), "--miles", str(miles))
    found = [line for line in ran.stdout.splitlines() if line.endswith("[MM620]")]
    if finding is None:
        assert found == []
        return
    folder = "miles/backends/megatron_utils/" if finding == "Megatron" else "miles/backends/fsdp_utils/"
    line = text.splitlines().index(f"          logged: {logged}") + 1
    assert found == [
        f"ranges/catalog.yaml:{line}:19: error: perf/x_time: logged does not name the {finding} backend, yet its "
        f"origins live only under {folder} [MM620]"
    ]
    assert ran.returncode == 1
