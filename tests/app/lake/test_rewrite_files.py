"""A rewrite task's output: the surviving rows, in row groups readers can decode in parallel."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from app.lake.rewrite_files import ROW_GROUP_ROWS, RewriteInput, RewriteTask, run

SCHEMA = Schema(
    NestedField(1, "event_id", LongType(), required=True),
    NestedField(2, "user_id", StringType(), required=False),
)


def test_a_rewritten_file_keeps_the_other_rows_in_row_groups_of_at_most_128ki_rows(
    tmp_path: Path,
) -> None:
    rows = 2 * ROW_GROUP_ROWS + 1_000
    target = schema_to_pyarrow(SCHEMA)
    users = [f"u{i % 7}" for i in range(rows)]
    source = tmp_path / "in.parquet"
    pq.write_table(
        pa.table({"event_id": pa.array(range(rows), pa.int64()), "user_id": users}, target),
        source,
    )
    task = RewriteTask(
        index=0,
        inputs=[RewriteInput(str(source), {"user_id": ["u3"]}, rows, source.stat().st_size)],
        output=str(tmp_path / "out.parquet"),
        schema=bytes(target.serialize().to_pybytes()),
    )

    done = run(task)

    expected = [i for i in range(rows) if users[i] != "u3"]  # the model: a plain list
    written = pq.ParquetFile(tmp_path / "out.parquet")
    assert (done.rows_in, done.rows_out) == (rows, len(expected))
    assert written.read().column("event_id").to_pylist() == expected
    groups = [written.metadata.row_group(i).num_rows for i in range(written.num_row_groups)]
    assert max(groups) <= ROW_GROUP_ROWS
    assert len(groups) == -(-len(expected) // ROW_GROUP_ROWS)
