"""The fold's input for one processor run: each touched entity's base and events, found with a
few Spark jobs over cached frames, not a check per case.

For the events `low < seq <= high` of a tenant, every touched entity falls in one class:
- `base`: it has a raw row and every new event sorts after the row's last applied
  (timestamp, seq): the row is the fold's start (its links and cluster, and its document when
  the first new event is a PATCH: a whole image or a deletion replaces it, so a run without
  PATCHes does not read the raw table's documents at all);
- `late`: it has a raw row, but a new event sorts before that row's last event: the entity is
  re-folded from its whole staged history;
- `absent`: no raw row. Its row in `cdc_deletions` (SQL, no history scan) tells a never-seen
  entity (no row: nothing to start from), a deleted one whose new events all come after the
  event that deleted it (`gone`: starts from nothing but keeps its links) and one with a late
  event or a deletion row past the watermark (re-folded like `late`).

The staged history is read only for the re-folded entities, in the same job as the fold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from app.cdc import repository
from app.cdc.documents import PATCH
from app.db import session_scope
from workers.cdc.fold import BASE, EVENT, GONE, INPUT_COLUMNS
from workers.spark.session import small_frame

EVENT_COLUMNS = ["entity_id", "timestamp", "seq", "op", "record_type", "related_ids", "payload"]
BASE_CLASS, LATE_CLASS, ABSENT_CLASS = "base", "late", "absent"


@dataclass
class RunInput:
    """What the fold and the commit of one run need."""

    rows: DataFrame  # INPUT_COLUMNS, to be folded per entity
    events: int  # new events in (low, high]
    newest: datetime | None  # the newest event time among them
    pairs: list[tuple[str, str]]  # (entity, related id) links the new events carry
    unknown_clusters: list[str]  # touched entities whose cluster is not on a raw row
    deleted: set[str]  # touched entities with a row in `cdc_deletions`
    touched: DataFrame  # entity_id of every touched entity (cached)
    classes: dict[str, int] = field(default_factory=dict)  # touched entities per class
    cached: list[DataFrame] = field(default_factory=list)  # unpersist when the run is done

    def release(self) -> None:
        for frame in self.cached:
            frame.unpersist()


def _before(ts_a: Any, seq_a: Any, ts_b: Any, seq_b: Any) -> Any:
    return (ts_a < ts_b) | ((ts_a == ts_b) & (seq_a < seq_b))


def _cache(frame: DataFrame, cached: list[DataFrame]) -> DataFrame:
    frame = frame.persist(StorageLevel.MEMORY_AND_DISK)
    cached.append(frame)
    return frame


INPUT_TYPES = {
    "timestamp": "timestamp",
    "seq": "bigint",
    "op": "string",
    "record_type": "string",
    "related_ids": "array<string>",
    "payload": "string",
    "cluster_id": "string",
}


def _as_input(frame: DataFrame, kind: int, **given: Column) -> DataFrame:
    """`frame` as fold input rows of `kind`: a column from `given`, else `frame`'s own, else
    null."""
    columns = [F.col("entity_id"), F.lit(kind).alias("kind")]
    for name, kind_of in INPUT_TYPES.items():
        if name in given:
            columns.append(given[name].alias(name))
        elif name in frame.columns:
            columns.append(F.col(name))
        else:
            columns.append(F.lit(None).cast(kind_of).alias(name))
    return frame.select(*columns)


def _document_if(patches: bool) -> list[Column]:
    """The raw row's document column, read only when a new event may patch it: a run of whole
    row images and deletions (Debezium's changes) leaves the table's largest column unread."""
    if patches:
        return [F.col("document").alias("r_document")]
    return [F.lit(None).cast("string").alias("r_document")]


def run_input(
    spark: SparkSession, org: str, staging_name: str, raw_name: str, low: int, high: int
) -> RunInput:
    cached: list[DataFrame] = []
    staging = spark.table(staging_name).where(F.col("tenant") == org)
    new = _cache(
        staging.where((F.col("seq") > low) & (F.col("seq") <= high)).select(*EVENT_COLUMNS),
        cached,
    )
    # one job reads the run's events into the cache and gives the run's figures and links
    linked = F.size(F.coalesce("related_ids", F.array().cast("array<string>"))) > 0
    figures = new.agg(
        F.count("*").alias("n"),
        F.max(F.unix_micros("timestamp")).alias("newest"),
        F.collect_set(F.when(linked, F.struct("entity_id", "related_ids"))).alias("links"),
        F.max(F.col("op") == PATCH).alias("patches"),
    ).first()
    assert figures is not None
    pairs = sorted({(r.entity_id, rid) for r in figures["links"] for rid in r.related_ids if rid})
    newest = datetime.fromtimestamp(figures["newest"] / 1e6, UTC) if figures["newest"] else None

    firsts = _cache(
        new.groupBy("entity_id").agg(F.min(F.struct("timestamp", "seq", "op")).alias("first")),
        cached,
    )
    raw = spark.table(raw_name).select(
        "entity_id",
        F.col("timestamp").alias("r_ts"),
        F.col("sequence").alias("r_seq"),
        F.col("record_type").alias("r_type"),
        F.col("related_ids").alias("r_related"),
        *_document_if(bool(figures["patches"])),
        F.col("cluster_id").alias("r_cluster"),
    )
    # the run's entities are broadcast to the raw table's scan: no shuffle of its documents
    is_late = _before(F.col("first.timestamp"), F.col("first.seq"), F.col("r_ts"), F.col("r_seq"))
    present = _cache(
        raw.join(F.broadcast(firsts), "entity_id")
        .withColumn("class", F.when(is_late, LATE_CLASS).otherwise(BASE_CLASS))
        # a base is folded over only by a PATCH: a whole image or a deletion replaces it
        .withColumn("r_document", F.when(F.col("first.op") == PATCH, F.col("r_document"))),
        cached,
    )
    classes = {r["class"]: int(r["count"]) for r in present.groupBy("class").count().collect()}
    absent: dict[str, tuple[int, int]] = {
        r.entity_id: (r.ts, r.seq)
        for r in firsts.join(present.select("entity_id"), "entity_id", "left_anti")
        .select("entity_id", F.unix_micros("first.timestamp").alias("ts"), F.col("first.seq"))
        .collect()
    }
    classes[ABSENT_CLASS] = len(absent)
    refold = [
        r.entity_id
        for r in present.where(F.col("class") == LATE_CLASS).select("entity_id").collect()
    ]
    with session_scope() as session:
        deleted = repository.known_deletions(session, org, absent)
    gone: list[tuple[str, list[str]]] = []
    for entity, first in absent.items():
        known = deleted.get(entity)
        if known is None:
            continue  # never seen: its events start from nothing
        if known.sequence > low or first < (known.timestamp_us, known.sequence):
            refold.append(entity)  # deleted after its first new event, or not trusted
        else:
            gone.append((entity, known.related_ids))
    classes["gone"], classes["refolded"] = len(gone), len(refold)

    parts = [
        _as_input(
            present.where(F.col("class") == BASE_CLASS),
            BASE,
            timestamp=F.col("r_ts"),
            seq=F.col("r_seq"),
            op=F.lit("PUT"),
            record_type=F.col("r_type"),
            related_ids=F.col("r_related"),
            payload=F.col("r_document"),
            cluster_id=F.col("r_cluster"),
        )
    ]
    if gone:
        table = pa.table(
            {"entity_id": [e for e, _ in gone], "related_ids": [r for _, r in gone]},
            schema=pa.schema([("entity_id", pa.string()), ("related_ids", pa.list_(pa.string()))]),
        )
        parts.append(_as_input(small_frame(spark, table), GONE))
    if refold:
        late = F.broadcast(
            small_frame(spark, pa.table({"entity_id": pa.array(refold, pa.string())}))
        )
        parts.append(_as_input(new.join(late, "entity_id", "left_anti"), EVENT))
        history = staging.where(F.col("seq") <= high).select(*EVENT_COLUMNS)
        parts.append(_as_input(history.join(late, "entity_id", "left_semi"), EVENT))
    else:
        parts.append(_as_input(new, EVENT))
    rows = parts[0]
    for part in parts[1:]:
        rows = rows.unionByName(part)
    return RunInput(
        rows=rows.select(*INPUT_COLUMNS),
        events=int(figures["n"]),
        newest=newest,
        pairs=pairs,
        unknown_clusters=[*absent, *(e for e in refold if e not in absent)],
        deleted=set(deleted),
        touched=firsts.select("entity_id"),
        classes=classes,
        cached=cached,
    )
