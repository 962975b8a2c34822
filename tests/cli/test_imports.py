"""The command starts at once: each command's modules are imported when it runs (measured, not timed)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import run_forms
from conftest import run_cli, write_project
from judge_fixture import CATALOG, PROFILE, clean_run
from metrics_manual.cli.main import COMMANDS, main

HEAVY = ("mkdocs", "jinja2", "markdown", "material")


def _modules_after(code: str, *, last: bool = True, lines: int = 1) -> Any:
    """What a fresh interpreter prints after running `code`: sys.modules as JSON (`last`), or its own last lines."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, json\n{code}" + ("\nprint(json.dumps(sorted(sys.modules)))" if last else ""),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    printed = out.stdout.splitlines()
    return printed[-1] if lines == 1 else printed[-lines:]


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


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_commands_help_loads_no_model(command: str) -> None:
    """`metrics-manual COMMAND --help` prints its options from click and the command's words alone: no
    pydantic model, no YAML reader, no template (the help is what a newcomer runs first)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, json\nsys.argv = ['metrics-manual', {command!r}, '--help']\n"
            "from metrics_manual.cli.main import main\n"
            "try:\n    main()\nexcept SystemExit:\n    print(json.dumps(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    *help_text, modules = out.stdout.splitlines()
    assert f"Usage: metrics-manual {command}" in "\n".join(help_text)
    loaded = set(json.loads(modules))
    heavy = {m for m in loaded if m.split(".")[0] in {*HEAVY, "pydantic", "yaml", "ruamel"}}
    heavy |= {m for m in loaded if m.startswith("metrics_manual.model.") and m != "metrics_manual.model.tolerance"}
    assert not heavy, sorted(heavy)


@pytest.mark.parametrize("command", ["validate", "judge", "export", "list"])
def test_reading_commands_import_neither_the_site_nor_mkdocs(command: str) -> None:
    module = COMMANDS[command][0]
    loaded = _imported_after(f"import metrics_manual.cli.main, {module}")
    assert not loaded & set(HEAVY), (command, loaded & set(HEAVY))


def test_judge_starts_without_the_source_reader_the_exports_or_yaml() -> None:
    """judge reads the source only for a profile id: its start imports neither reader nor exports
    (nor the XML writer, for --format junit only)."""
    code = "import metrics_manual.cli.main, metrics_manual.cli.judge"
    loaded = set(json.loads(_modules_after(code)))
    assert not {"yaml", "xml"} & {m.split(".")[0] for m in loaded}
    reading = {m for m in loaded if m.startswith(("metrics_manual.source.", "metrics_manual.exports."))}
    assert reading <= {"metrics_manual.source.root"}  # finding the project reads no file of it


_BUILT = (
    "import pydantic, metrics_manual.model.schema as s, metrics_manual.judge.verdict as r\n"
    "models = [m for mod in (s, r) for m in vars(mod).values() if isinstance(m, type) and issubclass(m, pydantic.BaseModel)]\n"
    "print(json.dumps(sorted(m.__name__ for m in models if m.__pydantic_complete__)))"
)


@pytest.mark.parametrize("command", ["validate", "judge"])
def test_a_command_s_start_builds_no_model(command: str) -> None:
    """pydantic builds a model's validator when it is first used (defer_build), not at import."""
    module = COMMANDS[command][0]
    assert json.loads(_modules_after(f"import metrics_manual.cli.main, {module}\n{_BUILT}", last=False)) == []


def test_judge_of_an_exported_json_profile_builds_none_of_the_source_s_models(tmp_path: Path) -> None:
    """The real saving of defer_build: judge of an exported profile never builds Catalog, Profile or Metric,
    and never imports yaml or the source's reader."""
    project = write_project(tmp_path / "p", CATALOG, {"judged": PROFILE})
    assert run_cli("export", "--profile", "judged", "-o", str(tmp_path / "judged.json"), cwd=project).returncode == 0
    run_forms.write_events(clean_run(), tmp_path / "ev")
    argv = ["metrics-manual", "judge", "--profile", str(tmp_path / "judged.json"), str(tmp_path / "ev")]
    code = (
        f"sys.argv = {argv!r}\nimport contextlib, io\nfrom metrics_manual.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main()\n    except SystemExit as e:\n        assert e.code == 0, e.code\n"
        f"{_BUILT}\nprint(json.dumps(sorted(sys.modules)))"
    )
    built, modules = _modules_after(code, last=False, lines=2)
    assert "ProfileExport" in json.loads(built) and "Result" in json.loads(built)  # it did judge
    assert not {"Catalog", "Profile", "Metric", "Section"} & set(json.loads(built))
    assert "yaml" not in json.loads(modules) and "metrics_manual.source.load" not in json.loads(modules)


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
