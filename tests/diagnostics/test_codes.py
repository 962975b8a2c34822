"""Every kind of finding has one code, documented with an example and its fix; every code used is registered."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from conftest import REPO, run_cli
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import CODES, Code

PACKAGE = REPO / "tools" / "metrics_manual"


def _constants() -> dict[str, Code]:
    return {name: value for name, value in vars(codes).items() if isinstance(value, Code)}


def _used_names() -> set[str]:
    """Every `codes.NAME` the package refers to."""
    used = set()
    for file in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text("utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "codes":
                used.add(node.attr)
    return used


def test_every_code_used_is_registered_and_every_registered_code_is_used() -> None:
    constants = _constants()
    used = _used_names() - {"CODES"}
    assert used <= set(constants), used - set(constants)
    assert set(constants) - used == set(), "registered but never used"
    # A retired code stays registered (its id is never given again) but has no constant: nothing reports it.
    assert {c.id for c in constants.values()} == {c.id for c in CODES.values() if not c.retired}
    assert not any(c.retired for c in constants.values())


def test_codes_are_well_formed_and_unique() -> None:
    assert len({c.name for c in CODES.values()}) == len(CODES)
    for code in CODES.values():
        assert re.fullmatch(r"MM[1-9][0-9]{2}", code.id), code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", code.name), code
        assert code.summary.endswith(".") and code.hint.endswith("."), code
        assert re.match(r"\S+:\d+:\d+: (error|warning): ", code.example), code


def test_the_findings_page_lists_every_code_with_its_example_and_fix(tiny: Path) -> None:
    assert run_cli("build", "--root", str(tiny)).returncode == 0
    page = (tiny / "docs/findings.md").read_text("utf-8")
    for code in CODES.values():
        section = page.split(f"## {code.id} {code.name} {{#{code.id.lower()}}}\n", 1)[1].split("\n## ", 1)[0]
        assert code.example in section and f"**Fix:** {code.hint}" in section, code.id
        assert (f"**Retired:** {code.retired}" in section) == bool(code.retired), code.id
        assert f"| [{code.id}](#{code.id.lower()}) | `{code.name}` |" in page
    assert page.count("\n## MM") == len(CODES)


def test_check_advises_build_only_for_findings_build_fixes(tiny: Path) -> None:
    assert run_cli("build", "--root", str(tiny)).returncode == 0
    (tiny / "docs/export/tiny.json").unlink()
    missing = run_cli("check", "--root", str(tiny))
    assert "[MM401]" in missing.stdout and missing.stdout.rstrip().endswith(
        "run `metrics-manual build` to regenerate files"
    )
    assert codes.GENERATED_MISSING.rebuild and not codes.UNKNOWN_METRIC_IN_PAGE.rebuild


def _message_forms() -> list[re.Pattern[str]]:
    """Every message the package can build, as a pattern: an f-string's holes match any text; a plain string
    (the constant parts of f-strings aside) matches itself."""
    forms = []
    for file in PACKAGE.rglob("*.py"):
        if file.name == "codes.py":
            continue
        tree = ast.parse(file.read_text("utf-8"))
        parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                chunks = [re.escape(v.value) if isinstance(v, ast.Constant) else ".*?" for v in node.values]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
                chunks = [re.escape(node.value)]
            else:
                continue
            words = max(chunks, key=len)
            if len(words) > 12 and " " in words:  # a form with words of its own: not "{a}: {b}", not a file name
                forms.append(re.compile("".join(chunks)))
    return forms


def test_every_example_holds_a_message_the_package_builds() -> None:
    # Examples are typed by hand, so they drift from the messages: each must contain one whole message form.
    forms = _message_forms()
    for code in CODES.values():
        message = code.example.split(": ", 2)[2]  # path:line:col: severity: message
        assert code.retired or any(f.search(message) for f in forms), code.id


def test_the_usage_example_is_the_message_the_command_prints(tmp_path: Path) -> None:
    # Examples are typed by hand, so they can drift from the messages: this one is held to the command.
    ran = run_cli("validate", "--format", "json", cwd=tmp_path)
    assert ran.returncode == 2
    (f,) = json.loads(ran.stdout)
    printed = f"{f['path']}:{f['line']}:{f['col']}: {f['severity']}: {f['message']}"
    assert printed.replace(str(tmp_path.resolve()), "/tmp") == codes.USAGE.example
