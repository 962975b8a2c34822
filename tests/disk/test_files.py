"""Files written as a user expects of a path (disk/files.py): the mode a plain open() gives, through a
symlink to its file, never onto a device or a pipe, which are named in words rather than opened."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, write_project
from metrics_manual.disk.files import file_kind
from site_helpers import ENV

# --- modes ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_files_get_the_mode_a_plain_open_gives(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    out = tmp_path / "rules.yml"
    script = (
        "import os, sys; os.umask(0o022); sys.argv = ['metrics-manual'] + sys.argv[1:]; "
        "from metrics_manual.cli.main import main; main()"
    )
    for args in (
        ["build", "--root", str(root)],
        ["export", "--root", str(root), "--profile", "tiny", "--format", "prometheus", "-o", str(out)],
    ):
        result = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=ENV)
        assert result.returncode == 0, result.stderr
    modes = {
        p.relative_to(root).as_posix(): stat.S_IMODE(p.stat().st_mode)
        for p in (root / "docs").rglob("*")
        if p.is_file()
    }
    assert modes and set(modes.values()) == {0o644}, modes
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    # An existing file keeps its mode, as open() keeps it.
    out.chmod(0o640)
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            "export",
            "--root",
            str(root),
            "--profile",
            "tiny",
            "--format",
            "json",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert result.returncode == 0 and stat.S_IMODE(out.stat().st_mode) == 0o640


# --- export -o --------------------------------------------------------------------------------


def test_export_output_targets(tiny: Path, tmp_path: Path) -> None:
    args = ("export", "--root", str(tiny), "--profile", "tiny", "--format", "csv")
    stdout = run_cli(*args, "-o", "-")
    assert stdout.returncode == 0 and stdout.stdout.startswith("profile,section,key")
    target = tmp_path / "real.csv"
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert run_cli(*args, "-o", str(link)).returncode == 0
    assert link.is_symlink() and target.read_text("utf-8") == stdout.stdout
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for special in (str(fifo), "/dev/null"):
        refused = run_cli(*args, "-o", special)
        assert refused.returncode == 2
        assert (
            refused.stderr
            == f"error: cannot write {special}: not a regular file; use -o - to write to standard output\n"
        )
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link.csv", "real.csv", "tiny"]


def test_a_file_that_is_not_regular_is_named_in_words(tmp_path: Path) -> None:
    """One naming for every reader that refuses such a file (the source, a run, an exported profile)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "plain").write_text("x", "utf-8")
    assert file_kind(os.stat(tmp_path / "plain").st_mode) is None
    kinds = [file_kind(os.stat(p).st_mode) for p in (tmp_path, fifo, Path("/dev/null"))]
    assert kinds == ["a folder", "a named pipe", "a character device"]
