"""Tombstone storage and fenced commits, on a PyIceberg SQLite catalog (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.table import Table

from app.lake import commit, tables, tombstones, visible
from app.lake.tombstones import FANOUT, NewTombstone
from app.lake.types import BATCH_COLUMN, schema_from_specs


@pytest.fixture
def table(tmp_path: Path) -> Table:
    catalog = SqlCatalog(
        "t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri()
    )
    schema = schema_from_specs(
        [{"name": "id", "type": "long", "required": True}, {"name": "user_id", "type": "string"}]
    )
    return tables.create_table(catalog, "o.t", schema, [])


def append(table: Table, batch: str, rows: list[tuple[int, str]]) -> None:
    data = pa.table(
        {
            "id": [r[0] for r in rows],
            "user_id": [r[1] for r in rows],
            BATCH_COLUMN: [batch] * len(rows),
        }
    )
    table.append(data.cast(schema_to_pyarrow(table.schema())))


def user_tombstones(table: Table, values: list[str]) -> list[NewTombstone]:
    field_id = table.schema().find_field("user_id").field_id
    return [NewTombstone(field_id, v, "req", "gdpr") for v in values]


def visible_ids(table: Table) -> list[int]:
    _, batches = visible.row_batches(table, table.current_snapshot())
    return sorted(i for b in batches for i in b.column("id").to_pylist())


def test_a_commit_writes_only_its_tombstones_and_a_bounded_list(table: Table) -> None:
    append(table, "b1", [(1, "a")])
    sizes = []
    for n in range(FANOUT**2 + 3):
        before = {
            p.name for p in Path(table.location().removeprefix("file://")).rglob("L*.parquet")
        }
        commit.commit(
            table, files=[], new_tombstones=user_tombstones(table, [f"x{n}"]), properties={}
        )
        after = {p.name for p in Path(table.location().removeprefix("file://")).rglob("L*.parquet")}
        new = after - before
        # one segment per commit: its delta, or the merge that took the delta in when a level
        # filled up (a delta written and merged at once would be a file no list names)
        assert len(new) == 1
        assert next(iter(new)).startswith("L0-") == (n % FANOUT != FANOUT - 1)
        listed = tombstones.read_list(
            table.io, tombstones.list_location(table, table.current_snapshot())
        )
        sizes.append(len(listed.segments))
        assert listed.total == n + 1
    # the list holds at most FANOUT segments per level: O(log n) entries, not one per commit
    assert max(sizes) <= 3 * FANOUT
    # every segment file under the table is named by some snapshot's list (nothing left for
    # orphan cleanup: an unreferenced file holds back GDPR erasure)
    listed_anywhere = {
        Path(segment.path).name
        for snapshot in table.snapshots()
        for segment in tombstones.read_list(
            table.io, tombstones.list_location(table, snapshot)
        ).segments
    }
    on_disk = {p.name for p in Path(table.location().removeprefix("file://")).rglob("L*.parquet")}
    assert on_disk == listed_anywhere
    active = tombstones.active(table, table.current_snapshot())
    assert sorted(active["id"].to_pylist()) == sorted(f"x{n}" for n in range(FANOUT**2 + 3))
    snapshot = table.current_snapshot()
    assert snapshot is not None
    assert snapshot.summary is not None
    summary = snapshot.summary.additional_properties
    assert summary[tombstones.TOTAL] == str(FANOUT**2 + 3)
    assert summary[tombstones.ADDED] == "1"


def test_a_commit_on_a_moved_parent_is_refused_and_leaves_no_file(
    table: Table, tmp_path: Path
) -> None:
    append(table, "b1", [(1, "a"), (2, "b")])
    stale = table.catalog.load_table("o.t") if hasattr(table, "catalog") else None
    stale = stale or SqlCatalog(
        "t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri()
    ).load_table("o.t")
    commit.commit(table, files=[], new_tombstones=user_tombstones(table, ["a"]), properties={})
    folder = Path(table.location().removeprefix("file://")) / tombstones.FOLDER
    files_before = sorted(folder.iterdir())
    with pytest.raises(commit.ParentMoved):
        commit.commit(stale, files=[], new_tombstones=user_tombstones(stale, ["b"]), properties={})
    assert sorted(folder.iterdir()) == files_before
    table.refresh()
    # the refused commit's tombstone is not there; the first one still is
    assert visible_ids(table) == [2]


def test_tombstones_hide_only_rows_committed_before_them(table: Table) -> None:
    append(table, "b1", [(1, "a"), (2, "b")])
    commit.commit(table, files=[], new_tombstones=user_tombstones(table, ["a"]), properties={})
    append(table, "b2", [(3, "a")])
    assert visible_ids(table) == [2, 3]
    counts = visible.count_by_value(table, table.current_snapshot(), "user_id", ["a", "b", "z"])
    assert counts == {"a": 1, "b": 1}


def test_rows_committed_with_a_tombstone_are_not_hidden_by_it(table: Table) -> None:
    """Strictly older only: a file committed in the tombstone's own snapshot (as a replay's new
    rows are) has the tombstone's sequence number, and its rows stay visible."""
    append(table, "b1", [(1, "a"), (2, "b")])
    path = f"{table.location()}/data/same-snapshot.parquet"
    rows = pa.table({"id": [3], "user_id": ["a"], BATCH_COLUMN: ["b2"]})
    with table.io.new_output(path).create() as out:
        pq.write_table(rows.cast(schema_to_pyarrow(table.schema())), out)
    snapshot = commit.commit(
        table,
        files=commit.data_files(table, [path]),
        new_tombstones=user_tombstones(table, ["a"]),
        properties={},
    )
    planned = visible.plan(table, snapshot)
    assert {p.sequence_number for p in planned} == {1, snapshot.sequence_number}
    assert visible_ids(table) == [2, 3]
    counts = visible.count_by_value(table, snapshot, "user_id", ["a", "b"])
    assert counts == {"a": 1, "b": 1}


