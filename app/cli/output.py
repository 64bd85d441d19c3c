"""How the client commands print: a table for people, `--json` for scripts, progress bars on
stderr (never mixed into stdout), and SDK errors as one line with the request id and an exit
code (never a traceback)."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from rich.text import Text

from app.cli.errors import Exit, describe, print_error

# a pipe gets whole lines (ids are never cut): rich would wrap at 80 columns
stdout = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 250)
stderr = Console(stderr=True, width=None if sys.stderr.isatty() else 250)

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON (for scripts).")]
Quiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print only the id (for scripts: X=$(icebatch …))")
]
ShowProgress = Annotated[
    bool | None,
    typer.Option(
        "--progress/--no-progress",
        help="Progress bars on stderr (default: when stderr is a terminal).",
        show_default=False,
    ),
]


def plain(value: Any) -> Any:
    """A model of the SDK (or a list or dict of them) as JSON-ready data."""
    if hasattr(value, "to_dict"):
        return plain(value.to_dict())
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def print_json(value: Any) -> None:
    """`value` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(plain(value), indent=2, default=str) + "\n")


Column = tuple[str, Callable[[dict[str, Any]], Any]]


def field(name: str) -> Callable[[dict[str, Any]], Any]:
    return lambda row: row.get(name)


def cell(value: Any) -> str:
    """One table cell: '-' for nothing, short times, readable numbers."""
    if value is None or value == "":
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, list):
        return ", ".join(cell(v) for v in value) or "-"
    text = str(value)
    if len(text) >= 19 and text[4:5] == "-" and text[10:11] == "T":  # an ISO time
        return text[:19].replace("T", " ")
    return text


def exact(value: Any) -> str:
    """A value as it was sent ('-' for none): no reformatting (row errors show the bad value)."""
    return "-" if value is None else str(value)


def print_table(rows: Sequence[dict[str, Any]], columns: Sequence[Column], title: str = "") -> None:
    """Rows as a table on stdout (cells as text: a '[' in a value is never markup)."""
    table = Table(
        *[name for name, _ in columns], title=title or None, box=None, title_justify="left"
    )
    for row in rows:
        table.add_row(*[Text(cell(get(row))) for _, get in columns])
    stdout.print(table)


def first(items: Iterable[Any], limit: int) -> list[dict[str, Any]]:
    """The first `limit` items of a listing (pages are fetched only as far as needed)."""
    return [plain(item) for item in itertools.islice(items, limit)]


def print_rows(rows: Sequence[dict[str, Any]], columns: Sequence[Column], as_json: bool) -> None:
    """A listing: a table, or a JSON array with `--json`."""
    if as_json:
        print_json(rows)
    else:
        print_table(rows, columns)


def print_fields(data: dict[str, Any], keys: Sequence[str]) -> None:
    """`key: value` lines for one object."""
    width = max(len(k) for k in keys)
    for key in keys:
        stdout.print(f"[bold]{key.ljust(width)}[/]  {cell(data.get(key))}", highlight=False)


def progress_wanted(flag: bool | None) -> bool:
    """Progress bars when asked, else when stderr is a terminal."""
    return flag if flag is not None else stderr.is_terminal


class Bars:
    """Upload bytes and job progress as rich bars on stderr; silent when disabled."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>5.1f}%"),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeElapsedColumn(),
            console=stderr,
            transient=False,
        )
        self.jobs = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>5.1f}%"),
            TextColumn("{task.fields[state]}"),
            TimeElapsedColumn(),
            console=stderr,
        )
        self._uploads: dict[str, TaskID] = {}
        self._job: TaskID | None = None
        self._started = False

    def _start(self, progress: Progress) -> None:
        if not self._started:
            self._started = True
            self._active = progress
            progress.start()
        elif self._active is not progress:
            self._active.stop()
            self._active = progress
            progress.start()

    def on_upload(self, name: str, sent: int, total: int | None) -> None:
        """The SDK's upload callback: `sent` of `total` bytes of file `name`."""
        if not self.enabled:
            return
        self._start(self.progress)
        if name not in self._uploads:
            self._uploads[name] = self.progress.add_task(f"upload {name}", total=total)
        self.progress.update(self._uploads[name], completed=sent, total=total)

    def on_progress(self, thing: Any) -> None:
        """The SDK's wait callback: a batch, job or privacy job as it is now."""
        if not self.enabled:
            return
        what, state, done = progress_of(plain(thing))
        self._start(self.jobs)
        if self._job is None:
            self._job = self.jobs.add_task(what, total=1.0, state=state)
        self.jobs.update(self._job, completed=done, state=state)

    def close(self) -> None:
        if self._started:
            self._active.stop()


