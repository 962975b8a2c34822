"""`coverage --write` on a hostile checkout (odd paths, binary files, links out of the tree) and a hostile
project (a catalog that is a link): findings, never a traceback; it writes only the catalog, never through a
link, and nothing of the checkout."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import run_cli, snapshot, write_project
from git_helpers import commit, git
from miles_tree import tree

CATALOG = """\
title: Metrics
code: {{repository: example/miles, branch: main, commit: {commit}}}
step_keys: {{train: train/step}}
sections:
  - id: training
    title: Training
    metrics:
{entries}"""
ENTRY = """\
      - key: train/{name}
        meaning: odd
        origin:
          path: "{path}"
          symbol: f
          line: 2
          evidence: 'return {{"train/{name}": 1}}'
          computed: odd
          logged: every step
"""
ODD = {  # name -> path, all defining f() that logs train/<name>
    "space": "miles/an odd name é.py",
    "binary": "miles/binary.py",
    "link": "miles/link.py",
    "linked_dir": "miles/outdir/f.py",
    "gone": "../outside.py",
}


def _f(name: str) -> str:
    return f'def f():\n    return {{"train/{name}": 1}}\n'


def hostile(tmp_path: Path) -> tuple[Path, str, Path]:
    outside = tree(tmp_path / "outside", {"outside.py": _f("link"), "dir/f.py": _f("linked_dir")})
    miles = tree(tmp_path / "miles", {ODD["space"]: _f("space"), "miles/ok.py": _f("ok")})
    (miles / "miles" / "binary.py").write_bytes(_f("binary").encode() + b"\x00\xff\xfe garbage \x80\n")
    (miles / "miles" / "link.py").symlink_to(outside / "outside.py")
    (miles / "miles" / "outdir").symlink_to(outside / "dir", target_is_directory=True)
    (miles / "miles" / "bad\udcffname.py").write_bytes(_f("undecodable").encode())
    git(miles, "init", "-q", "-b", "main")
    return miles, commit(miles, "A"), outside


def test_a_hostile_checkout_gets_findings_and_write_touches_only_the_catalog(tmp_path: Path) -> None:
    miles, a, outside = hostile(tmp_path)
    for name in ("space", "binary"):  # B: every file one line lower
        p = miles / ODD[name]
        p.write_bytes(b"\n" + p.read_bytes())
    (miles / "miles" / "link.py").unlink()
    (miles / "miles" / "link.py").symlink_to("/etc/passwd")
    commit(miles, "B")
    entries = "".join(ENTRY.format(name=n, path=p) for n, p in ODD.items())
    root = write_project(tmp_path / "p", CATALOG.format(commit=a, entries=entries), profiles={})
    project_before, miles_before, outside_before = snapshot(root), snapshot(miles), snapshot(outside)
    links = {p: os.readlink(p) for p in (miles / "miles" / "link.py", miles / "miles" / "outdir")}
    ran = run_cli("coverage", "--root", str(root), "--miles", str(miles), "--write")  # a traceback raises here
    assert ran.returncode == 1, ran.stderr
    assert "Traceback" not in ran.stdout + ran.stderr
    after = snapshot(root)
    assert {k for k in after if after[k] != project_before.get(k)} == {"ranges/catalog.yaml"}
    assert snapshot(miles) == miles_before and snapshot(outside) == outside_before
    assert {p: os.readlink(p) for p in links} == links
    text = after["ranges/catalog.yaml"].decode()
    # What only moved is re-anchored (the odd name, a line lower); a binary file that does not parse, what git
    # holds as a link, a path through a link and a path out of the tree are never read: flagged, kept as they were.
    items = ran.stdout.split("work list: ", 1)[1]
    for name in ("binary", "link", "linked_dir", "gone"):
        assert f"train/{name} (ranges/catalog.yaml:" in items
    assert f"          read_at: {a}" in text and text.count("read_at:") == 4
    assert text.count("line: 3") == 1 and "undecodable" not in text
    assert "miles/bad\\udcffname.py:2" in ran.stdout  # an undecodable name, shown escaped


def test_write_never_writes_through_a_catalog_that_is_a_link(tmp_path: Path) -> None:
    miles, a, _ = hostile(tmp_path)
    (miles / "miles" / "ok.py").write_text("\n" + _f("ok"), "utf-8")
    commit(miles, "B")
    root = write_project(
        tmp_path / "p", CATALOG.format(commit=a, entries=ENTRY.format(name="ok", path="miles/ok.py")), profiles={}
    )
    real = root / "elsewhere.yaml"
    (root / "ranges" / "catalog.yaml").rename(real)
    (root / "ranges" / "catalog.yaml").symlink_to(real)
    before = real.read_text("utf-8")
    ran = run_cli("coverage", "--root", str(root), "--miles", str(miles), "--write")
    assert ran.returncode == 2
    assert "is a symlink; coverage --write writes only real files" in ran.stderr and "nothing" in ran.stderr
    assert real.read_text("utf-8") == before and (root / "ranges" / "catalog.yaml").is_symlink()
