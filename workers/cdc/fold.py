"""The fold as a Spark `mapInArrow` function: rows sorted by (entity, timestamp, seq) in, one
row per entity out (`upsert` its new state, `delete` it, or `none`). A base row (the entity's
raw row) passes its cluster on; other entities' clusters are looked up by the processor."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from app.cdc.documents import PATCH, apply, extract, to_json
from workers.spark.tasks import announce

BASE, GONE, EVENT = 0, 1, 2
TS = pa.timestamp("us", tz="UTC")
ARROW_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "long": pa.int64(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "timestamptz": TS,
}
SPARK_TYPES = {
    "string": "string",
    "long": "bigint",
    "double": "double",
    "boolean": "boolean",
    "timestamptz": "timestamp",
}
INPUT_COLUMNS = [
    "entity_id",
    "kind",
    "timestamp",
    "seq",
    "op",
    "record_type",
    "related_ids",
    "payload",
    "cluster_id",
]


def output_ddl(pushdown: list[dict[str, str]]) -> str:
    columns = [
        "entity_id string",
        "_action string",
        "record_type string",
        "timestamp timestamp",
        "sequence bigint",
        "related_ids array<string>",
        *(f"`{p['name']}` {SPARK_TYPES[p['type']]}" for p in pushdown),
        "document string",
        "cluster_id string",
    ]
    return ", ".join(columns)


def typed(value: Any, kind: str) -> Any:
    """A JSON value as a pushdown column's type; None when it does not fit."""
    if value is None:
        return None
    if kind == "string":
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    if kind == "long":
        if isinstance(value, int) and -(2**63) <= value < 2**63:
            return value
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            return int(value)
        return None
    if kind == "double":
        return float(value) if isinstance(value, int | float) else None
    if kind == "timestamptz":
        if isinstance(value, int | float):
            try:
                return datetime.fromtimestamp(value / 1000, UTC)
            except (OverflowError, OSError, ValueError):
                return None
        if isinstance(value, str):
            try:
                moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return None
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


def _values(column: pa.Array) -> list[Any]:
    """A column as a Python list, through NumPy (several times faster than `to_pylist` for
    strings); timestamps as epoch microseconds, a null number as 0 (only gone rows have one)."""
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.int64())
    if pa.types.is_integer(column.type):
        return column.fill_null(0).to_numpy().tolist()
    if pa.types.is_list(column.type):
        return [None if v is None else v.tolist() for v in column.to_numpy(zero_copy_only=False)]
    return column.to_numpy(zero_copy_only=False).tolist()


def _order(row: tuple[Any, ...]) -> tuple[int, int, int]:
    """Base and gone rows first, then events by (timestamp, seq)."""
    kind, ts, seq = row[0], row[1], row[2]
    return (0, 0, 0) if kind != EVENT else (1, ts, seq)


def folder(
    pushdown: list[dict[str, str]],
) -> Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    names = [p["name"] for p in pushdown]
    schema = pa.schema(
        [
            pa.field("entity_id", pa.string()),
            pa.field("_action", pa.string()),
            pa.field("record_type", pa.string()),
            pa.field("timestamp", TS),
            pa.field("sequence", pa.int64()),
            pa.field("related_ids", pa.list_(pa.string())),
            *(pa.field(p["name"], ARROW_TYPES[p["type"]]) for p in pushdown),
            pa.field("document", pa.string()),
            pa.field("cluster_id", pa.string()),
        ]
    )

    def one(entity: str, rows: list[tuple[Any, ...]], out: dict[str, list[Any]]) -> None:
        """Append the entity's row to the output columns: the fold of its events, in
        (timestamp, seq) order, over its base (a raw row) if it has one. A base without its
        document was not read because its first event replaces it (`workers/cdc/inputs.py`)."""
        document: dict[str, Any] | None = None
        last: tuple[Any, Any, Any] | None = None  # (timestamp, seq, record_type)
        cluster = None
        unread = False
        related: set[str] = set()
        for kind, ts, seq, op, record_type, related_ids, payload, cluster_id in sorted(
            rows, key=_order
        ):
            if related_ids:
                related.update(related_ids)
            if kind == BASE:
                document, last, cluster = None, (ts, seq, record_type), cluster_id
                unread = payload is None
                if not unread:
                    document = json.loads(payload)
            elif kind == EVENT:
                if unread and op == PATCH:
                    raise AssertionError(f"{entity}: a PATCH over a base document not read")
                unread = False
                body = json.loads(payload) if payload is not None else None
                document, last = apply(document, op, body), (ts, seq, record_type)
        if last is None:
            return  # links of a deleted entity and no event: nothing to write
        action = "delete" if document is None else "upsert"
        out["entity_id"].append(entity)
        out["_action"].append(action)
        out["timestamp"].append(last[0])
        out["sequence"].append(last[1])
        out["record_type"].append(last[2])
        out["related_ids"].append(sorted(related))
        out["cluster_id"].append(cluster)
        text = None if document is None else to_json(document)
        out["document"].append(text)
        for spec in pushdown:
            value = None if document is None else extract(document, spec["path"])
            out[spec["name"]].append(typed(value, spec["type"]))

    def emit(out: dict[str, list[Any]]) -> pa.RecordBatch:
        arrays = []
        for item in schema:
            values = out[item.name]
            if item.name == "timestamp":
                arrays.append(pa.array(values, pa.int64()).cast(TS))
            else:
                arrays.append(pa.array(values, item.type))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        announce("cdc-fold")
        current: str | None = None
        group: list[tuple[Any, ...]] = []
        out: dict[str, list[Any]] = {item.name: [] for item in schema}
        for batch in batches:
            entities, *rest = (_values(batch.column(name)) for name in INPUT_COLUMNS)
            for entity, row in zip(entities, zip(*rest, strict=True), strict=True):
                if entity != current:
                    if current is not None:
                        one(current, group, out)
                    current, group = entity, []
                group.append(row)
            if len(out["entity_id"]) >= 10_000:
                yield emit(out)
                out = {item.name: [] for item in schema}
        if current is not None:
            one(current, group, out)
        if out["entity_id"]:
            yield emit(out)

    run.names = names  # type: ignore[attr-defined]
    return run
