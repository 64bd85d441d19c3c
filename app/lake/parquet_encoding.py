"""Which columns of a Parquet file Icebatch writes (rewrites, small batches) get a dictionary.

PyArrow dictionary-encodes every column and falls back to plain only once a column chunk's
dictionary passes 1 MiB, so a column of distinct values (an event id, free text) is written as
its values plus an index per row: a vacuum output of 150k rows of the README's `events` was 2.4x
the bytes of the file Spark had written for the same rows. parquet-mr (Spark's writer) keeps a
dictionary only where it encodes smaller; this keeps one where a spread sample of the column's
rows repeats values (bench/RESULTS.md, "Vacuum", twenty-sixth session).
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SAMPLE_ROWS = 8192
# a column whose sample is at least this share distinct values is written plain: its dictionary
# would be the column itself (a column of 20,000 values over 150k rows, 0.8 in its sample, still
# encodes smaller with one, so the line is high)
DISTINCT_SHARE = 0.9


def dictionary_columns(table: pa.Table) -> list[str]:
    """The Parquet column paths of `table` to dictionary-encode (`pq.write_table`'s
    `use_dictionary`): every leaf of a nested column, and each top-level primitive column whose
    sample repeats values."""
    step = max(1, table.num_rows // SAMPLE_ROWS)
    sample = table.take(pa.array(range(0, table.num_rows, step), pa.int64()))
    plain = {
        field.name
        for field, column in zip(table.schema, sample.columns, strict=True)
        if _primitive(field.type)
        and len(column) >= 2
        and pc.count_distinct(column, mode="all").as_py() >= DISTINCT_SHARE * len(column)
    }
    return [path for path in _leaf_paths(table.schema) if path.split(".")[0] not in plain]


def _primitive(kind: pa.DataType) -> bool:
    return not pa.types.is_nested(kind) and not pa.types.is_dictionary(kind)


def _leaf_paths(schema: pa.Schema) -> list[str]:
    """The Parquet column paths PyArrow writes `schema` as (a list: `name.list.element`)."""
    buffer = io.BytesIO()
    pq.write_table(schema.empty_table(), buffer)
    parquet = pq.ParquetFile(pa.BufferReader(buffer.getvalue())).schema
    return [parquet.column(i).path for i in range(len(parquet))]
