"""A batch's input files as Spark rows: read, typed to the dataset schema, each row flagged when
invalid, and invalid rows explained. Shared by the ingest job and by replay staging."""

from __future__ import annotations

from collections.abc import Callable
from itertools import groupby

from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from app.lake.types import BATCH_COLUMN
from workers.spark.types import spark_schema, spark_type
from workers.uploads.inputs import StagedFile, csv_header, parquet_schema
from workers.uploads.outcome import INVALID, IngestOutcome, explain_bad_files

BAD, FILE, CORRUPT = "__bad", "__file", "__corrupt"
# an integer cell's text: digits with an optional sign, between the characters up to a space
# that Spark's cast trims (UTF8String.trimAll)
WHOLE_NUMBER = r"^[\x00-\x20]*[+-]?[0-9]+[\x00-\x20]*$"


def _bad_cast(raw: Column, typed: Column) -> Column:
    return raw.isNotNull() & (F.length(raw) > 0) & typed.isNull()


def typed_csv_column(field_: NestedField) -> tuple[Column, Column]:
    """(typed value, is-bad flag) of a CSV string cell for one top-level field."""
    raw = F.col(f"`{field_.name}`")
    ftype = field_.field_type
    if isinstance(ftype, StringType):
        return raw, F.lit(False)
    if isinstance(ftype, BinaryType):
        typed = F.expr(f"try_to_binary(`{field_.name}`, 'base64')")
    elif isinstance(ftype, StructType | ListType | MapType):
        # from_json alone turns a malformed or mistyped cell into nulls without a word: wrap the
        # cell as {"v": cell} and let the corrupt-record column flag it
        wrapper = T.StructType(
            [
                T.StructField("v", spark_type(ftype, lenient=True)),
                T.StructField(CORRUPT, T.StringType()),
            ]
        )
        parsed = F.from_json(
            F.concat(F.lit('{"v":'), raw, F.lit("}")),
            wrapper.simpleString(),
            {"columnNameOfCorruptRecord": CORRUPT},
        )
        return parsed.getField("v"), raw.isNotNull() & parsed.getField(CORRUPT).isNotNull()
    elif isinstance(ftype, IntegerType | LongType):
        # Spark's cast reads "1.5" as 1 (and "2.0" as 2): a whole number or nothing, as the JSON
        # reader, PostgreSQL and Spark's ANSI mode take an integer (the blanks it trims, kept)
        whole = raw.rlike(WHOLE_NUMBER)
        typed = F.when(whole, raw.cast(spark_type(ftype, lenient=True)))
    else:
        typed = raw.cast(spark_type(ftype, lenient=True))
    return typed, _bad_cast(raw, typed)


def _file_name(with_file: bool) -> Column:
    """The FILE column: each row's source file name, or null. Only the explaining pass asks for
    the name: reading `_metadata` makes Spark carry the whole metadata struct (a row index
    included) through the write (issue 26: ~5 % of the write's CPU in bench runs)."""
    return F.col("_metadata.file_name") if with_file else F.lit(None).cast(T.StringType())


def _read_csv(
    spark: SparkSession, files: list[StagedFile], schema: Schema, with_file: bool
) -> DataFrame:
    frames = []
    keyed = sorted(((tuple(csv_header(f.path)), f) for f in files), key=lambda x: x[0])
    for header, group in groupby(keyed, key=lambda x: x[0]):
        paths = [str(f.path) for _, f in group]
        strings = T.StructType([T.StructField(c, T.StringType()) for c in header])
        frames.append(
            spark.read.options(header=True, mode="PERMISSIVE", multiLine=False, escape='"')
            .schema(strings)
            .csv(paths)
            .withColumn(FILE, _file_name(with_file))
        )
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other, allowMissingColumns=True)
    present = set(frame.columns) - {FILE}
    columns, flags = [], []
    for f in schema.fields:
        if f.name not in present:
            columns.append(F.lit(None).cast(spark_type(f.field_type, lenient=True)).alias(f.name))
            continue
        typed, bad = typed_csv_column(f)
        columns.append(typed.alias(f.name))
        flags.append(bad)
    return frame.select(*columns, _any(flags).alias(BAD), F.col(FILE))


