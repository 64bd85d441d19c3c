"""`icebatch jobs list|show|watch`, `icebatch vacuum`, `icebatch compact`: jobs and the
maintenance commands that start them."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from app.cli.base import Connection, cli
from app.cli.output import (
    AsJson,
    Column,
    Exit,
    ShowProgress,
    bars,
    client_errors,
    field,
    first,
    plain,
    print_fields,
    print_json,
    print_rows,
    progress_wanted,
)

jobs = typer.Typer(
    help="Jobs: the work behind batches, restatements and maintenance.", no_args_is_help=True
)
FIELDS = [
    "id",
    "kind",
    "state",
    "stage",
    "progress",
    "attempt",
    "subject_id",
    "request_id",
    "created_at",
    "finished_at",
    "duration_seconds",
    "error",
]
COLUMNS: list[Column] = [
    ("id", field("id")),
    ("kind", field("kind")),
    ("state", field("state")),
    ("stage", field("stage")),
    ("progress", lambda j: f"{100 * float(j.get('progress') or 0):.0f}%"),
    ("subject", field("subject_id")),
    ("created", field("created_at")),
]
NoWait = Annotated[bool, typer.Option("--no-wait", help="Return once the job is queued.")]


def report(job: Any, as_json: bool) -> None:
    """A job as fields (with its result) or JSON; a failed job exits 1."""
    data = plain(job)
    if as_json:
        print_json(data)
    else:
        result = {f"result.{k}": v for k, v in (data.get("result") or {}).items()}
        print_fields({**data, **result}, FIELDS + list(result))
    if data.get("state") == "failed":
        raise typer.Exit(Exit.FAILED)


@jobs.command("list")
def list_(
    ctx: typer.Context,
    state: Annotated[str | None, typer.Option(help="queued, running, succeeded or failed.")] = None,
    kind: Annotated[str | None, typer.Option(help="ingest, restatement, vacuum, …")] = None,
    limit: Annotated[int, typer.Option(help="At most this many, newest first.")] = 50,
    as_json: AsJson = False,
) -> None:
    """List jobs, newest first."""
    connection: Connection = ctx.obj
    with client_errors():
        found = first(connection.client().iter_jobs(state=state, kind=kind), limit)
    print_rows(found, COLUMNS, as_json)


@jobs.command("show")
def show(
    ctx: typer.Context,
    job_id: Annotated[str, typer.Argument(help="The job's id.")],
    as_json: AsJson = False,
) -> None:
    """Show a job: state, stage, progress, timings, result or error."""
    connection: Connection = ctx.obj
    with client_errors():
        job = connection.client().get_job(job_id)
    report(job, as_json)


@jobs.command("watch")
def watch(
    ctx: typer.Context,
    job_id: Annotated[str, typer.Argument(help="The job's id.")],
    timeout: Annotated[float | None, typer.Option(help="Give up after this many seconds.")] = None,
    progress: ShowProgress = None,
    as_json: AsJson = False,
) -> None:
    """Follow a job until it ends, with a progress bar; exits 1 when it fails."""
    connection: Connection = ctx.obj
    with client_errors(as_json), bars(progress_wanted(progress)) as shown:
        job = connection.client().wait_job(job_id, timeout=timeout, on_progress=shown.on_progress)
    report(job, as_json)


@cli.command()
def vacuum(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Argument(help="The dataset's id or name.")],
    mode: Annotated[str, typer.Option(help="full, or partial (with a budget).")] = "full",
    max_files: Annotated[int | None, typer.Option(help="Partial: files per run.")] = None,
    max_bytes: Annotated[int | None, typer.Option(help="Partial: bytes per run.")] = None,
    tombstones: Annotated[
        int | None, typer.Option(help="Partial: the oldest N tombstones only.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Plan only: files, bytes, rows to purge.")
    ] = False,
    no_wait: NoWait = False,
    progress: ShowProgress = None,
    as_json: AsJson = False,
) -> None:
    """Purge tombstoned rows and tombstones (admin key): a job; waits for it by default."""
    connection: Connection = ctx.obj
    options = {"max_files": max_files, "max_bytes": max_bytes, "tombstones": tombstones}
    with client_errors(as_json), bars(progress_wanted(progress)) as shown:
        job = connection.client().vacuum(
            dataset,
            mode=mode,
            dry_run=dry_run,
            wait=not no_wait,
            on_progress=shown.on_progress,
            **{k: v for k, v in options.items() if v is not None},
        )
    report(job, as_json)


@cli.command()
def compact(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Argument(help="The dataset's id or name.")],
    strategy: Annotated[str, typer.Option(help="binpack or sort.")] = "binpack",
    target_file_bytes: Annotated[
        int | None, typer.Option(help="Size of the files written.")
    ] = None,
    min_input_files: Annotated[
        int, typer.Option(help="Rewrite a partition from this many files on.")
    ] = 2,
    sort_by: Annotated[
        list[str] | None, typer.Option(help="sort: a column (repeat; default the sort order).")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Plan only.")] = False,
    no_wait: NoWait = False,
    progress: ShowProgress = None,
    as_json: AsJson = False,
) -> None:
    """Bin-pack small files or sort each partition (admin key): a rewrite job."""
    connection: Connection = ctx.obj
    options: dict[str, Any] = {"strategy": strategy, "min_input_files": min_input_files}
    if target_file_bytes is not None:
        options["target_file_bytes"] = target_file_bytes
    if sort_by:
        options["sort_by"] = sort_by
    if dry_run:
        options["dry_run"] = True
    with client_errors(as_json), bars(progress_wanted(progress)) as shown:
        job = connection.client().compact(
            dataset, wait=not no_wait, on_progress=shown.on_progress, **options
        )
    report(job, as_json)
