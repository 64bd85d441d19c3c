"""`icebatch doctor`: check that the metadata store, the catalog and the warehouse agree."""

from __future__ import annotations

from typing import Annotated

import typer

from app.cli.base import cli


@cli.command()
def doctor(
    repair: Annotated[
        bool, typer.Option("--repair", help="Also repair what the system itself would repair.")
    ] = False,
    org: Annotated[str | None, typer.Option(help="Check only this org's datasets.")] = None,
    dataset: Annotated[
        str | None, typer.Option(help="Check one dataset: its id (or its name, with --org).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Check that the metadata store, the Iceberg catalog and the warehouse agree.

    Exits 0 when healthy, 1 when problems remain (after --repair: those that need a human), 2
    when --dataset names no dataset.
    """
    from app.doctor import report, service

    outcome = service.run(org=org, dataset=dataset, fix=repair)
    if dataset is not None and not outcome.datasets_checked:
        typer.echo(f"error: no dataset {dataset!r}" + (f" in org {org!r}" if org else ""), err=True)
        raise typer.Exit(2)
    typer.echo(report.as_json(outcome) if as_json else report.text(outcome))
    raise typer.Exit(0 if outcome.healthy else 1)
