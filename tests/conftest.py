"""Shared fixtures: tiny projects in a temp dir, tools that CI must have, golden files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

import browser_helpers

REPO = Path(__file__).resolve().parent.parent
# The project that the tests of the real tree read (marked `real_tree`): this repository, or the copy
# that METRICS_MANUAL_PROJECT names. tests/project/test_first_day.py runs them against a copy where a
# team followed docs/deriving.md, so what the docs tell a team to do keeps CI green.
PROJECT = Path(os.environ.get("METRICS_MANUAL_PROJECT") or REPO).resolve()
REAL_TREE = pytest.mark.real_tree
# The tests of the real tree run once a suite, where they hold most: on the copy test_first_day grows by
# docs/deriving.md (the real tree and three more profiles: every page, export and search of the real
# manual, grown as teams grow it). Those that hold the repository itself (it validates, agrees with its
# generated files, builds strictly) are marked REPO_ITSELF and run in the main session too: a copy that
# build has regenerated would hide a drift. METRICS_MANUAL_PROJECT=. runs them all here.
REPO_ITSELF = pytest.mark.repo_itself
ALL_REAL_HERE = bool(os.environ.get("METRICS_MANUAL_PROJECT"))
# Material warns about MkDocs 2 on every build; the in-process builds of the tests do not need to hear it.
os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# Hypothesis keeps no example database: a result depends on the code and the seed only, never
# on what an earlier run left in .hypothesis/ (a saved failure replayed there kept a clean
# checkout red). A failure prints its seed and a @reproduce_failure line to replay it.
# In CI the examples are also derandomized: the same code gives the same verdict every run.
# Each property test sets its own budget (max_examples) with @settings.
settings.register_profile("local", database=None, deadline=None)
settings.register_profile("ci", database=None, deadline=None, derandomize=True)
settings.load_profile("ci" if IN_CI else "local")

TINY_CATALOG = """\
title: Metrics
code: {repository: example/miles, url: https://example.org/miles, branch: main, commit: 31f1ca96}
step_keys: {train: train/step, rollout: rollout/step}
sections:
  - id: rollout
    title: Rollout
    metrics:
      - key: rollout/raw_reward
        meaning: the mean reward of the step
      - key: rollout/response_lengths
        meaning: the mean answer length
        unit: tokens
  - id: training
    title: Training
    metrics:
      - key: train/grad_norm
        meaning: the gradient norm
      - key: train/pg_clipfrac
        meaning: the share of clipped tokens
      - key: train/weight/*
        name: the weight statistics
        members: [train/weight/mean, train/weight/max]
        meaning: how large the weights are
"""

TINY_PROFILE = """\
id: tiny
title: Tiny runs
summary: Made up for tests.
advice: Build your own.
setup:
  framework: Miles
  model: M-1
  dataset: D
  hardware: {count: 2, name: GPU}
  prompts_per_step: 4
  answers_per_prompt: 2
  token_limit: 1024
  steps: 10
sources:
  summary: {kind: capture, path: cap/sum.json, keys: [runs.a]}
  code: {kind: code, repository: Miles, branch: main, commit: abcdef12, parts: [loss]}
section_notes:
  training: {text: Training was short., see: tiny-notes}
notes:
  - id: tiny-notes
    title: Tiny notes
    paragraphs: [We know little.]
    sources: [summary]
expectations:
  rollout/raw_reward:
    - {kind: band, min: 0.5, max: 0.9, steps: 10, sources: [summary]}
  rollout/response_lengths:
    - {kind: median, value: 400, steps: 10, condition: with plain sampling}
  train/grad_norm:
    - {kind: band, min: 0.25, max: 4.5}
    - {kind: band, min: 1, max: 3, window: {first: 2}}
  train/pg_clipfrac:
    - {kind: exact, value: 0, at: every_step}
"""


def write_project(root: Path, catalog: str = TINY_CATALOG, profiles: dict[str, str] | None = None) -> Path:
    """A project with the repo's templates and mkdocs.yml and the given source."""
    (root / "ranges" / "profiles").mkdir(parents=True, exist_ok=True)
    (root / "ranges" / "catalog.yaml").write_text(catalog, "utf-8")
    for name, text in (profiles if profiles is not None else {"tiny": TINY_PROFILE}).items():
        (root / "ranges" / "profiles" / f"{name}.yaml").write_text(text, "utf-8")
    shutil.copytree(REPO / "templates", root / "templates", dirs_exist_ok=True)
    (root / "docs").mkdir(exist_ok=True)
    return root


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write_project(tmp_path / "tiny")


def copy_repo(dest: Path) -> Path:
    """The real manual's source, templates, docs, captures (when it has some) and mkdocs.yml, in a temp dir."""
    for name in ("ranges", "templates", "docs", "captures"):
        if name != "captures" or (PROJECT / name).is_dir():
            shutil.copytree(PROJECT / name, dest / name)
    shutil.copy(PROJECT / "mkdocs.yml", dest / "mkdocs.yml")
    return dest


@dataclass(frozen=True)
class Ran:
    """What a command gave: its exit code and what it printed (the shape of subprocess.CompletedProcess)."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str, cwd: Path | None = None) -> Ran:
    """The command, called in-process as click calls it (exit code, stdout and stderr apart).

    An exception that escapes the command is raised here: a traceback fails the test. The few
    tests that need a real process (a kill, `python -m`) use `run_process`.
    """
    from click.testing import CliRunner

    from metrics_manual.cli.main import main

    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = CliRunner().invoke(main, list(args), catch_exceptions=True)
    finally:
        os.chdir(here)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


def run_build(root: Path) -> Ran:
    """`metrics-manual build` on `root`, which must succeed."""
    result = run_cli("build", "--root", str(root))
    assert result.returncode == 0, result.stderr
    return result


def run_process(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command in a real process, as a user runs it (for the few smoke tests)."""
    return subprocess.run(
        [sys.executable, "-m", "metrics_manual", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def require_tool(path: str) -> str:
    """A tool the tests drive; in CI its absence fails the test instead of skipping it."""
    found = shutil.which(path) or (path if Path(path).exists() else None)
    if not found:
        if IN_CI:
            pytest.fail(f"{path} is required in CI (make test installs it)")
        pytest.skip(f"{path} is not installed (make test installs it)")
    return found


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# Test modules whose module-scoped fixtures are dear: a whole site built (and served and read in Chromium),
# mypy's cold run on the package. Under pytest-xdist the tests of one such fixture run on one worker, so
# it is made once; a module of several sites keeps each site's tests on one worker. Every other test is a unit
# of its own, as with --dist load.
SHARED_FIXTURES = {
    "tests/site/test_browser.py": "whole module",
    "tests/site/test_many_profiles.py": "by parameter",
    "tests/project/test_security.py": "whole module",
    "tests/project/test_types.py": "whole module",
    "tests/site/test_site.py": "whole module",
}


def site_scope(nodeid: str) -> str:
    """The unit of work of a test: its shared fixture's, or its own."""
    module, _, test = nodeid.partition("::")
    how = SHARED_FIXTURES.get(module)
    if how is None:
        return nodeid
    return module + ("[" + test.rpartition("[")[2] if how == "by parameter" else "")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    # A worker more than the cores: the tests wait on servers, commands and Chromium, and a third worker
    # runs in those waits (2 cores, 2026-11-30: the suite's median 123 s with 2 workers, 113 s with 3).
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    # pytest-xdist's own loadgroup marks a test by rewriting its node id, which pytest 9.2 no longer
    # keeps; its load-scope scheduler with our scopes does the same job (the largest units first).
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # the units go out in collection order: the dearest first (below)

    class SiteScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return site_scope(nodeid)

    return SiteScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "real_tree: reads the real tree (PROJECT), not a fixture: run against a copy by test_first_day"
    )
    config.addinivalue_line(
        "markers", "repo_itself: a real-tree test that holds the repository itself, run in the main session too"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, dropped, real = [], [], []
    for item in items:
        wanted = True
        if item.get_closest_marker("real_tree"):
            real.append(item.nodeid)
            wanted = ALL_REAL_HERE or item.get_closest_marker("repo_itself") is not None
        (kept if wanted else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    config.stash[_REAL_TREE_TESTS] = real
    # The dearest units first, so that none is the suite's tail on one worker while the others idle:
    # the longest test, then the slow and browser tests, then the rest (each in its own order).
    items[:] = sorted(kept, key=_dearness)


_REAL_TREE_TESTS = pytest.StashKey[list[str]]()


@pytest.fixture(scope="session")
def real_tree_tests(request: pytest.FixtureRequest) -> list[str]:
    """The node ids of the real tree's tests this session collected (those test_first_day runs on its copy)."""
    return request.config.stash.get(_REAL_TREE_TESTS, [])


# The suite's longest test (it runs the real tree's tests on a copy): started first.
LONGEST = "tests/project/test_first_day.py::test_the_real_tree_s_tests_pass_in_the_grown_clone"


def _dearness(item: pytest.Item) -> int:
    if item.nodeid.startswith(LONGEST):
        return 0
    return 1 if item.get_closest_marker("slow") or item.get_closest_marker("browser") else 2


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/ from the current output")


@pytest.fixture
def golden(request: pytest.FixtureRequest):
    """Compare text with tests/golden/NAME; --update-golden rewrites it (never silently)."""
    update = request.config.getoption("--update-golden")

    def compare(name: str, text: str) -> None:
        path = REPO / "tests" / "golden" / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
            return
        assert path.exists(), f"no golden file {path}; run pytest --update-golden and review the diff"
        assert text == path.read_bytes().decode("utf-8"), (
            f"{name} differs from its golden file; if intended, run pytest --update-golden"
        )

    return compare


@pytest.fixture(scope="session")  # one Chromium a worker: a launch and its first page cost ~2 s of CPU
def browser() -> Iterator[Any]:
    chromium = require_tool("/usr/bin/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover
        pytest.fail("playwright is not installed (make test installs it)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=browser_helpers.CHROMIUM_ARGS, headless=True)
        yield b
        b.close()
