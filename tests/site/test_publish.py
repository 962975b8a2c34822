"""Publishing: versions deployed with mike into a local git repository (no network), each with its own ranges."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, write_project
from git_helpers import commit, edit, git
from metrics_manual.site.release import PUBLISH_CONFIG, release_name

BIN = Path(sys.executable).parent
URL = "https://example.org/manual/"


def _mike(root: Path, *args: str, site_url: str = "https://example.org/manual/") -> str:
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # mike runs `mkdocs`
        "SITE_URL": site_url,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    out = subprocess.run([str(BIN / "mike"), *args], cwd=root, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_publish_config_adds_the_version_selector_to_the_site_config() -> None:
    config = yaml.safe_load((REPO / PUBLISH_CONFIG).read_text("utf-8"))
    assert config["INHERIT"] == "mkdocs.yml"
    assert config["extra"]["version"]["provider"] == "mike"
    workflow = yaml.safe_load((REPO / ".github/workflows/publish.yml").read_text("utf-8"))
    steps = [s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"]]
    assert any("make publish" in s for s in steps) and any("pytest" in s for s in steps)
    assert "PAGES_URL" in json.dumps(workflow)
    # Each version's exports link into its own pages.
    assert "SITE_URL=$(PAGES_URL)$(VERSION)/" in (REPO / "Makefile").read_text("utf-8")


@pytest.mark.slow
def test_two_versions_each_with_their_own_ranges(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(REPO / "docs", root / "docs")  # the hand-written pages; build replaces the generated ones
    write_project(root)
    for name in ("mkdocs.yml", PUBLISH_CONFIG):
        shutil.copy(REPO / name, root / name)
    (root / ".gitignore").write_text("site/\n", "utf-8")
    git(root, "init", "-q", "-b", "main")
    commit(root, "Ranges read at Miles 31f1ca96")
    first = release_name(root)
    _mike(root, "deploy", "-F", PUBLISH_CONFIG, "--update-aliases", first, "latest", site_url=f"{URL}{first}/")
    # A new Miles commit, a moved band: the next release.
    edit(root, "ranges/catalog.yaml", "commit: 31f1ca96", "commit: 0a1b2c3d")
    edit(root, "ranges/profiles/tiny.yaml", "max: 0.9", "max: 0.95")
    commit(root, "Ranges read at Miles 0a1b2c3d")
    second = release_name(root)
    assert (first, second) == ("miles-31f1ca96", "miles-0a1b2c3d")
    _mike(root, "deploy", "-F", PUBLISH_CONFIG, "--update-aliases", second, "latest", site_url=f"{URL}{second}/")
    _mike(root, "set-default", "-F", PUBLISH_CONFIG, "latest")

    versions = json.loads(git(root, "show", "gh-pages:versions.json"))
    # mike orders versions by its own version sort; what matters is both are there and latest moved.
    assert {v["version"]: v["aliases"] for v in versions} == {second: ["latest"], first: []}

    def page(version: str) -> str:
        return git(root, "show", f"gh-pages:{version}/reference/metrics/rollout/index.html")

    old, new = page(first), page(second)
    assert "0.5 to 0.9 per step" in old and "0.5 to 0.95" not in old
    assert "0.5 to 0.95 per step" in new
    # Material's version selector on every page of a version.
    files = git(root, "ls-tree", "-r", "--name-only", "gh-pages", "--", second).splitlines()
    pages = [f for f in files if f.endswith(".html")]
    assert pages
    for f in pages:
        html = git(root, "show", f"gh-pages:{f}")
        assert re.search(r'"version":\s*\{[^}]*"provider":\s*"mike"', html), f
    # Each version's exports link into that version's own pages.
    for version in (first, second):
        rules = git(root, "show", f"gh-pages:{version}/export/tiny.rules.yml")
        assert f"{URL}{version}/reference/metrics/training/#m-train-grad_norm" in rules
    assert "Ranges read at Miles 0a1b2c3d" in git(root, "show", f"gh-pages:{second}/changes/index.html")
    # The working tree is untouched by publishing.
    assert git(root, "status", "--porcelain", "--", "ranges") == ""
