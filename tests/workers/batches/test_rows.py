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


def test_a_csv_cell_is_cast_once_and_a_bad_row_still_raises(spark: Any, tmp_path: Path) -> None:
    """The check rides on the written columns, not on a filter Spark would push below the
    typing projection (each cell then cast in the filter and again in the projection: ~0.5 s of
    2M CSV rows). A bad cell, and a required column left empty, still raise the job's error
    before anything the write checks itself."""
    from workers.uploads.outcome import INVALID

    schema = user_schema(schema_from_specs(EVENTS["schema"]))
    written = checked_rows(validated_frame(spark, _files(tmp_path, "csv"), "csv", schema), "b")
    plan = written._jdf.queryExecution().executedPlan().toString()
    nodes = [line.lstrip(" +-*:()0123456789") for line in plan.splitlines()]
    assert not [node for node in nodes if node.startswith("Filter")], plan
    assert plan.count("cast(event_time") == 2, plan  # the typed value and its check, once each
    assert sorted(r["event_id"] for r in written.collect()) == [1, 2, 3]
    assert {r["_batch_id"] for r in written.collect()} == {"b"}

    header = "event_id,user_id,event_time,payload\n"
    for line in ("4,d,not a time,w\n", ",e,2024-01-01T00:00:00,w\n"):
        bad = tmp_path / "bad.csv"
        bad.write_text(header + line)
        frame = checked_rows(
            validated_frame(spark, [StagedFile("bad.csv", bad)], "csv", schema), "b"
        )
        with pytest.raises(Exception, match="ICEBATCH_INVALID_ROW") as raised:
            frame.write.format("noop").mode("overwrite").save()
        assert INVALID in str(raised.value)
