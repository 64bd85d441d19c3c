"""An org's archived audit trail: the Iceberg table `<org>._audit` (append-only, one snapshot per
move, each carrying the highest `seq` it holds as `icebatch.audit.through`).

The name cannot clash with a dataset's (dataset names start with a letter). Reads go newest
first, file by file, by the files' `seq` bounds: a page reads the few newest files below its
cursor, not the whole archive.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.conversions import from_bytes
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.expressions import (
    AlwaysTrue,
    And,
    BooleanExpression,
    EqualTo,
    GreaterThanOrEqual,
    LessThan,
    StartsWith,
)
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.schema import Schema
from pyiceberg.table import FileScanTask, Table
from pyiceberg.types import (
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
)

from app.lake import snapshots

TABLE = "_audit"
THROUGH = "icebatch.audit.through"
PROPERTIES = {
    "format-version": "2",
    "commit.manifest-merge.enabled": "true",
    "write.parquet.compression-codec": "zstd",
    "write.metadata.delete-after-commit.enabled": "true",
    "write.metadata.previous-versions-max": "10",
    # one attempt: a move that meets another's snapshot must re-read the mark, never re-apply
    "commit.retry.num-retries": "0",
}
SCHEMA = Schema(
    NestedField(1, "seq", LongType(), required=True),
    NestedField(2, "at", TimestamptzType(), required=True),
    NestedField(3, "org", StringType(), required=True),
    NestedField(4, "key_id", StringType(), required=False),
    NestedField(5, "action", StringType(), required=True),
    NestedField(6, "method", StringType(), required=True),
    NestedField(7, "path", StringType(), required=True),
    NestedField(8, "target", StringType(), required=True, doc="JSON object"),
    NestedField(9, "request_id", StringType(), required=False),
    NestedField(10, "status_code", IntegerType(), required=True),
    NestedField(11, "outcome", StringType(), required=True),
)
ARROW = pa.schema(
    [
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("org", pa.string(), nullable=False),
        pa.field("key_id", pa.string()),
        pa.field("action", pa.string(), nullable=False),
        pa.field("method", pa.string(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
        pa.field("target", pa.string(), nullable=False),
        pa.field("request_id", pa.string()),
        pa.field("status_code", pa.int32(), nullable=False),
        pa.field("outcome", pa.string(), nullable=False),
    ]
)
COLUMNS = ARROW.names


def identifier(org: str) -> str:
    return f"{org}.{TABLE}"


def load(catalog: Catalog, org: str) -> Table | None:
    try:
        return catalog.load_table(identifier(org))
    except NoSuchTableError:
        return None


def ensure(catalog: Catalog, org: str) -> Table:
    """The org's audit table, created (with its namespace) on first use."""
    found = load(catalog, org)
    if found is not None:
        return found
    catalog.create_namespace_if_not_exists(org)
    return catalog.create_table_if_not_exists(identifier(org), SCHEMA, properties=PROPERTIES)


def archived_through(table: Table) -> int:
    """The highest `seq` the table holds (0: none): the newest snapshot that says so."""
    for snapshot in sorted(table.snapshots(), key=lambda s: s.sequence_number or 0, reverse=True):
        value = snapshots.summary_value(snapshot, THROUGH)
        if value is not None:
            return int(value)
    return 0


def to_arrow(events: list[dict[str, Any]]) -> pa.Table:
    """Events (the columns of `AuditEvent`) as the table's rows; `target` as JSON text."""
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    for event in events:
        for name in COLUMNS:
            value = event[name]
            columns[name].append(json.dumps(value) if name == "target" else value)
    return pa.table(columns, schema=ARROW)


def _filter(before_seq: int | None, action: str | None, since: datetime | None) -> Any:
    parts: list[BooleanExpression] = []
    if before_seq is not None:
        parts.append(LessThan(term="seq", value=before_seq))
    if action is not None:
        if action.endswith(".*"):
            parts.append(StartsWith(term="action", value=action[:-1]))
        else:
            parts.append(EqualTo(term="action", value=action))
    if since is not None:
        parts.append(GreaterThanOrEqual(term="at", value=since.isoformat()))
    expression: BooleanExpression = AlwaysTrue()
    for part in parts:
        expression = And(expression, part)
    return expression


def _seq_upper(task: FileScanTask, field_id: int) -> int:
    raw = (task.file.upper_bounds or {}).get(field_id)
    return int(from_bytes(LongType(), raw)) if raw is not None else 2**63 - 1


def _rows(table: Table, tasks: list[FileScanTask], row_filter: Any) -> Iterator[dict[str, Any]]:
    scan = ArrowScan(table.metadata, table.io, table.schema(), row_filter)
    for task in tasks:
        for row in scan.to_table([task]).to_pylist():
            row["target"] = json.loads(row["target"])
            yield row


def page(
    table: Table,
    *,
    before_seq: int | None,
    action: str | None,
    since: datetime | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Up to `limit` archived events, newest first, with `seq < before_seq` and the filters of
    `GET /v1/audit`: files read newest first, until no file left can hold a newer one."""
    row_filter = _filter(before_seq, action, since)
    seq_id = table.schema().find_field("seq").field_id
    tasks = sorted(
        table.scan(row_filter=row_filter).plan_files(),
        key=lambda task: _seq_upper(task, seq_id),
        reverse=True,
    )
    found: list[dict[str, Any]] = []
    for task in tasks:
        if len(found) >= limit and _seq_upper(task, seq_id) < found[limit - 1]["seq"]:
            break
        found.extend(_rows(table, [task], row_filter))
        found.sort(key=lambda row: row["seq"], reverse=True)
    return found[:limit]


def count(table: Table) -> int:
    """Rows in the table (its current snapshot's own count)."""
    current = table.current_snapshot()
    if current is None:
        return 0
    return int(snapshots.own_properties(current).get("total-records", 0))
