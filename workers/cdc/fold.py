"""The fold as a Spark `mapInArrow` function: rows sorted by (entity, timestamp, seq) in, one
row per entity out (`upsert` its new state, `delete` it, or `none`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from app.cdc.documents import Applied, extract, fold

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
        ]
    )

    def one(entity: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
        base: Applied | None = None
        related: set[str] = set()
        events = []
        for row in rows:
            related.update(row["related_ids"] or ())
            if row["kind"] == BASE:
                base = Applied(
                    json.loads(row["payload"]), row["timestamp"], row["seq"], row["record_type"]
                )
            elif row["kind"] == EVENT:
                payload = json.loads(row["payload"]) if row["payload"] is not None else None
                events.append(
                    (row["timestamp"], row["seq"], row["op"], row["record_type"], payload)
                )
        state = fold(base, events)
        out: dict[str, Any] = {"entity_id": entity}
        if state is None or state.document is None:
            out["_action"] = "delete" if state is not None else "none"
            return out
        out.update(
            _action="upsert",
            record_type=state.record_type,
            timestamp=state.timestamp,
            sequence=state.sequence,
            related_ids=sorted(related),
            document=json.dumps(state.document, separators=(",", ":"), ensure_ascii=False),
        )
        for spec in pushdown:
            out[spec["name"]] = typed(extract(state.document, spec["path"]), spec["type"])
        return out

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        current: str | None = None
        group: list[dict[str, Any]] = []
        done: list[dict[str, Any]] = []
        for batch in batches:
            for row in batch.to_pylist():
                if row["entity_id"] != current:
                    if current is not None:
                        done.append(one(current, group))
                    current, group = row["entity_id"], []
                group.append(row)
            if len(done) >= 10_000:
                yield pa.RecordBatch.from_pylist(done, schema=schema)
                done = []
        if current is not None:
            done.append(one(current, group))
        if done:
            yield pa.RecordBatch.from_pylist(done, schema=schema)

    run.names = names  # type: ignore[attr-defined]
    return run
