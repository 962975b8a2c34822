"""git run on a repository the user names (the project, a Miles checkout), reading it and running nothing it names.

A repository's own config can name commands that git runs while it reads: an fsmonitor hook (or the
builtin daemon) on every index refresh, hooks, and for a partial clone a fetch of missing objects through
a transport. Every call here turns those off, writes no index (no optional locks), and reads objects as
they are (no replace refs, which would change what a commit holds). Filter drivers run only where git
hashes working-tree files (`git status`, `git diff`): nothing here asks git to.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

SAFE_OPTIONS = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")
# For a checkout that is only read: a missing object is an error, never a fetch.
NO_FETCH = ("-c", "protocol.allow=never")


def command(*args: str, fetch: bool = True) -> list[str]:
    """`git` with the safe options, then `args`."""
    return ["git", *SAFE_OPTIONS, *(() if fetch else NO_FETCH), *args]


def environment() -> dict[str, str]:
    """The environment of every git call: no pager, no prompt, no system config, no index written."""
    return {
        **os.environ,
        "GIT_PAGER": "cat",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
    }


def output(root: Path, *args: str, stdin: bytes | None = None) -> bytes | None:
    """What a git plumbing command prints in the repository at `root` (None when it fails): a read only,
    with nothing its config names run and no object fetched."""
    try:
        done = subprocess.run(
            command("-C", str(root), *args, fetch=False),
            input=stdin,
            capture_output=True,
            timeout=120,
            check=False,
            env=environment(),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def head_commit(root: Path) -> str | None:
    """The commit of the work tree whose top folder is `root` (None for a plain folder, or a folder inside
    another repository: its HEAD is not this folder's)."""
    if not (root / ".git").exists():
        return None
    out = output(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    sha = out.decode("ascii", "replace").strip() if out else ""
    return sha if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha) else None
