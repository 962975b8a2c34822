"""git run on a repository the user names (the project, a Miles checkout), reading it and running nothing it names.

A repository's own config can name commands that git runs while it reads: an fsmonitor hook (or the
builtin daemon) on every index refresh, hooks, and for a partial clone a fetch of missing objects through
a transport. Every call here turns those off, writes no index (no optional locks), and reads objects as
they are (no replace refs, which would change what a commit holds). Filter drivers run only where git
hashes working-tree files (`git status`, `git diff`): nothing here asks git to.
"""

from __future__ import annotations

import os

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
