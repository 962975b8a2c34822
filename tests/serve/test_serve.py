"""`mkdocs serve` with an invalid source shows the findings in the browser and recovers on a good save;
`mkdocs build` fails on the same source, and reports faults as findings, never as a traceback."""

from __future__ import annotations

import html
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, TINY_PROFILE, run_cli, write_project
from site_helpers import ENV, fetch, free_port, mkdocs_build, mkdocs_build_process, wait_for

GOOD = "min: 0.25, max: 4.5"


pytestmark = pytest.mark.slow  # every test here runs `mkdocs build` or `mkdocs serve`


def broken(text: str) -> str:
    """Two findings, one of them echoing markup."""
    return text.replace(GOOD, "min: 5.25, max: 4.5").replace("title: Tiny runs", "title: Tiny runs\nevil<b>x</b>: 1")


def site_project(root: Path) -> Path:
    write_project(root)
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    for page in (REPO / "docs").glob("*.md"):
        shutil.copy(page, root / "docs" / page.name)
    shutil.copytree(REPO / "docs" / "stylesheets", root / "docs" / "stylesheets")
    return root


def set_profile(root: Path, text: str) -> None:
    (root / "ranges/profiles/tiny.yaml").write_text(text, "utf-8")


def findings(root: Path) -> list[str]:
    result = run_cli("validate", "--root", str(root))
    assert result.returncode == 2
    return [line for line in result.stderr.splitlines() if ": error: " in line]


class Serve:
    def __init__(self, root: Path, log: Path, *options: str) -> None:
        self.port = free_port()
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mkdocs",
                "serve",
                *options,
                "-a",
                f"127.0.0.1:{self.port}",
                "-f",
                str(root / "mkdocs.yml"),
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=ENV,
            start_new_session=True,
        )

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.log.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return site_project(tmp_path / "manual")


def shows_findings(page: str, lines: list[str]) -> bool:
    return 'id="metrics-manual-invalid"' in page and all(html.escape(line) in page for line in lines)


# `serve` starts on an invalid source. `serve --clean` is, in MkDocs' words, a pure `mkdocs build` then
# serving: its first build fails on an invalid source as `mkdocs build` does, so it starts on a good one.
@pytest.mark.parametrize("options", [(), ("--clean",)], ids=["serve", "serve --clean"])
def test_serve_shows_the_findings_of_an_invalid_source_and_recovers(project: Path, tmp_path: Path, options) -> None:
    set_profile(project, broken(TINY_PROFILE))
    lines = findings(project)
    assert len(lines) == 2
    if options:
        set_profile(project, TINY_PROFILE)
    server = Serve(project, tmp_path / "serve.log", *options)
    page = server.url("profiles/tiny/")
    try:
        if not options:
            wait_for(lambda: shows_findings(fetch(server.url("")), lines), 60)
            assert "{%" not in fetch(server.url(""))  # a page filled from the source says it cannot be
            set_profile(project, TINY_PROFILE)
        wait_for(lambda: "0.25 to 4.5" in (t := fetch(page)) and "metrics-manual-invalid" not in t, 60)
        # Broken while serving: the findings over the last good page, nothing written.
        set_profile(project, broken(TINY_PROFILE))
        took = wait_for(lambda: shows_findings(fetch(page), lines), 15)
        print(f"findings shown after {took:.2f} s")
        text = fetch(page)
        assert "0.25 to 4.5" in text  # the last good page, under the findings
        assert "<b>x</b>" not in text
        assert shows_findings(fetch(server.url("")), lines)  # every page says so
        assert "0.25 to 4.5" in (project / "docs/profiles/tiny.md").read_text("utf-8")  # nothing was written
        set_profile(project, TINY_PROFILE.replace(GOOD, "min: 0.25, max: 4.75"))
        took = wait_for(lambda: "0.25 to 4.75" in (t := fetch(page)) and "metrics-manual-invalid" not in t, 15)
        print(f"recovered after {took:.2f} s")
        log = (tmp_path / "serve.log").read_text("utf-8")
        assert "Traceback" not in log and lines[0] in log
    finally:
        server.stop()


