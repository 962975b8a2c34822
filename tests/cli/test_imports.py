"""The command starts at once: each command's modules are imported when it runs (measured, not timed)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from metrics_manual.cli.main import COMMANDS, main

HEAVY = ("mkdocs", "jinja2", "markdown", "material")


def _imported_after(code: str) -> set[str]:
    """Top-level packages a fresh interpreter has imported after running `code`."""
    out = subprocess.run(
        [sys.executable, "-c", f"import sys, json; {code}; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {name.split(".")[0] for name in json.loads(out.stdout.splitlines()[-1])}


def test_the_command_alone_imports_no_command_module() -> None:
    loaded = _imported_after("import metrics_manual.cli.main")
    assert not loaded & {*HEAVY, "pydantic", "yaml"}, loaded & {*HEAVY, "pydantic", "yaml"}


@pytest.mark.parametrize("command", ["validate", "judge", "export", "list"])
def test_reading_commands_import_neither_the_site_nor_mkdocs(command: str) -> None:
    module = COMMANDS[command][0]
    loaded = _imported_after(f"import metrics_manual.cli.main, {module}")
    assert not loaded & set(HEAVY), (command, loaded & set(HEAVY))


def test_version_runs_without_a_command_module() -> None:
    code = "import sys; sys.argv = ['metrics-manual', '--version']\ntry:\n from metrics_manual.cli.main import main; main()\nexcept SystemExit: pass"
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = out.stdout.splitlines()
    assert lines[0].startswith("metrics-manual, version ")
    assert not any(
        name.startswith("metrics_manual.cli.") and name != "metrics_manual.cli.main" for name in json.loads(lines[-1])
    )


def test_the_listed_short_help_is_each_command_s_own() -> None:
    for name, (module, attribute, short_help) in COMMANDS.items():
        command = getattr(importlib.import_module(module), attribute)
        assert command.get_short_help_str(limit=200) == short_help, name
        assert main.get_command(None, name) is command  # type: ignore[arg-type]