def progress_of(data: dict[str, Any]) -> tuple[str, str, float]:
    """What a progress bar shows of a batch, job or privacy job: its name, its state, and the
    fraction done (a privacy job: the share of its datasets past submitted and processing)."""
    ident = data.get("id", "")
    if "datasets" in data and "column" in data:  # a privacy job (GDPR delete)
        datasets = data.get("datasets") or []
        past = sum(1 for d in datasets if d.get("status") not in ("submitted", "processing"))
        done = past / len(datasets) if datasets else 0.0
        if data.get("status") in ("complete", "erased"):
            done = 1.0
        return f"privacy job {ident}", str(data.get("status") or ""), done
    done = float(data.get("progress") or 0.0)
    if "kind" in data:  # a job
        return f"{data['kind']} job {ident}", f"{data.get('state')}: {data.get('stage')}", done
    return f"batch {ident}", str(data.get("status") or ""), done


@contextmanager
def bars(enabled: bool) -> Iterator[Bars]:
    """Progress bars that stop (and leave their last line) whatever happens."""
    shown = Bars(enabled)
    try:
        yield shown
    finally:
        shown.close()


ERROR_COLUMNS: list[Column] = [
    ("file", field("file")),
    ("row", field("row")),
    ("field", field("field")),
    ("value", field("value")),
    ("reason", field("reason")),
]


def print_row_errors(batch: dict[str, Any]) -> None:
    """A failed batch's row-level errors, as a table on stderr: every value exactly as the
    file held it (a bad time is shown as sent, not reformatted)."""
    errors = batch.get("errors") or []
    stderr.print(f"[bold red]batch {batch.get('id')} failed[/]: {len(errors)} row error(s)")
    table = Table(*[name for name, _ in ERROR_COLUMNS], box=None)
    for error in errors:
        table.add_row(*[Text(exact(get(error))) for _, get in ERROR_COLUMNS])
    stderr.print(table)


@contextmanager
def client_errors(as_json: bool = False, quiet: bool = False) -> Iterator[None]:
    """SDK errors as one line on stderr and the exit code of `Exit` (no traceback); a failed
    batch also prints its row-level errors (or its JSON on stdout with `--json`)."""
    from icebatch_client import BatchFailed, JobFailed

    try:
        yield
    except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
        raise  # typer's own exits and usage errors: already one line and a code
    except BatchFailed as exc:
        batch = plain(exc.batch)
        if quiet:
            print(batch["id"])
        elif as_json:
            print_json(batch)
        print_row_errors(batch)
        raise typer.Exit(Exit.FAILED) from None
    except JobFailed as exc:
        job = plain(exc.job)
        if as_json:
            print_json(job)
        what = "privacy job" if "column" in job else f"{job.get('kind', '')} job".strip()
        reasons = [job.get("error")] + [d.get("error") for d in job.get("datasets") or []]
        print_error(f"{what} {job.get('id')} failed: {'; '.join(filter(None, reasons)) or '-'}")
        raise typer.Exit(Exit.FAILED) from None
    except Exception as exc:  # noqa: BLE001 (every other error: one line, an exit code)
        line, code = describe(exc)
        print_error(line)
        raise typer.Exit(code) from None
