"""The rows an ingest writes carry no source-file column: reading `_metadata` made Spark carry
the whole metadata struct (a row index included) through every write; only the explaining pass,
after a failed write, reads the files again with their names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from app.lake.types import schema_from_specs, user_schema
from tests.fixtures.datasets import EVENTS
from workers.uploads.inputs import StagedFile
from workers.uploads.rows import FILE, checked_rows, validated_frame

pytestmark = pytest.mark.spark

ROWS = pa.table(
    {
        "event_id": pa.array([1, 2, 3], pa.int64()),
        "user_id": ["a", "b", "c"],
        "event_time": pa.array([0, 86_400_000_000, 2 * 86_400_000_000], pa.timestamp("us")),
        "payload": ["x", "y", "z"],
    }
)


def _files(tmp_path: Path, fmt: str) -> list[StagedFile]:
    files = []
    for name, part in (("one", ROWS.slice(0, 2)), ("two", ROWS.slice(2))):
        path = tmp_path / f"{name}.{fmt}"
        if fmt == "parquet":
            pq.write_table(part, path)
        else:
            pcsv.write_csv(part, path)
        files.append(StagedFile(path.name, path))
    return files


def _plan(frame: Any) -> str:
    return str(frame._jdf.queryExecution().optimizedPlan().toString())


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_the_written_rows_read_no_file_metadata(spark: Any, tmp_path: Path, fmt: str) -> None:
    schema = user_schema(schema_from_specs(EVENTS["schema"]))
    files = _files(tmp_path, fmt)

    written = checked_rows(validated_frame(spark, files, fmt, schema), "batch-1")
    assert "_metadata" not in _plan(written)
    assert sorted(r["event_id"] for r in written.collect()) == [1, 2, 3]

    named = validated_frame(spark, files, fmt, schema, with_file=True)
    assert "_metadata" in _plan(named)
    by_file = sorted((r[FILE], r["event_id"]) for r in named.collect())
    assert by_file == [(f"one.{fmt}", 1), (f"one.{fmt}", 2), (f"two.{fmt}", 3)]
