"""`metrics-manual list metrics|profiles`: what the manual documents, for people and scripts."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from metrics_manual.cli.common import fail, root_option
from metrics_manual.diagnostics.finding import ManualError

if TYPE_CHECKING:
    from metrics_manual.source.load import Manual


def metric_rows(manual: Manual) -> list[dict[str, Any]]:
    """One row per documented key: its section, unit, and the profiles that range it (in the manual's order)."""
    rows = []
    for section in manual.catalog.sections:
        for metric in section.metrics:
            keys = metric.members or [metric.key]
            rows.append(
                {
                    "key": metric.key,
                    "section": section.id,
                    "unit": metric.unit,
                    "meaning": metric.meaning,
                    "profiles": [p.id for p in manual.profiles if any(p.expectations.get(k) for k in keys)],
                }
            )
    return rows


def profile_rows(manual: Manual) -> list[dict[str, Any]]:
    """One row per profile: title, setup and how much it ranges."""
    return [
        {
            "id": p.id,
            "title": p.title,
            "setup": p.setup.model_dump(mode="json"),
            "metrics": sum(1 for v in p.expectations.values() if v),
            "expectations": sum(len(v) for v in p.expectations.values()),
            "sources": len(p.sources),
        }
        for p in manual.profiles
    ]


def _table(rows: list[list[str]]) -> str:
    """Columns padded to their widest cell; the last column is never padded."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join([*(c.ljust(w) for c, w in zip(r, widths)), r[-1]]).rstrip() for r in rows)


@click.command("list", short_help="List the documented metrics or the profiles.")
@root_option
@click.argument("what", type=click.Choice(("metrics", "profiles")))
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
def list_command(root: str | None, what: str, fmt: str) -> None:
    """List the documented metrics (key, section, unit, the profiles that range it) or the profiles."""
    try:
        from metrics_manual.source.load import load_manual
        from metrics_manual.source.root import find_root

        manual = load_manual(find_root(root))
    except ManualError as err:
        fail(err, fmt if fmt == "json" else "text")
    rows = metric_rows(manual) if what == "metrics" else profile_rows(manual)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    # Catalog text is one line with no control characters (the model refuses them), so it prints as it is.
    if what == "metrics":
        table = [["KEY", "SECTION", "UNIT", "RANGED BY"]]
        table += [[r["key"], r["section"], r["unit"] or "-", ", ".join(r["profiles"]) or "-"] for r in rows]
        summary = f"{len(rows)} metrics in {len(manual.catalog.sections)} sections"
    else:
        table = [["ID", "METRICS", "EXPECTATIONS", "TITLE"]]
        table += [[r["id"], str(r["metrics"]), str(r["expectations"]), r["title"]] for r in rows]
        summary = f"{len(rows)} profile(s)"
    click.echo(_table(table))
    click.echo(summary)
