"""`icebatch changes`: an increment (rows appended or deleted between two snapshots) to a
Parquet file or, as JSON lines, to stdout."""

from __future__ import annotations

import json
import sys
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any

import typer

from app.cli.base import Connection, cli
from app.cli.output import client_errors, print_json, stderr


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


@cli.command()
def changes(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Argument(help="The dataset's id or name.")],
    kind: Annotated[str, typer.Option(help="appended or deleted.")],
    out: Annotated[
        str, typer.Option(help="A .parquet file to write, or - for JSON lines on stdout.")
    ],
    from_snapshot: Annotated[
        int | None,
        typer.Option("--from", help="Start after this snapshot (default: the empty table)."),
    ] = None,
    to_snapshot: Annotated[
        int | None, typer.Option("--to", help="End at this snapshot (default: the current one).")
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="ISO 8601: start after the snapshot current then.")
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="ISO 8601: end at the snapshot current then.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the range and row count as JSON (stderr).")
    ] = False,
) -> None:
    """Read the rows appended or deleted over (--from, --to] (or --since/--until).

    The range it resolved is printed (stderr): the next increment starts --from its end.
    """
    if kind not in ("appended", "deleted"):
        raise typer.BadParameter("appended or deleted", param_hint="--kind")
    if from_snapshot is not None and since is not None:
        raise typer.BadParameter("give --from or --since, not both", param_hint="--since")
    connection: Connection = ctx.obj
    with client_errors():
        increment = connection.client().changes(
            dataset,
            kind=kind,
            since_snapshot=from_snapshot,
            to_snapshot=to_snapshot,
            since=since,
            until=until,
        )
    table = increment.table
    if out == "-":
        for row in table.to_pylist():
            sys.stdout.write(json.dumps(row, default=_json_default) + "\n")
    else:
        import pyarrow.parquet as pq

        pq.write_table(table, out)
    summary = {
        "kind": kind,
        "rows": table.num_rows,
        "from_snapshot": increment.from_snapshot,
        "to_snapshot": increment.to_snapshot,
        "out": out,
    }
    if as_json and out != "-":
        print_json(summary)
    else:
        start = increment.from_snapshot if increment.from_snapshot is not None else "start"
        stderr.print(
            f"{table.num_rows:,} rows {kind} over ({start}, {increment.to_snapshot}]"
            + ("" if out == "-" else f" → {out}"),
            highlight=False,
        )