def test_vacuum_scan_plans_exposed_files_and_the_tombstones_it_frees(table: Table) -> None:
    from app.lake.vacuum_plan import plan_vacuum

    append(table, "b1", [(1, "a"), (2, "b")])  # one file per append: users a..b
    append(table, "b2", [(3, "c"), (4, "d")])  # users c..d
    append(table, "b3", [(5, "x"), (6, "y")])  # users x..y: no tombstone here
    commit.commit(
        table, files=[], new_tombstones=user_tombstones(table, ["a", "d", "zz"]), properties={}
    )
    append(table, "b4", [(7, "a")])  # after the tombstones: not exposed
    snapshot = table.current_snapshot()

    full = plan_vacuum(table, snapshot)
    assert full.exposed_files == 2
    assert sorted(f.records for f in full.files) == [2, 2]
    # every exposed file is rewritten: every tombstone leaves the active set
    assert sorted(full.purged["id"].to_pylist()) == ["a", "d", "zz"]

    partial = plan_vacuum(table, snapshot, max_files=1)
    assert [f.records for f in partial.files] == [2]
    assert partial.exposed_files == 2
    # the oldest exposed file (users a..b) is planned; 'd' still lives in the other one;
    # 'zz' is in no file's bounds, so nothing holds it back
    assert sorted(partial.purged["id"].to_pylist()) == ["a", "zz"]
    assert plan_vacuum(table, snapshot, max_bytes=1).files == []


def test_a_vacuum_that_purged_every_unmaterialized_tombstone_up_to_its_start_moves_the_mark(
    table: Table,
) -> None:
    """The mark moves to the vacuum's start only when no tombstone up to it that is not yet
    materialized is left in the list: a partial vacuum leaves the mark where it was."""
    append(table, "b1", [(1, "a"), (2, "b"), (3, "c")])
    for user in ("a", "b", "c"):
        commit.commit(table, files=[], new_tombstones=user_tombstones(table, [user]), properties={})
    start = table.current_snapshot()
    assert start is not None
    assert tombstones.materialized_seq(table, start) == 0
    active = tombstones.active(table, start)
    seqs = dict(zip(active["id"].to_pylist(), active["added_seq"].to_pylist(), strict=True))
    through = start.sequence_number or 0
    assert max(seqs.values()) == through

    def mark_after(purged: list[str]) -> tuple[int, dict[str, str]]:
        removed = active.filter(pc.is_in(active["id"], pa.array(purged)))
        written = tombstones.write_removal(table, start, removed, tag="t", purged_through=through)
        listed = tombstones.read_list(table.io, written.list_path)
        return listed.materialized_seq, written.properties

    mark, properties = mark_after(["a", "b", "c"])
    assert mark == through
    assert properties[tombstones.MATERIALIZED] == str(through)
    mark, properties = mark_after(["a", "c"])  # 'b' stays: its rows are still in the files
    assert mark == 0
    assert tombstones.MATERIALIZED not in properties
    # a compaction (nothing purged, no start given) restates the list as it is
    unchanged = tombstones.write_removal(table, start, active.slice(0, 0), tag="t")
    assert tombstones.read_list(table.io, unchanged.list_path).materialized_seq == 0
