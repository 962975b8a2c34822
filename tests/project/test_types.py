"""The package type-checks: public functions carry types, and mypy holds them to it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO


@pytest.mark.slow
def test_mypy_passes_on_the_package() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "tools/metrics_manual"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
