"""Reading a dataset from Spark with its tombstones applied: the helper for consumers.

    from workers.spark.read import read_dataset
    frame = read_dataset(spark, "icebatch.acme.events")              # current view
    frame = read_dataset(spark, "icebatch.acme.events", as_of=snap)  # any snapshot id or ISO time

The rows of the snapshot are read by Iceberg with their `_file`; each namespace's tombstones
(a few thousand to a few hundred thousand ids) are broadcast and left-anti joined on the column,
only for rows of files whose data sequence number is lower than the tombstone's and whose column
bounds may hold one of the ids. Rows of every other file skip the filter. When every data file
is older than every tombstone (the usual case between vacuums), the sequence-number test is
always true, and the read is the anti join on the ids alone, without `_file`. Up to `INLINE_IDS`
ids (a tail the materializer has not reached yet) the same rule is a filter expression instead
of joins: an id set test per row, and the sequence numbers looked up only for the rows whose id
is tombstoned (the joins cost a quarter of a 5M-row scan for a handful of ids; bench/RESULTS.md).

Every GDPR tombstone in force joins the snapshot's own (`app.lake.gdpr_tombstones`): an erased
identity's older rows are hidden in every snapshot, those before the delete too. They are looked up
in the metadata store (`app.privacy.reads.for_table`), which the workers share with the API."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from pyiceberg.catalog import Catalog
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from app.config import get_settings
from app.lake import visible
from app.lake.catalog import get_catalog
from app.lake.gdpr_tombstones import GdprTombstones
from app.privacy import reads as erasures
from app.reads.service import resolve_as_of
from workers.spark.session import catalog_conf
from workers.spark.types import spark_type

FILE, SEQ, TID, TSEQ = "__ib_file", "__ib_seq", "__ib_tid", "__ib_tseq"
ARROW = "spark.sql.execution.arrow.pyspark.enabled"
# up to this many tombstoned ids a read filters by an expression; more are broadcast and joined
# (the expression's sequence-number lookups scan a literal map: fine for the few rows it hides)
INLINE_IDS = 1_000


def _split(name: str, catalog: Catalog) -> tuple[str, str]:
    """(Spark name, catalog identifier) of `catalog.namespace.table` or `namespace.table`."""
    parts = name.split(".")
    if len(parts) == 3:
        return name, ".".join(parts[1:])
    return f"{catalog.name}.{name}", name


def read_dataset(
    spark: SparkSession,
    dataset: str,
    as_of: str | int | None = None,
    *,
    catalog: Catalog | None = None,
    gdpr: GdprTombstones | None = None,
    inline_ids: int = INLINE_IDS,
) -> DataFrame:
    """The rows of `dataset` visible now or at `as_of` (a snapshot id or an ISO 8601 time).

    `gdpr`: the GDPR tombstones in force; None looks them up in the metadata store.
    `inline_ids`: up to this many tombstoned ids are applied as a filter, more by joins.
    """
    if catalog is None:
        catalog = get_catalog()
        for key, value in catalog_conf(get_settings()).items():  # declare it if Spark lacks it
            if spark.conf.get(key, None) is None:
                spark.conf.set(key, value)
    spark_name, identifier = _split(dataset, catalog)
    table = catalog.load_table(identifier)
    snapshot = resolve_as_of(table, None if as_of is None else str(as_of))
    if snapshot is None:
        return spark.table(spark_name).limit(0)
    at = f"{spark_name} VERSION AS OF {snapshot.snapshot_id}"
    # Iceberg's Spark reader applies the snapshot's position deletes: only the tombstones past
    # its materialized mark are joined, and only the GDPR deletes past it are looked up
    if gdpr is None:
        gdpr = erasures.for_table(identifier, table, with_deletes_of=snapshot)
    filt = visible.tombstone_filter(table, snapshot, gdpr, with_position_deletes=True)
    planned = visible.plan(table, snapshot)
    exposed = [(p.data_file.file_path, p.sequence_number) for p in planned if filt.candidates(p)]
    if not exposed:
        return spark.sql(f"SELECT * FROM {at}")
    newest_file = max(p.sequence_number for p in planned)
    older = all(ns.min_seq > newest_file for ns in filt.namespaces)
    if sum(len(ns.ids) for ns in filt.namespaces) <= inline_ids:
        return _filtered(spark, at, filt.namespaces, None if older else exposed)
    if older:
        # every row is older than every tombstone: the join on ids alone is the whole rule
        frame = spark.sql(f"SELECT * FROM {at}")
        for ns in filt.namespaces:
            ids = _ids(spark, ns.ids, ns.max_seq, spark_type(ns.field_type)).select(TID)
            frame = frame.join(F.broadcast(ids), frame[f"`{ns.column}`"] == ids[TID], "left_anti")
        return frame
    frame = spark.sql(f"SELECT *, _file AS {FILE} FROM {at}")
    columns = [c for c in frame.columns if c != FILE]
    schema = T.StructType([T.StructField(FILE, T.StringType()), T.StructField(SEQ, T.LongType())])
    frame = frame.join(F.broadcast(spark.createDataFrame(exposed, schema)), FILE, "left")
    for ns in filt.namespaces:
        ids = _ids(spark, ns.ids, ns.max_seq, spark_type(ns.field_type))
        frame = frame.join(
            F.broadcast(ids),
            (frame[f"`{ns.column}`"] == ids[TID]) & (ids[TSEQ] > frame[SEQ]),
            "left_anti",
        )
    return frame.select(*columns)


def _filtered(
    spark: SparkSession,
    at: str,
    namespaces: list[visible.Namespace],
    exposed: list[tuple[str, int]] | None,
) -> DataFrame:
    """The read rule as one filter: a row is hidden when its id is tombstoned and, unless every
    file is older than every tombstone (`exposed` None), its file is one that may hold a hidden
    row (`exposed`: path and data sequence number) with a sequence number below the tombstone's.
    The sequence numbers are looked up only for rows whose id matched; a file not exposed has
    none (null: the row is kept)."""
    if exposed is None:
        frame, file_seq = spark.sql(f"SELECT * FROM {at}"), None
    else:
        frame = spark.sql(f"SELECT *, _file AS {FILE} FROM {at}")
        seqs = F.create_map(*(c for path, seq in exposed for c in (F.lit(path), F.lit(seq))))
        file_seq = seqs[F.col(FILE)]
    hidden = F.lit(False)
    for ns in namespaces:
        column = F.col(f"`{ns.column}`")
        ids = [F.lit(value).cast(spark_type(ns.field_type)) for value in ns.ids.tolist()]
        match = column.isin(ids)
        if file_seq is not None:
            newest = zip(ids, ns.max_seq.tolist(), strict=True)
            tseq = F.create_map(*(c for i, seq in newest for c in (i, F.lit(int(seq)))))
            match = match & (file_seq < tseq[column])
        hidden = hidden | match
    kept = frame.filter(~F.coalesce(hidden, F.lit(False)))  # a null id is never tombstoned
    return kept if file_seq is None else kept.drop(FILE)


def _ids(spark: SparkSession, ids: np.ndarray, seqs: np.ndarray, kind: T.DataType) -> DataFrame:
    """One namespace's tombstoned ids (typed like the column) with their newest sequence number,
    from the tombstones the planner already holds: no Spark scan, no shuffle."""
    schema = T.StructType([T.StructField(TID, kind), T.StructField(TSEQ, T.LongType())])
    rows = pd.DataFrame({TID: ids, TSEQ: seqs.astype("int64")})
    previous = spark.conf.get(ARROW, None)
    spark.conf.set(ARROW, "true")
    try:
        with warnings.catch_warnings():
            # PySpark 3.5's Arrow path calls a pandas 2.2 deprecated helper; harmless here
            warnings.simplefilter("ignore", DeprecationWarning)
            return spark.createDataFrame(rows, schema)
    finally:
        if previous is None:
            spark.conf.unset(ARROW)
        else:
            spark.conf.set(ARROW, previous)
