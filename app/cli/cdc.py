"""`icebatch cdc`: the tenant's replica — config, post events, lag, profiles, process now."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.base import Connection
from app.cli.output import (
    AsJson,
    client_errors,
    field,
    plain,
    print_fields,
    print_json,
    print_table,
)

cdc = typer.Typer(help="CDC replication: change events into a per-tenant lake replica.")
LAG_FIELDS = [
    "tenant",
    "accepted",
    "staged",
    "processed",
    "staging_lag_seconds",
    "oldest_unstaged_age_seconds",
    "replication_lag_seconds",
    "oldest_unprocessed_age_seconds",
    "processed_at",
]


def _events(source: Path) -> Iterator[dict[str, Any]]:
    """JSON lines from a file, or from standard input for `-`."""
    stream = sys.stdin if str(source) == "-" else source.open(encoding="utf-8")
    try:
        for number, line in enumerate(stream, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise typer.BadParameter(f"line {number}: {exc.msg}") from None
    finally:
        if stream is not sys.stdin:
            stream.close()


@cdc.command("post")
def post(
    ctx: typer.Context,
    source: Annotated[Path, typer.Argument(help="A JSON lines file of events, or - for stdin.")],
    chunk_size: Annotated[int, typer.Option(help="Events per request.", min=1)] = 10_000,
    wait: Annotated[bool, typer.Option("--wait", help="Then wait until applied.")] = False,
    as_json: AsJson = False,
) -> None:
    """Post change events ({op, entity_id, record_type, timestamp, payload, ...} per line)."""
    connection: Connection = ctx.obj
    with client_errors(as_json):
        client = connection.client()
        answers = client.post_events(_events(source), chunk_size=chunk_size)
        last = answers[-1].last_sequence if answers else 0
        lag = client.wait_replicated(last) if wait and answers else None
    data = {
        "accepted": sum(a.accepted for a in answers),
        "requests": len(answers),
        "first_sequence": answers[0].first_sequence if answers else None,
        "last_sequence": last if answers else None,
    }
    if lag is not None:
        data["processed"] = lag.processed
    if as_json:
        print_json(data)
    else:
        print_fields(data, list(data))


@cdc.command("lag")
def lag(ctx: typer.Context, as_json: AsJson = False) -> None:
    """The tenant's accepted, staged and processed events and its lags."""
    connection: Connection = ctx.obj
    with client_errors(as_json):
        data = plain(connection.client().cdc_lag())
    if as_json:
        print_json(data)
        return
    print_fields(data, LAG_FIELDS)
    if data.get("streams"):
        columns = ("stream", "length", "pending", "undelivered", "dead_letters", "error")
        print_table(data["streams"], [(k, field(k)) for k in columns], title="Debezium streams")


@cdc.command("process")
def process(
    ctx: typer.Context,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once started.")] = False,
    as_json: AsJson = False,
) -> None:
    """Stage and process now; waits until every event accepted so far is applied."""
    connection: Connection = ctx.obj
    with client_errors(as_json):
        data = plain(connection.client().cdc_process(wait=not no_wait))
    if as_json:
        print_json(data)
    else:
        print_fields(data, LAG_FIELDS)


@cdc.command("profile")
def profile(
    ctx: typer.Context,
    entity_id: Annotated[str, typer.Argument(help="An identity.")],
    as_json: AsJson = False,
) -> None:
    """The merged profile of an identity: members, records, merged document."""
    connection: Connection = ctx.obj
    with client_errors(as_json):
        data = plain(connection.client().profile(entity_id))
    if as_json:
        print_json(data)
        return
    print_fields(data, ["entity_id", "cluster_id"])
    print(f"members: {', '.join(data['members'])}")
    print_table(
        data["records"],
        [
            ("entity_id", lambda r: r["entity_id"]),
            ("record_type", lambda r: r["record_type"]),
            ("timestamp", lambda r: r["timestamp"]),
        ],
        title="records",
    )
    print(json.dumps(data["merged"], indent=2, sort_keys=True))


@cdc.command("config")
def config(
    ctx: typer.Context,
    pushdown: Annotated[
        list[str] | None,
        typer.Option(help="A pushdown column as name:path:type (repeat); sets the config."),
    ] = None,
    retention_days: Annotated[
        float | None, typer.Option(help="Staging retention window; sets the config.")
    ] = None,
    source: Annotated[
        list[str] | None,
        typer.Option(
            help="A Debezium source table as table[:key,key[:record_type[:entity_prefix]]] "
            "(repeat; an empty part keeps its default); sets the config."
        ),
    ] = None,
    stream: Annotated[
        list[str] | None,
        typer.Option(help="A Debezium Redis stream to read (repeat); sets the config."),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Show the tenant's config, or set it with --pushdown / --retention-days / --source /
    --stream (admin key; what is not given is kept)."""
    connection: Connection = ctx.obj
    with client_errors(as_json):
        client = connection.client()
        if pushdown is None and retention_days is None and source is None and stream is None:
            data = plain(client.cdc_config())
        else:
            current = plain(client.cdc_config())
            columns = current["pushdown"]
            for spec in pushdown or []:
                parts = spec.split(":")
                if len(parts) != 3:
                    raise typer.BadParameter(f"--pushdown {spec!r}: give name:path:type")
                columns = [c for c in columns if c["name"] != parts[0]]
                columns.append({"name": parts[0], "path": parts[1], "type": parts[2]})
            sources = current.get("sources") or []
            for spec in source or []:
                wanted = _source(spec)
                sources = [s for s in sources if s["table"] != wanted["table"]] + [wanted]
            streams = list(current.get("streams") or [])
            streams += [name for name in stream or [] if name not in streams]
            data = plain(
                client.cdc_configure(
                    columns,
                    retention_days=retention_days or current["retention_days"],
                    process_interval_seconds=current["process_interval_seconds"],
                    backlog_threshold=current["backlog_threshold"],
                    sources=sources,
                    streams=streams,
                )
            )
    if as_json:
        print_json(data)
        return
    print_fields(
        data, ["raw_dataset_id", "raw_table", "retention_days", "process_interval_seconds"]
    )
    print_table(
        data["pushdown"],
        [(k, field(k)) for k in ("name", "path", "type")],
        title="pushdown columns",
    )
    if data.get("sources"):
        print_table(
            [{**s, "key": ",".join(s["key"])} for s in data["sources"]],
            [(k, field(k)) for k in ("table", "key", "record_type", "entity_prefix")],
            title="Debezium sources",
        )
    if data.get("streams"):
        print_table(
            [{"stream": name} for name in data["streams"]],
            [("stream", field("stream"))],
            title="Debezium Redis streams",
        )


def _source(spec: str) -> dict[str, object]:
    """`table[:key,key[:record_type[:entity_prefix]]]` as a `sources` entry (the prefix may hold
    colons: it is the rest)."""
    table, *rest = spec.split(":", 3)
    if not table:
        raise typer.BadParameter(f"--source {spec!r}: give table[:key,key[:type[:prefix]]]")
    out: dict[str, object] = {"table": table}
    keys = [k for k in (rest[0].split(",") if rest else []) if k]
    if keys:
        out["key"] = keys
    if len(rest) > 1 and rest[1]:
        out["record_type"] = rest[1]
    if len(rest) > 2 and rest[2]:
        out["entity_prefix"] = rest[2]
    return out
