"""The `metrics-manual` command: every command registers here, by name, and is imported when it runs.

Exit codes: 0 all good, 1 for the commands of `EXIT_1` when what they hold does not hold, 2 bad
input or a file that cannot be written (nothing was changed; for judge also a run file with a
corrupt or hostile line: the verdicts are printed with the finding).
"""

from __future__ import annotations

import importlib

import click

from metrics_manual import __version__

# Each command's module is imported only when that command runs (or its help is asked for), so
# `--version` and the start of `judge` or `validate` do not pay for the site, the exports or
# pydantic's models they do not use. name -> (module, attribute, the short help `--help` lists;
# a test holds it equal to the command's own).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "validate": ("metrics_manual.cli.project", "validate", "Load and validate ranges/."),
    "build": ("metrics_manual.cli.project", "build", "Write pages, exports and schemas that changed."),
    "check": ("metrics_manual.cli.project", "check", "Compare docs/ with ranges/ in memory."),
    "export": ("metrics_manual.cli.project", "export", "Export one profile in a format other tools read."),
    "judge": ("metrics_manual.cli.judge", "judge_command", "Judge a run against a profile: pass, fail or error."),
    "derive": ("metrics_manual.cli.derive", "derive_command", "Compute a profile's ranges from runs."),
    "diff": ("metrics_manual.cli.diff", "diff_command", "What changed in ranges/ between two git revisions."),
    "coverage": (
        "metrics_manual.cli.coverage",
        "coverage_command",
        "Hold the catalog against the keys a Miles checkout logs.",
    ),
    "list": ("metrics_manual.cli.listing", "list_command", "List the documented metrics or the profiles."),
}

# The commands that exit 1, and when: what each holds does not hold. Every other command exits 0 or 2.
# The overview's help lists them; tests/cli/test_exit_codes.py holds this to the commands' code, and
# README.md and docs/maintaining.md to this.
EXIT_1: dict[str, str] = {
    "check": "docs/ drifted from ranges/, or a capture breaks its profile",
    "judge": "a run that fails its profile, or nothing judged",
    "derive": "a range it could not derive, or runs that break the profile",
    "coverage": "the catalog and the checkout disagree, or an entry waits to be re-read",
}

_EXIT_1_ROWS = "".join(f"  {name:<10}{why}\n" for name, why in EXIT_1.items())
HELP = f"""Keep the metrics manual true: ranges/ -> pages, profiles and schemas.

Exit codes: 0 all good; 2 bad input (judge: also a run file it could not read whole) or a failed
write; 1 when what a command holds does not hold:

\b
{_EXIT_1_ROWS}
\b
Shell completion (bash; zsh_source and fish_source for the others):
  eval "$(_METRICS_MANUAL_COMPLETE=bash_source metrics-manual)"
"""


class LazyGroup(click.Group):
    """A group whose commands are imported by name when first used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute, _ = COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The list of commands with their short help, without importing them."""
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    invoke_without_command=True,
    help=HELP,
)
@click.version_option(__version__, "-V", "--version", prog_name="metrics-manual")
@click.pass_context
def main(ctx: click.Context) -> None:
    if ctx.invoked_subcommand is None:  # a bare `metrics-manual`: the overview, and exit 0
        click.echo(ctx.get_help())


if __name__ == "__main__":  # pragma: no cover
    main()