def _read_json(
    spark: SparkSession, files: list[StagedFile], schema: Schema, with_file: bool
) -> DataFrame:
    struct = spark_schema(schema, lenient=True)
    struct = T.StructType(
        [T.StructField(f.name, f.dataType, True) for f in struct.fields]
        + [T.StructField(CORRUPT, T.StringType(), True)]
    )
    frame = (
        spark.read.options(mode="PERMISSIVE", columnNameOfCorruptRecord=CORRUPT)
        .schema(struct)
        .json([str(f.path) for f in files])
        .withColumn(FILE, _file_name(with_file))
    )
    names = [F.col(f"`{f.name}`") for f in schema.fields]
    return frame.select(*names, F.col(CORRUPT).isNotNull().alias(BAD), F.col(FILE))


def _read_parquet(
    spark: SparkSession, files: list[StagedFile], schema: Schema, with_file: bool
) -> DataFrame:
    frames = []
    keyed = sorted(((str(parquet_schema(f.path)), f) for f in files), key=lambda x: x[0])
    for _, group in groupby(keyed, key=lambda x: x[0]):
        frame = spark.read.parquet(*[str(f.path) for _, f in group])
        present = set(frame.columns)
        columns = [
            (F.col(f"`{f.name}`") if f.name in present else F.lit(None))
            .cast(spark_type(f.field_type, lenient=True))
            .alias(f.name)
            for f in schema.fields
        ]
        frames.append(frame.select(*columns, _file_name(with_file).alias(FILE)))
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return frame.withColumn(BAD, F.lit(False))


def _any(flags: list[Column]) -> Column:
    result: Column = F.lit(False)
    for flag in flags:
        result = result | F.coalesce(flag, F.lit(False))
    return result


READERS: dict[str, Callable[[SparkSession, list[StagedFile], Schema, bool], DataFrame]] = {
    "csv": _read_csv,
    "json": _read_json,
    "parquet": _read_parquet,
}


def validated_frame(
    spark: SparkSession,
    files: list[StagedFile],
    fmt: str,
    schema: Schema,
    *,
    with_file: bool = False,
) -> DataFrame:
    """The batch's rows typed to `schema`, plus a per-row BAD flag and the FILE column: the
    source file's name `with_file`, else null (the write does not need it)."""
    frame = READERS[fmt](spark, files, schema, with_file)
    required = [F.col(f"`{f.name}`").isNull() for f in schema.fields if f.required]
    return frame.withColumn(BAD, F.col(BAD) | _any(required))


def checked_rows(frame: DataFrame, batch_id: str) -> DataFrame:
    """The validated frame as rows to write: a bad row raises when Spark reaches it.

    Every written column carries the check (its value, or the error for a bad row), so the
    error is raised before anything the write itself checks on the row (Iceberg's not-null
    assertion of a required column would fail first with its own message), and a column
    Spark prunes cannot take it along. Not a filter: Spark pushes a filter below the
    projection that types the cells, so each CSV cell was cast in the filter and again in the
    projection (issue 26: ~0.5 s more of the job's read of 2M CSV rows)."""
    bad = F.col(BAD)

    def checked(value: Column) -> Column:
        return F.when(bad, F.raise_error(F.lit(INVALID))).otherwise(value)

    names = [name for name in frame.columns if name not in (BAD, FILE)]
    written = [checked(F.col(f"`{name}`")).alias(name) for name in names]
    return frame.select(*written, checked(F.lit(batch_id)).alias(BATCH_COLUMN))


def explain_invalid(
    frame: DataFrame, files: list[StagedFile], fmt: str, schema: Schema, max_errors: int
) -> IngestOutcome:
    """After a write of `frame` failed on a bad row: read the files again, with their names,
    count bad rows per file and explain them row by row."""
    named = validated_frame(frame.sparkSession, files, fmt, schema, with_file=True)
    stats = named.groupBy(FILE).agg(
        F.count(F.lit(1)).alias("rows"), F.sum(F.col(BAD).cast("long")).alias("bad")
    )
    per_file = {r[FILE]: (int(r["rows"]), int(r["bad"] or 0)) for r in stats.collect()}
    return explain_bad_files(files, fmt, schema, per_file, max_errors)
