"""Reading a scan's files one ahead: every file's rows, in plan order, whether each next file is
read ahead or (too big) when its turn comes; a reader that stops early leaves no read behind."""

from __future__ import annotations

import threading
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan, schema_to_pyarrow
from pyiceberg.table import Table

from app.lake import read_ahead, tables, visible
from app.lake.types import BATCH_COLUMN, schema_from_specs


@pytest.fixture
def table(tmp_path: Path) -> Table:
    catalog = SqlCatalog(
        "t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri()
    )
    schema = schema_from_specs([{"name": "id", "type": "long", "required": True}])
    table = tables.create_table(catalog, "o.t", schema, [])
    for n in range(5):  # five files of 3 rows each
        rows = pa.table({"id": [10 * n + i for i in range(3)], BATCH_COLUMN: [f"b{n}"] * 3})
        table.append(rows.cast(schema_to_pyarrow(table.schema())))
    return table


def ids(batches: list[pa.RecordBatch]) -> list[int]:
    return [i for batch in batches for i in batch.column("id").to_pylist()]


@pytest.mark.parametrize("ahead_bytes", [0, read_ahead.AHEAD_BYTES])
def test_every_file_is_read_once_in_plan_order(
    table: Table, ahead_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_ahead, "AHEAD_BYTES", ahead_bytes)  # 0: no file is read ahead
    scan = ArrowScan(table.metadata, table.io, table.schema(), AlwaysTrue())
    planned = visible.plan(table, table.current_snapshot())
    got = [(p, ids(batches)) for p, batches in read_ahead.read_ahead(scan, planned)]
    assert [p for p, _ in got] == planned
    # each file's own rows, as a plain read of that one file gives them
    assert [rows for _, rows in got] == [
        ids(read_ahead.file_batches(scan, p.data_file)) for p in planned
    ]
    assert sorted(i for _, rows in got for i in rows) == [
        10 * n + i for n in range(5) for i in range(3)
    ]


def test_a_reader_that_stops_early_leaves_no_thread(table: Table) -> None:
    scan = ArrowScan(table.metadata, table.io, table.schema(), AlwaysTrue())
    files = read_ahead.read_ahead(scan, visible.plan(table, table.current_snapshot()))
    next(files)  # the second file is now being read ahead
    assert any(t.name.startswith("icebatch-read-ahead") for t in threading.enumerate())
    files.close()
    assert not any(t.name.startswith("icebatch-read-ahead") for t in threading.enumerate())
