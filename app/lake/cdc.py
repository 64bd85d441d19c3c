"""The CDC tables: the one multi-tenant staging table and each tenant's raw table.

Staging (`_icebatch.cdc_staging`) is append-only, partitioned by tenant and by the 15-minute
bucket an event was accepted in (arrival time, not event time: late events would otherwise
scatter a dumper run over many old partitions, one small file each). The payload stays a JSON
string; the pushdown columns (`seq`, `entity_id`, `timestamp`, ...) sit beside it, and a
processor's `tenant = ? AND seq > watermark` prunes by partition and by the files' bounds.

A tenant's raw table is an Icebatch dataset named `cdc_raw` (so `/rows`, `/changes`, expiry
and compaction serve it), one row per live entity: the document as a JSON string, the typed
pushdown columns the tenant declared, and the cluster of linked identities. It is bucketed and
sorted by `cluster_id` (the seed's scan pattern groups by cluster).

Watermarks live in snapshot summaries, committed with the data they describe:
- staging: `icebatch.cdc.staged.<tenant>` = the last sequence number of the tenant staged (a
  dumper run stages one tenant);
- raw: `icebatch.cdc.watermark` = the last sequence number applied, `icebatch.cdc.max-ts` = the
  newest event time applied (epoch microseconds).
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError, TableAlreadyExistsError
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (
    ListType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
)

from app.lake.tables import TABLE_PROPERTIES

NAMESPACE = "_icebatch"
STAGING = f"{NAMESPACE}.cdc_staging"
RAW_DATASET = "cdc_raw"
BUCKET = timedelta(minutes=15)
STAGED = "icebatch.cdc.staged"
WATERMARK = "icebatch.cdc.watermark"
MAX_TS = "icebatch.cdc.max-ts"
OPERATION = "cdc"

STAGING_SCHEMA = Schema(
    NestedField(1, "tenant", StringType(), required=False),
    NestedField(2, "bucket", TimestamptzType(), required=False),
    NestedField(3, "seq", LongType(), required=False),
    NestedField(4, "op", StringType(), required=False),
    NestedField(5, "entity_id", StringType(), required=False),
    NestedField(6, "record_type", StringType(), required=False),
    NestedField(7, "timestamp", TimestamptzType(), required=False),
    NestedField(
        8, "related_ids", ListType(12, StringType(), element_required=False), required=False
    ),
    NestedField(9, "source", StringType(), required=False),
    NestedField(10, "payload", StringType(), required=False),
    NestedField(11, "accepted_at", TimestamptzType(), required=False),
)
TS = pa.timestamp("us", tz="UTC")
EVENT_ARROW = pa.schema(
    [
        pa.field("tenant", pa.string()),
        pa.field("bucket", TS),
        pa.field("seq", pa.int64()),
        pa.field("op", pa.string()),
        pa.field("entity_id", pa.string()),
        pa.field("record_type", pa.string()),
        pa.field("timestamp", TS),
        pa.field("related_ids", pa.list_(pa.field("element", pa.string()))),
        pa.field("source", pa.string()),
        pa.field("payload", pa.string()),
        pa.field("accepted_at", TS),
    ]
)
STAGING_PROPERTIES = {
    **{k: v for k, v in TABLE_PROPERTIES.items() if not k.startswith("write.metadata.metrics")},
    "write.metadata.metrics.column.seq": "full",
    "write.metadata.metrics.column.tenant": "full",
}

# the raw table's fixed columns (a tenant's pushdown columns go between cluster_id and document)
RAW_FIXED: list[dict[str, Any]] = [
    {"name": "entity_id", "type": "string", "required": True},
    {"name": "record_type", "type": "string"},
    {"name": "timestamp", "type": "timestamptz", "doc": "Time of the last applied event"},
    {"name": "sequence", "type": "long", "doc": "Sequence number of the last applied event"},
    {"name": "related_ids", "type": "list", "element": {"type": "string"}},
    {"name": "cluster_id", "type": "string", "doc": "Smallest identity of the linked cluster"},
]
RAW_DOCUMENT: dict[str, Any] = {
    "name": "document",
    "type": "string",
    "doc": "The entity's document (JSON)",
}
RAW_PARTITION = [{"column": "cluster_id", "transform": "bucket", "width": 4}]
RESERVED_COLUMNS = frozenset([f["name"] for f in RAW_FIXED] + [RAW_DOCUMENT["name"], "_batch_id"])
PUSHDOWN_TYPES = ("string", "long", "double", "boolean", "timestamptz")


def raw_schema(pushdown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [*RAW_FIXED, *({"name": p["name"], "type": p["type"]} for p in pushdown), RAW_DOCUMENT]


def bucket_of(moment: datetime) -> datetime:
    epoch = int(moment.timestamp()) // int(BUCKET.total_seconds()) * int(BUCKET.total_seconds())
    return datetime.fromtimestamp(epoch, UTC)


def ensure_staging(catalog: Catalog) -> Table:
    """The staging table, created on first use."""
    with contextlib.suppress(NamespaceAlreadyExistsError):
        catalog.create_namespace(NAMESPACE)
    try:
        return catalog.create_table(
            STAGING,
            schema=STAGING_SCHEMA,
            partition_spec=PartitionSpec(
                PartitionField(1, 1000, IdentityTransform(), "tenant"),
                PartitionField(2, 1001, IdentityTransform(), "bucket"),
            ),
            properties=STAGING_PROPERTIES,
        )
    except TableAlreadyExistsError:
        return catalog.load_table(STAGING)


def staged_key(tenant: str) -> str:
    return f"{STAGED}.{tenant}"


def staged_seq(table: Table, tenant: str) -> int | None:
    """The last sequence number of `tenant` staged, from the newest staging snapshot that
    says (None when no retained snapshot does). Each dumper run commits its own key, so runs
    of different tenants append side by side without ever conflicting."""
    key = staged_key(tenant)
    for snapshot in sorted(table.snapshots(), key=lambda s: s.sequence_number or 0, reverse=True):
        if snapshot.summary is not None and key in snapshot.summary.additional_properties:
            return int(snapshot.summary.additional_properties[key])
    return None


def watermark(snapshot: Snapshot | None) -> tuple[int, datetime | None]:
    """(last applied sequence number, newest applied event time) as of a raw snapshot."""
    if snapshot is None or snapshot.summary is None:
        return 0, None
    props = snapshot.summary.additional_properties
    seq = int(props.get(WATERMARK, "0"))
    micros = props.get(MAX_TS)
    moment = datetime.fromtimestamp(int(micros) / 1e6, UTC) if micros else None
    return seq, moment


def raw_watermark(table: Table) -> tuple[int, datetime | None]:
    """The raw table's watermark: the newest snapshot that carries one (a compaction or an
    expiry in between carries none)."""
    snapshot = table.current_snapshot()
    while snapshot is not None:
        if snapshot.summary is not None and WATERMARK in snapshot.summary.additional_properties:
            return watermark(snapshot)
        if snapshot.parent_snapshot_id is None:
            break
        snapshot = table.snapshot_by_id(snapshot.parent_snapshot_id)
    return 0, None
