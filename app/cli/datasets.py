"""`icebatch datasets create|list|show`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.base import Connection
from app.cli.output import (
    AsJson,
    Column,
    Quiet,
    client_errors,
    field,
    plain,
    print_fields,
    print_json,
)
from app.cli.output import print_table as table

datasets = typer.Typer(help="Datasets: one Iceberg table each.", no_args_is_help=True)

COLUMNS: list[Column] = [
    ("id", field("id")),
    ("name", field("name")),
    ("table", field("table")),
    ("identity", lambda d: ", ".join(d.get("identity_columns") or [])),
    ("snapshot", field("current_snapshot_id")),
    ("created", field("created_at")),
]


def json_value(text: str, option: str) -> Any:
    """Inline JSON, or `@path` / a path of a JSON file."""
    source = text[1:] if text.startswith("@") else text
    path = Path(source)
    if text.startswith("@") or (not text.lstrip().startswith(("[", "{")) and path.exists()):
        try:
            source = path.read_text()
        except OSError as exc:
            raise typer.BadParameter(
                f"cannot read {path}: {exc.strerror}", param_hint=option
            ) from None
    try:
        return json.loads(source)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not JSON ({exc})", param_hint=option) from None


@datasets.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Option(help="Lowercase letters, digits and '_'.")],
    schema: Annotated[
        str,
        typer.Option(
            help='The fields, as JSON or a JSON file: [{"name": "event_id", "type": "long", '
            '"required": true}, …]'
        ),
    ],
    partition: Annotated[
        str | None,
        typer.Option(help='JSON: [{"column": "event_time", "transform": "day"}]'),
    ] = None,
    identity: Annotated[
        list[str] | None,
        typer.Option(help="An identity column for GDPR deletes (repeat for more)."),
    ] = None,
    as_json: AsJson = False,
    quiet: Quiet = False,
) -> None:
    """Create a dataset and its Iceberg table."""
    connection: Connection = ctx.obj
    fields = json_value(schema, "--schema")
    layout = json_value(partition, "--partition") if partition else None
    with client_errors():
        created = connection.client().create_dataset(
            name, fields, partition=layout, identity_columns=identity or []
        )
    if quiet:
        print(plain(created)["id"])
    elif as_json:
        print_json(created)
    else:
        print_fields(plain(created), ["id", "name", "table", "identity_columns", "created_at"])


@datasets.command("list")
def list_(ctx: typer.Context, as_json: AsJson = False) -> None:
    """List your organization's datasets."""
    connection: Connection = ctx.obj
    with client_errors():
        found = [plain(d) for d in connection.client().iter_datasets()]
    if as_json:
        print_json(found)
    else:
        table(found, COLUMNS)


@datasets.command("show")
def show(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Argument(help="The dataset's id or name.")],
    as_json: AsJson = False,
) -> None:
    """Show a dataset: schema, layout, current snapshot, retention, recent snapshots."""
    connection: Connection = ctx.obj
    with client_errors():
        client = connection.client()
        found = plain(client.get_dataset(dataset))
        log = [plain(s) for s in client.snapshots(found["id"])]
    if as_json:
        print_json({**found, "snapshots": log})
        return
    print_fields(found, ["id", "name", "table", "current_snapshot_id", "created_at"])
    table(
        [
            {**f, "required": "yes" if f.get("required") else "no"}
            for f in found.get("schema") or []
        ],
        [("column", field("name")), ("type", field("type")), ("required", field("required"))],
        title="schema",
    )
    table(
        log[:10],
        [
            ("snapshot", field("snapshot_id")),
            ("committed", field("committed_at")),
            ("operation", lambda s: (s.get("icebatch") or {}).get("icebatch.operation")),
            ("batch", lambda s: (s.get("icebatch") or {}).get("icebatch.batch-id")),
            ("tombstones", lambda s: (s.get("tombstones") or {}).get("total")),
        ],
        title=f"snapshots ({len(log)}, newest first)",
    )