def test_build_fails_on_the_invalid_source_with_its_findings(project: Path, tmp_path: Path) -> None:
    set_profile(project, broken(TINY_PROFILE))
    lines = findings(project)
    for strict in (True, False):
        command = [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "-f",
            str(project / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ]
        result = subprocess.run(command + (["--strict"] if strict else []), capture_output=True, text=True, env=ENV)
        assert result.returncode != 0
        assert all(line in result.stderr for line in lines)
        assert "Traceback" not in result.stderr


def test_a_write_error_is_a_message_not_a_traceback(project: Path, tmp_path: Path) -> None:
    mkdocs_build(project, tmp_path / "site")
    set_profile(project, TINY_PROFILE.replace(GOOD, "min: 0.25, max: 4.75"))
    export = project / "docs" / "export"
    before = {p.name: p.read_bytes() for p in export.iterdir()}
    os.chmod(export, 0o555)
    immutable = (
        shutil.which("chattr") and subprocess.run(["chattr", "+i", str(export)], capture_output=True).returncode == 0
    )
    try:
        if os.geteuid() == 0 and not immutable:
            pytest.skip("root ignores the mode and chattr +i is not available here")
        result = mkdocs_build_process(project, tmp_path / "site")
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(export)], check=True)
        os.chmod(export, 0o755)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "metrics-manual: cannot write docs/export" in result.stderr
    assert "nothing was changed" in result.stderr
    assert {p.name: p.read_bytes() for p in export.iterdir()} == before


def test_deep_nesting_is_a_finding_not_a_traceback(project: Path, tmp_path: Path) -> None:
    set_profile(project, TINY_PROFILE + "extra: " + "[" * 500 + "]" * 500 + "\n")
    result = mkdocs_build_process(project, tmp_path / "site")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    # The reader's finding at the depth it refuses; the plugin's own message if the reader ever recursed.
    assert (
        re.search(r"ranges/profiles/tiny\.yaml:\d+:\d+: error: ", result.stderr) or "nests too deeply" in result.stderr
    )


def test_serve_builds_once_per_save_and_overwrites_a_hand_edit(project: Path, tmp_path: Path) -> None:
    server = Serve(project, tmp_path / "serve.log")
    page = server.url("profiles/tiny/")
    generated = project / "docs/profiles/tiny.md"
    log = lambda: (tmp_path / "serve.log").read_text("utf-8")  # noqa: E731
    builds = lambda: log().count("Building documentation")  # noqa: E731
    # Why the watch of docs/ asked for each build: the file whose change it judged not build's own.
    asked = lambda: re.findall(r"(\S+) changed: building again", log())  # noqa: E731

    def quiet() -> int:
        """The builds once the server has been quiet for 2 s (it polls the disk twice a second)."""
        count = builds()
        time.sleep(2)
        assert builds() == count, log()
        return count

    # A build counted here is one the test's saves caused. On a loaded machine the events of one save
    # can reach MkDocs on both sides of its debounce and give a second build of the same save: counted,
    # never failed. What must never happen is a build asked for by a file build wrote.
    try:
        wait_for(lambda: "0.25 to 4.5" in fetch(page), 60)
        assert quiet() == 1
        # A saved band: a build, which writes the generated files into docs/ and starts no other.
        set_profile(project, TINY_PROFILE.replace(GOOD, "min: 0.125, max: 9876.5"))
        took = wait_for(lambda: "0.125 to 9,876.5" in html.unescape(fetch(page)), 30)
        print(f"edit shown after {took:.2f} s")
        after_band = quiet()
        assert after_band >= 2 and asked() == [], log()  # the band's page, written by build, asked for nothing
        assert "0.125 to 9,876.5" in generated.read_text("utf-8")
        # A generated page edited by hand: a build puts it back and says so, without failing under `strict`.
        generated.write_text(generated.read_text("utf-8") + "\nHAND EDIT\n", "utf-8")
        wait_for(lambda: "overwrote hand edits in docs/profiles/tiny.md" in log(), 15)
        wait_for(lambda: "HAND EDIT" not in (text := fetch(page)) and "0.125 to 9,876.5" in html.unescape(text), 15)
        assert "HAND EDIT" not in generated.read_text("utf-8")
        after_hand = quiet()
        assert after_hand > after_band and set(asked()) == {"docs/profiles/tiny.md"}, log()
        # A hand-written page: its own build.
        index = project / "docs/index.md"
        index.write_text(index.read_text("utf-8") + "\nA LINE SAVED WHILE SERVING\n", "utf-8")
        wait_for(lambda: "A LINE SAVED WHILE SERVING" in fetch(server.url("")), 15)
        assert quiet() > after_hand and set(asked()) == {"docs/profiles/tiny.md", "docs/index.md"}, log()
        # Each build has a save behind it: one per save, or two for a save split by the debounce.
        assert builds() <= 1 + 2 * 3, log()
        assert "Aborted" not in log() and "error happened during the rebuild" not in log()
    finally:
        server.stop()
