"""`metrics-manual diff`: what changed in ranges/ between two revisions, in the manual's words.

The git history and the model are imported when the command runs, not with its --help.
"""

from __future__ import annotations

import click

from metrics_manual.cli.common import fail, root_option
from metrics_manual.diagnostics.finding import ManualError

DIFF_FORMATS = ("text", "markdown", "json")  # history/report.py writes each


@click.command("diff", short_help="What changed in ranges/ between two git revisions.")
@click.argument("base", required=False)
@click.argument("head", required=False)
@root_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(DIFF_FORMATS),
    default="text",
    show_default=True,
    help="text, markdown (a pull-request comment) or json (docs/export/diff.schema.json).",
)
def diff_command(base: str | None, head: str | None, root: str | None, fmt: str) -> None:
    """What changed in ranges/ from BASE to HEAD, per profile and metric: added, removed,
    renamed and updated ranges with each changed part as before -> after, and catalog changes.

    BASE defaults to the merge base of HEAD with the main branch, HEAD to the working tree; the
    output names the base. On the main branch itself that merge base is HEAD: a note on stderr
    says so and names the bases you probably meant (the upstream, or the commit before your
    latest changes to ranges/).
    Revisions are read from git without a checkout. Exit 0 whatever changed; 2 on an unknown
    revision, a project without git history, or ranges that do not load at a revision.

    \b
    metrics-manual diff                          # this branch's changes so far
    metrics-manual diff v1 v2 --format markdown  # a pull-request comment
    """
    from metrics_manual.history.compare import compare
    from metrics_manual.history.report import to_json, to_markdown, to_text
    from metrics_manual.source.root import find_root

    try:
        d, note = compare(find_root(root), base, head)
    except ManualError as err:
        fail(err)
    if note:  # on stderr: stdout is the diff, for a pull-request comment or a tool
        click.echo(f"note: {note}", err=True)
    if fmt == "json":
        click.echo(to_json(d), nl=False)
    elif fmt == "markdown":
        click.echo(to_markdown(d), nl=False)
    else:
        click.echo(to_text(d), nl=False)
