"""Reading a dataset from Spark with its tombstones applied: the helper for consumers.

    from workers.spark.read import read_dataset
    frame = read_dataset(spark, "icebatch.acme.events")              # current view
    frame = read_dataset(spark, "icebatch.acme.events", as_of=snap)  # any snapshot id or ISO time

The rows of the snapshot are read by Iceberg with their `_file`; each namespace's tombstones
(a few thousand to a few hundred thousand ids) are broadcast and left-anti joined on the column,
only for rows of files whose data sequence number is lower than the tombstone's and whose column
bounds may hold one of the ids. Rows of every other file skip the filter.
"""

from __future__ import annotations

from pyiceberg.catalog import Catalog
from pyiceberg.table import Table
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from app.config import get_settings
from app.lake import tombstones, visible
from app.lake.catalog import get_catalog
from app.reads.service import resolve_as_of
from workers.spark.session import catalog_conf
from workers.spark.types import spark_type

FILE, SEQ, TID, TSEQ = "__ib_file", "__ib_seq", "__ib_tid", "__ib_tseq"


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
) -> DataFrame:
    """The rows of `dataset` visible now or at `as_of` (a snapshot id or an ISO 8601 time)."""
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
    frame = spark.sql(
        f"SELECT *, _file AS {FILE} FROM {spark_name} VERSION AS OF {snapshot.snapshot_id}"
    )
    columns = [c for c in frame.columns if c != FILE]
    filt = visible.tombstone_filter(table, snapshot)
    exposed = [
        (p.data_file.file_path, p.sequence_number)
        for p in visible.plan(table, snapshot)
        if filt.candidates(p)
    ]
    if not exposed:
        return frame.select(*columns)
    files = spark.createDataFrame(
        exposed,
        T.StructType([T.StructField(FILE, T.StringType()), T.StructField(SEQ, T.LongType())]),
    )
    frame = frame.join(F.broadcast(files), FILE, "left")
    for namespace, ids in _namespaces(spark, table, snapshot).items():
        column = table.schema().find_column_name(namespace)
        assert column is not None
        frame = frame.join(
            F.broadcast(ids),
            (frame[f"`{column}`"] == ids[TID]) & (ids[TSEQ] > frame[SEQ]),
            "left_anti",
        )
    return frame.select(*columns)


def _namespaces(spark: SparkSession, table: Table, snapshot: object) -> dict[int, DataFrame]:
    """Per namespace field id: (id typed like the column, highest sequence number)."""
    listed = tombstones.read_list(table.io, tombstones.list_location(table, snapshot))  # type: ignore[arg-type]
    rows = spark.read.parquet(*[s.path for s in listed.segments])
    out = {}
    for field_id in sorted({int(k) for s in listed.segments for k in s.namespaces}):
        field = table.schema().find_field(field_id)
        out[field_id] = (
            rows.where(F.col("namespace") == field_id)
            .groupBy("id")
            .agg(F.max("added_seq").alias(TSEQ))
            .select(F.col("id").cast(spark_type(field.field_type)).alias(TID), TSEQ)
        )
    return out
