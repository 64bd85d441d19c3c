"""The small path's append outlasts a table that keeps moving (`workers.uploads.small.append`):
PyIceberg's own retries (4, about 1.5 s) were lost to a flood of group commits in bench.scale's
0.9 mix. On a PyIceberg SQLite catalog, no Spark."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.table import Table

from app.lake import commit as lake_commit
from app.lake import tables
from app.lake.types import BATCH_COLUMN, schema_from_specs
from workers.uploads import small


@pytest.fixture
def table(tmp_path: Path) -> Table:
    catalog = SqlCatalog(
        "t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri()
    )
    schema = schema_from_specs([{"name": "id", "type": "long", "required": True}])
    return tables.create_table(catalog, "o.t", schema, [])


def written(table: Table, ids: list[int]) -> list[str]:
    rows = pa.table({"id": ids, BATCH_COLUMN: ["b1"] * len(ids)})
    path = f"{table.location().removeprefix('file://')}/data/small-{ids[0]}.parquet"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(rows.cast(schema_to_pyarrow(table.schema())), path)
    return [path]


def test_an_append_outlasts_more_conflicts_than_pyiceberg_retries(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seven commits in a row meet a new parent (PyIceberg gives up after five tries): the
    append lands once, with its files and properties, on the table as it then is."""
    table.append(
        pa.table({"id": [0], BATCH_COLUMN: ["b0"]}).cast(schema_to_pyarrow(table.schema()))
    )
    files = lake_commit.data_files(table, written(table, [1, 2, 3]))
    do_commit = Table._do_commit
    refused: list[int] = []

    def moving(self: Table, *args: object, **kwargs: object) -> object:
        if len(refused) < 7:
            refused.append(1)
            raise CommitFailedException("branch main has changed")
        return do_commit(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Table, "_do_commit", moving)
    before = {s.snapshot_id for s in table.snapshots()}

    snapshot = small.append(table, files, {"icebatch.batch-id": "b1"})

    assert len(refused) == 7
    table.refresh()
    new = [s for s in table.snapshots() if s.snapshot_id not in before]
    assert [s.snapshot_id for s in new] == [snapshot.snapshot_id]  # one snapshot, once
    assert snapshot.summary is not None
    assert snapshot.summary.additional_properties["icebatch.batch-id"] == "b1"
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [0, 1, 2, 3]


def test_an_append_gives_up_after_its_attempts(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = lake_commit.data_files(table, written(table, [1]))

    def always(self: Table, *args: object, **kwargs: object) -> object:
        raise CommitFailedException("branch main has changed")

    monkeypatch.setattr(Table, "_do_commit", always)
    monkeypatch.setattr(small, "APPEND_ATTEMPTS", 2)
    with pytest.raises(CommitFailedException):
        small.append(table, files, {})
