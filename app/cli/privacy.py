"""`icebatch privacy delete`: a GDPR delete of every row of some identities."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli.base import Connection
from app.cli.errors import print_error
from app.cli.output import (
    AsJson,
    Exit,
    Quiet,
    ShowProgress,
    bars,
    client_errors,
    field,
    plain,
    print_fields,
    print_json,
    print_table,
    progress_wanted,
)

privacy = typer.Typer(help="Privacy (GDPR) deletes.", no_args_is_help=True)


def read_values(values: list[str] | None, values_file: Path | None) -> list[str]:
    """The identities from --value and from --values-file (one a line, blank lines skipped)."""
    found = list(values or [])
    if values_file is not None:
        listed = [line.strip() for line in values_file.read_text().splitlines() if line.strip()]
        if not listed:
            print_error(f"--values-file {values_file} holds no values: put one identity a line")
            raise typer.Exit(Exit.INVALID)
        found += listed
    if not found:
        print_error("no identity to delete: give --value V (repeatable) or --values-file F")
        raise typer.Exit(Exit.INVALID)
    return found


@privacy.command("delete")
def delete(
    ctx: typer.Context,
    dataset: Annotated[
        list[str], typer.Option(help="A dataset (id or name) to delete from; repeat for more.")
    ],
    column: Annotated[str, typer.Option(help="The identity column, e.g. user_id.")],
    value: Annotated[
        list[str] | None, typer.Option(help="An identity to delete (repeat for more).")
    ] = None,
    values_file: Annotated[
        Path | None,
        typer.Option(help="A file of identities, one a line.", exists=True, dir_okay=False),
    ] = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once submitted.")] = False,
    progress: ShowProgress = None,
    as_json: AsJson = False,
    quiet: Quiet = False,
) -> None:
    """Hide every row of these identities from every read (then a vacuum erases them).

    Waits until the job is 'complete' (logically deleted) unless --no-wait.
    """
    connection: Connection = ctx.obj
    identities = read_values(value, values_file)
    with client_errors(as_json), bars(progress_wanted(progress)) as shown:
        job = connection.client().gdpr_delete(
            dataset, column, identities, wait=not no_wait, on_progress=shown.on_progress
        )
    data = plain(job)
    if quiet:
        print(data["id"])
    elif as_json:
        print_json(data)
    else:
        print_fields(
            data,
            ["id", "status", "column", "value_count", "tombstones_written", "rows_hidden"],
        )
        print_table(
            data.get("datasets") or [],
            [(k, field(k)) for k in ("dataset_id", "status", "rows_hidden", "job_id")],
        )
    if data.get("status") == "failed":
        raise typer.Exit(Exit.FAILED)
