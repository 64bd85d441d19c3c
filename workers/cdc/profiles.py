"""`read_profiles(spark, org)`: one row per cluster of linked identities, for scans and queries
(the seed's access pattern: many queries over each merged profile).

    from workers.cdc.profiles import read_profiles
    profiles = read_profiles(spark, "acme")   # cluster_id, members, records, merged (JSON)
    profiles.where(F.get_json_object("merged", "$.address.country") == "FR").count()

The raw table is bucketed and sorted by `cluster_id`, so a cluster's records are neighbours;
they are grouped in Spark and merged with the same rule as `GET /v1/cdc/profiles/{id}`
(`app.cdc.documents.deep_merge`: oldest first, the newer timestamp winning field by field).
`members` are the identities with a live record (the API also lists linked identities that
have none).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from app.cdc.documents import deep_merge
from app.config import get_settings
from app.lake.cdc import RAW_DATASET

PROFILE_DDL = (
    "cluster_id string, members array<string>, records array<struct<entity_id: string, "
    "record_type: string, timestamp: timestamp, document: string>>, merged string"
)
RECORD = pa.struct(
    [
        pa.field("entity_id", pa.string()),
        pa.field("record_type", pa.string()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("document", pa.string()),
    ]
)
SCHEMA = pa.schema(
    [
        pa.field("cluster_id", pa.string()),
        pa.field("members", pa.list_(pa.string())),
        pa.field("records", pa.list_(RECORD)),
        pa.field("merged", pa.string()),
    ]
)


def _profile(cluster: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    merged: Any = {}
    for row in sorted(rows, key=lambda r: (r["timestamp"], r["entity_id"])):
        merged = deep_merge(merged, json.loads(row["document"]))
    return {
        "cluster_id": cluster,
        "members": sorted(r["entity_id"] for r in rows),
        "records": sorted(rows, key=lambda r: r["entity_id"]),
        "merged": json.dumps(merged, separators=(",", ":"), sort_keys=True),
    }


def _group(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    current: str | None = None
    rows: list[dict[str, Any]] = []
    done: list[dict[str, Any]] = []
    for batch in batches:
        for row in batch.to_pylist():
            cluster = row.pop("cluster_id")
            if cluster != current:
                if current is not None:
                    done.append(_profile(current, rows))
                current, rows = cluster, []
            rows.append(row)
        if len(done) >= 5000:
            yield pa.RecordBatch.from_pylist(done, schema=SCHEMA)
            done = []
    if current is not None:
        done.append(_profile(current, rows))
    if done:
        yield pa.RecordBatch.from_pylist(done, schema=SCHEMA)


def read_profiles(spark: SparkSession, org: str) -> DataFrame:
    """The tenant's merged profiles: one row per cluster."""
    name = f"`{get_settings().catalog_name}`.`{org}`.`{RAW_DATASET}`"
    raw = spark.table(name).select(
        "cluster_id", "entity_id", "record_type", "timestamp", "document"
    )
    partitions = max(2, spark.sparkContext.defaultParallelism)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # PySpark 3.5's LooseVersion
        return (
            raw.repartition(partitions, "cluster_id")
            .sortWithinPartitions("cluster_id", "entity_id")
            .mapInArrow(_group, PROFILE_DDL)
        )
