"""Which commands exit 1: `EXIT_1` of cli/main.py holds to the commands' code, and the overview's help,
docs/maintaining.md's table of commands and the README hold to it.

Whether each command exits 1 when it should is tested with the command (tests/check, tests/judge,
tests/derive, tests/coverage); here, that no page or help says it of another command, or leaves one out.
"""

from __future__ import annotations

import ast
import re

from conftest import REPO, run_cli
from metrics_manual.cli.main import COMMANDS, EXIT_1


def _exits_1(module: str, function: str) -> bool:
    """Whether the command's function, or a function of its module that it calls (at any depth), can
    exit 1: names `EXIT_DRIFT`, a result's `exit_code`, or calls `sys.exit(1)`."""
    tree = ast.parse((REPO / "tools" / f"{module.replace('.', '/')}.py").read_text("utf-8"))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    seen: set[str] = set()
    todo = [function]
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        for node in ast.walk(functions[name]):
            if (isinstance(node, ast.Name) and node.id == "EXIT_DRIFT") or (
                isinstance(node, ast.Attribute) and node.attr == "exit_code"
            ):
                return True
            if isinstance(node, ast.Call):
                if isinstance(node.func, ast.Name):
                    todo.append(node.func.id)
                elif (
                    isinstance(node.func, ast.Attribute)
                    and node.func.attr == "exit"
                    and any(isinstance(a, ast.Constant) and a.value == 1 for a in node.args)
                ):
                    return True
    assert function in seen, f"{module} has no function {function}"
    return False


def test_exit_1_names_exactly_the_commands_whose_code_exits_1() -> None:
    found = {name for name, (module, function, _) in COMMANDS.items() if _exits_1(module, function)}
    assert found >= {"check", "judge"}, found  # the scan still sees how a command exits 1
    assert found == set(EXIT_1)


def test_the_overview_help_says_when_each_command_exits_1() -> None:
    ran = run_cli("--help")
    assert ran.returncode == 0
    text = " ".join(ran.stdout.split())
    for name, why in EXIT_1.items():
        assert f"{name} {why}" in text, name


def _maintaining_rows() -> dict[str, str]:
    """Command -> its exit codes, from the table of docs/maintaining.md's "The commands"."""
    text = (REPO / "docs/maintaining.md").read_text("utf-8")
    section = text.split("\n## The commands\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        if m := re.match(r"\| `metrics-manual (\w+)", line):
            assert m.group(1) not in rows, f"{m.group(1)} has two rows"
            rows[m.group(1)] = line.rstrip(" |").rsplit(" | ", 1)[1]
    return rows


def test_maintaining_lists_every_command_once_with_exit_1_where_the_code_gives_it() -> None:
    rows = _maintaining_rows()
    assert set(rows) == set(COMMANDS)
    assert {name for name, codes in rows.items() if re.match(r"0\b.*\b1\b", codes)} == set(EXIT_1), rows
    assert all(re.search(r"\b2\b", codes) for codes in rows.values()), rows


def test_readme_names_the_commands_that_exit_1_and_lists_every_command() -> None:
    text = (REPO / "README.md").read_text("utf-8")
    exit_1 = re.search(r"Exit codes: 0 [^,]*,\s+1 (.*?),\s+2 ", text, re.DOTALL)
    assert exit_1, "README.md no longer says its exit codes as `Exit codes: 0 ..., 1 ..., 2 ...`"
    assert set(re.findall(r"`(\w+)`", exit_1.group(1))) == set(EXIT_1)
    block = text.split("\n## The commands\n", 1)[1].split("```sh\n", 1)[1].split("\n```", 1)[0]
    assert set(re.findall(r"^metrics-manual (\w+)", block, re.MULTILINE)) == set(COMMANDS)
