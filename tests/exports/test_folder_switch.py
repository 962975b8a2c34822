"""A folder export killed at the switch: the target is never missing where the system swaps in one step,
and the next export removes what a killed one left beside it (only folders carrying its marker)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from metrics_manual.exports import folder
from metrics_manual.exports.folder import MARKER, write_folder

# write_folder in a process of its own, killed with SIGKILL at a chosen step; argv: target, text, kill point.
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from metrics_manual.exports import folder

    target, text, point = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    real_exchange, real_rename = folder.exchange, os.rename

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def exchange(a, b):
        if point == "no-exchange":
            return False
        done = real_exchange(a, b)
        die()  # after the swap, before the earlier export is removed
        return done

    renames = []

    def rename(a, b):
        real_rename(a, b)
        renames.append(a)
        if point == "no-exchange" and len(renames) == 1:
            die()  # the earlier export moved aside, the new one not yet in place

    folder.exchange = exchange
    os.rename = rename
    folder.write_folder(target, {"run/x.txt": lambda fh: fh.write(text.encode())}, "tensorboard", "p")
    """
)


def _write(target: Path, text: str) -> None:
    write_folder(target, {"run/x.txt": lambda fh: fh.write(text.encode())}, "tensorboard", "p")


def _killed(target: Path, text: str, point: str) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, str(target), text, point], capture_output=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr


def _beside(target: Path) -> list[str]:
    return sorted(p.name for p in target.parent.iterdir() if p.name != target.name)


@pytest.mark.skipif(sys.platform != "linux", reason="the one-step swap is Linux's renameat2")
def test_a_kill_after_the_swap_leaves_the_new_export_and_the_next_one_cleans_up(tmp_path: Path) -> None:
    target = tmp_path / "out" / "tb"
    target.parent.mkdir()
    _write(target, "first")
    _killed(target, "second", "swap")
    assert (target / "run/x.txt").read_text() == "second"  # complete, in place
    (left,) = _beside(target)
    assert left.startswith(".tb.") and left.endswith(".tmp")
    assert (target.parent / left / "run/x.txt").read_text() == "first"  # the earlier export, swapped out
    _write(target, "third")
    assert (target / "run/x.txt").read_text() == "third" and _beside(target) == []


def test_without_the_swap_a_kill_between_the_renames_is_repaired_by_the_next_export(tmp_path: Path) -> None:
    target = tmp_path / "out" / "tb"
    target.parent.mkdir()
    _write(target, "first")
    _killed(target, "second", "no-exchange")
    assert not target.exists()  # what the docstring says of the fallback: the gap a SIGKILL can hit
    assert sorted(name.rsplit(".", 1)[1] for name in _beside(target)) == ["old", "tmp"]
    _write(target, "third")
    assert (target / "run/x.txt").read_text() == "third" and _beside(target) == []


def _marked(path: Path, *extra: str) -> Path:
    """A folder as an export leaves it: the marker, the files it lists, and `extra` files it does not list."""
    (path / "run").mkdir(parents=True)
    (path / "run/x.txt").write_text("x")
    for name in extra:
        (path / name).write_text("mine")
    marker = {"written_by": folder.WRITTEN_BY, "format": "tensorboard", "profile": "p", "files": ["run/x.txt"]}
    (path / MARKER).write_text(json.dumps(marker))
    return path


def test_only_stale_folders_of_its_own_are_removed(tmp_path: Path) -> None:
    target = tmp_path / "tb"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)
    stale = [_marked(tmp_path / f".tb.{dead}.abc123.tmp"), _marked(tmp_path / ".tb.5pnos5hu.old")]
    (tmp_path / ".tb.x.tmp").mkdir()  # no marker: someone's
    _marked(tmp_path / f".tb.{dead}.foreign.old", "notes.txt")  # a file the marker does not list
    _marked(tmp_path / f".tb.{os.getpid()}.live.tmp")  # its process runs: an export under way
    _marked(tmp_path / f".tb.{os.getppid()}.parent.tmp")
    _marked(tmp_path / f".other.{dead}.abc.tmp")  # another target's
    _marked(tmp_path / "real")
    (tmp_path / f".tb.{dead}.link.tmp").symlink_to(tmp_path / "real")
    kept = sorted(p.name for p in tmp_path.iterdir() if p not in stale)
    _write(target, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*kept, "tb"])
    assert (tmp_path / "real/run/x.txt").read_text() == "x"
