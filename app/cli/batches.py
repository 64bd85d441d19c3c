"""`icebatch batches upload|list|show|revert|abort`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.base import Connection
from app.cli.errors import print_error
from app.cli.output import (
    AsJson,
    Column,
    Exit,
    Quiet,
    ShowProgress,
    bars,
    client_errors,
    field,
    first,
    plain,
    print_fields,
    print_json,
    print_row_errors,
    print_rows,
    progress_wanted,
)

batches = typer.Typer(help="Batches: upload, follow, revert.", no_args_is_help=True)
STATUSES = "loading, staged, processing, success, failed, aborted, replaced, reverted"
FIELDS = [
    "id",
    "dataset_id",
    "status",
    "format",
    "file_count",
    "bytes",
    "row_count",
    "snapshot_id",
    "job_id",
    "restated_by",
    "created_at",
    "completed_at",
]
COLUMNS: list[Column] = [
    ("id", field("id")),
    ("status", field("status")),
    ("files", field("file_count")),
    ("rows", field("row_count")),
    ("bytes", field("bytes")),
    ("snapshot", field("snapshot_id")),
    ("created", field("created_at")),
]
NoWait = Annotated[
    bool, typer.Option("--no-wait", help="Return once the job is queued; do not wait for it.")
]


def report(batch: Any, as_json: bool, quiet: bool = False) -> None:
    """A batch as fields (people), JSON or its id alone; a failed batch prints its row errors
    and exits 1."""
    data = plain(batch)
    if quiet:
        print(data["id"])
    elif as_json:
        print_json(data)
    else:
        print_fields(data, FIELDS)
    if data.get("status") == "failed":
        print_row_errors(data)
        raise typer.Exit(Exit.FAILED)


def format_of(path: Path) -> str:
    """The batch's format from its first file's extension; exits 2 naming --format when the
    extension does not tell."""
    from icebatch_client._files import FORMATS  # the SDK's (a light module)

    found = FORMATS.get(path.suffix.lower())
    if found is None:
        print_error(
            f"cannot tell the format of {path.name!r} from its extension: "
            "pass --format csv, json or parquet"
        )
        raise typer.Exit(Exit.INVALID)
    return found


@batches.command("upload")
def upload(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Argument(help="The dataset's id or name.")],
    files: Annotated[
        list[Path],
        typer.Argument(help="The batch's files.", exists=True, dir_okay=False, readable=True),
    ],
    format: Annotated[
        str | None,
        typer.Option(help="csv, json (JSON lines) or parquet (default: from the extension)."),
    ] = None,
    replay: Annotated[
        list[str] | None,
        typer.Option(help="Replace this 'success' batch (repeat for more): a replay."),
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why (replays).")] = None,
    no_wait: NoWait = False,
    progress: ShowProgress = None,
    as_json: AsJson = False,
    quiet: Quiet = False,
) -> None:
    """Upload files as one batch: open, stream each file, complete, wait for its snapshot.

    Exits 1 when the batch fails, after printing its row-level errors.
    """
    connection: Connection = ctx.obj
    fmt = format or format_of(files[0])
    with client_errors(as_json, quiet), bars(progress_wanted(progress)) as shown:
        batch = connection.client().upload_batch(
            dataset,
            [str(f) for f in files],
            format=fmt,
            replay=replay or None,
            reason=reason,
            wait=not no_wait,
            on_upload=shown.on_upload,
            on_progress=shown.on_progress,
        )
    report(batch, as_json, quiet)


@batches.command("list")
def list_(
    ctx: typer.Context,
    dataset: Annotated[str | None, typer.Option(help="Only this dataset's (id or name).")] = None,
    status: Annotated[
        str | None, typer.Option(help=f"Only batches in this status: {STATUSES}.")
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many, newest first.")] = 50,
    as_json: AsJson = False,
) -> None:
    """List batches, newest first."""
    connection: Connection = ctx.obj
    with client_errors():
        found = first(connection.client().iter_batches(dataset, status=status), limit)
    print_rows(found, COLUMNS, as_json)


@batches.command("show")
def show(
    ctx: typer.Context,
    batch_id: Annotated[str, typer.Argument(help="The batch's id.")],
    as_json: AsJson = False,
) -> None:
    """Show a batch: status, counts, snapshot, job; a failed batch's row errors (exit 1)."""
    connection: Connection = ctx.obj
    with client_errors():
        batch = connection.client().get_batch(batch_id)
    report(batch, as_json)


@batches.command("revert")
def revert(
    ctx: typer.Context,
    batch_id: Annotated[str, typer.Argument(help="The 'success' batch to revert.")],
    no_wait: NoWait = False,
    progress: ShowProgress = None,
    as_json: AsJson = False,
) -> None:
    """Revert a batch: a tombstone hides its rows (merge-on-read; a vacuum purges them)."""
    connection: Connection = ctx.obj
    with client_errors(as_json), bars(progress_wanted(progress)) as shown:
        batch = connection.client().revert(
            batch_id, wait=not no_wait, on_progress=shown.on_progress
        )
    report(batch, as_json)


@batches.command("abort")
def abort(
    ctx: typer.Context,
    batch_id: Annotated[str, typer.Argument(help="The loading batch to abort.")],
    as_json: AsJson = False,
) -> None:
    """Abort a loading batch: its files are dropped."""
    connection: Connection = ctx.obj
    with client_errors():
        batch = connection.client().abort(batch_id)
    report(batch, as_json)
