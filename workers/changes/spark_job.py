"""Export of incremental changes: the driver's plan, read in Spark tasks, written as Parquet.

Each Spark task runs `app.lake.changes_read.FileReader.read` on the FileTasks of its partition,
exactly what the API streams, so the export and `GET /changes` return the same rows.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_type, to_arrow_schema

from app.lake.changes import CHANGE_FIELDS, FileTask
from app.lake.changes_read import FileReader, ReadContext
from workers.spark.tasks import announce
from workers.spark.types import spark_schema


@dataclass(frozen=True)
class Exported:
    path: str
    rows: int
    files: int


def output_struct(reader: FileReader) -> T.StructType:
    """The Spark schema of change rows: the table's columns (nullable) + the change columns."""
    table = spark_schema(reader.schema, lenient=True)
    fields = [T.StructField(f.name, f.dataType, True) for f in table.fields]
    fields += [T.StructField(f.name, from_arrow_type(f.type), True) for f in CHANGE_FIELDS]
    return T.StructType(fields)


def export_changes(
    spark: SparkSession, *, context: ReadContext, tasks: list[FileTask], path: str
) -> Exported:
    """Read `tasks` in Spark (one or a few files per task) and write the rows under `path`."""
    struct = output_struct(FileReader(context))
    with warnings.catch_warnings():
        # PySpark 3.5's Arrow helpers use distutils' LooseVersion; harmless here
        warnings.simplefilter("ignore", DeprecationWarning)
        arrow_schema = to_arrow_schema(struct)

    def read(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        announce("export")
        reader = FileReader(context)
        for batch in batches:
            for text in batch.column(0).to_pylist():
                for rows in reader.read(FileTask.from_json(text)):
                    yield rows.cast(arrow_schema)

    sc = spark.sparkContext
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if tasks:
            slices = max(1, min(len(tasks), sc.defaultParallelism * 4))
            work = spark.createDataFrame(
                sc.parallelize([(t.to_json(),) for t in tasks], slices), "task string"
            )
            frame = work.mapInArrow(read, struct)
        else:
            frame = spark.createDataFrame([], struct)
        frame.write.mode("overwrite").parquet(path)
    return Exported(path, *_count(path))


def _count(path: str) -> tuple[int, int]:
    """(rows, files) of the Parquet files under `path`, from their footers."""
    fs, root = pafs.FileSystem.from_uri(path)
    rows = files = 0
    for info in fs.get_file_info(pafs.FileSelector(root, recursive=True)):
        if info.type == pafs.FileType.File and info.base_name.endswith(".parquet"):
            with fs.open_input_file(info.path) as stream:
                rows += pq.read_metadata(stream).num_rows
            files += 1
    return rows, files
