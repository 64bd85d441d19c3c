"""The per-file column index (app/lake/column_index.py) against plain Python models: a list
scan for one column, and a set model of files and tombstones for the rows-hidden count and the
materializer's positions on a real table (PyIceberg, SQLite catalog, no Spark)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.table import Table

from app.config import get_settings
from app.lake import column_index, commit, position_deletes, tables, visible
from app.lake.tombstones import NewTombstone
from app.lake.types import BATCH_COLUMN, schema_from_specs
from tests.fixtures.profile import budget

# small alphabets so that values repeat across rows and ids; NUL, non-ASCII and the empty
# string are the corners of the fixed-width representation
TEXT = st.text(alphabet=["a", "b", "é", "\0", "z"], max_size=4)
INTS = st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.integers(-3, 3)


def model_positions(values: list[Any], ids: list[Any]) -> list[int]:
    wanted = {i for i in ids if i is not None}
    return [p for p, v in enumerate(values) if v is not None and v in wanted]


@budget(300)
@given(data=st.data(), strings=st.booleans())
def test_lookup_finds_exactly_the_rows_holding_an_id(data: st.DataObject, strings: bool) -> None:
    element = TEXT if strings else INTS
    values = data.draw(st.lists(st.none() | element, max_size=40))
    ids = data.draw(st.lists(st.none() | element | st.sampled_from(values or [None]), max_size=8))
    arrow_type = pa.large_string() if strings else pa.int64()
    index = column_index.build(pa.array(values, arrow_type))
    if index is None:  # only a string holding a NUL byte keeps a file out of the index
        assert strings
        assert any(isinstance(v, str) and "\0" in v for v in values)
        return
    positions, which = index.lookup(pa.array(ids, arrow_type))
    assert sorted(positions.tolist()) == model_positions(values, ids)
    # each position is labelled with an id it holds
    assert all(values[p] == ids[w] for p, w in zip(positions.tolist(), which.tolist(), strict=True))
    assert index.positions(pa.array(ids, arrow_type)).tolist() == model_positions(values, ids)
    assert index.rows == len(values)


def test_a_chunked_sliced_column_keeps_its_positions() -> None:
    values = ["b", None, "a", "b", "ccc", "a"]
    sliced = pa.chunked_array([pa.array(["x", *values[:3]])[1:], pa.array(values[3:])])
    index = column_index.build(sliced)
    assert index is not None
    assert index.positions(pa.array(["a", "b", "zz"])).tolist() == [0, 2, 3, 5]
    assert index.positions(pa.array(["ccc"])).tolist() == [4]


USER_IDS = ["u1", "u2", "u3", "u4", None]


class ColumnIndexRules(RuleBasedStateMachine):
    """Files appended, GDPR tombstones and batch reverts committed on a real table; the
    committer's rows-hidden count and the materializer's positions, through the indexes, equal
    a set model (and the read path without indexes)."""

    def __init__(self) -> None:
        super().__init__()
        self.folder = tempfile.TemporaryDirectory()
        self.files: list[tuple[int, str, list[str | None]]] = []  # (seq, batch, user per row)
        self.tombstones: list[tuple[str, str, int]] = []  # (column, id, seq)
        self.batches = 0
        self.seq = 0

    @initialize()
    def create(self) -> None:
        folder = Path(self.folder.name)
        catalog = SqlCatalog(
            "t", uri=f"sqlite:///{folder}/c.db", warehouse=(folder / "wh").as_uri()
        )
        schema = schema_from_specs(
            [
                {"name": "id", "type": "long", "required": True},
                {"name": "user_id", "type": "string"},
            ]
        )
        self.table: Table = tables.create_table(catalog, "o.t", schema, [])
        column_index.clear()

    def teardown(self) -> None:
        self.folder.cleanup()

    @rule(users=st.lists(st.sampled_from(USER_IDS), min_size=1, max_size=12))
    def append(self, users: list[str | None]) -> None:
        self.batches += 1
        batch = f"b{self.batches}"
        rows = pa.table(
            {"id": list(range(len(users))), "user_id": users, BATCH_COLUMN: [batch] * len(users)}
        )
        self.table.append(rows.cast(schema_to_pyarrow(self.table.schema())))
        self.seq += 1
        self.files.append((self.seq, batch, users))

    @rule(values=st.lists(st.sampled_from(USER_IDS[:-1]), min_size=1, max_size=3, unique=True))
    def gdpr(self, values: list[str]) -> None:
        self._commit("user_id", values)

    @rule(data=st.data())
    def revert(self, data: st.DataObject) -> None:
        if self.files:
            batch = data.draw(st.sampled_from([b for _, b, _ in self.files]))
            self._commit(BATCH_COLUMN, [batch])

    def _commit(self, column: str, values: list[str]) -> None:
        field_id = self.table.schema().find_field(column).field_id
        new = [NewTombstone(field_id, v, "req", "gdpr") for v in values]
        commit.commit(self.table, files=[], new_tombstones=new, properties={})
        self.seq += 1
        self.tombstones += [(column, v, self.seq) for v in values]

    def _hidden(self, file_seq: int, batch: str, user: str | None) -> bool:
        return any(
            seq > file_seq and ((column == "user_id" and value == user) or value == batch)
            for column, value, seq in self.tombstones
            if column == "user_id" or column == BATCH_COLUMN
        )

    def model_counts(self, ids: list[str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for seq, batch, users in self.files:
            for user in users:
                if user in ids and not self._hidden(seq, batch, user):
                    counts[user] = counts.get(user, 0) + 1
        return counts

    @invariant()
    def counts_match_the_model(self) -> None:
        if not self.files:
            return
        ids = ["u1", "u2", "u3", "u4", "nobody"]
        snapshot = self.table.current_snapshot()
        expected = self.model_counts(ids)
        # a file's first lookup reads it while its index is built in the background: with
        # every index built first (waiting), the count goes through the indexes only
        for p in visible.plan(self.table, snapshot):
            for column in ("user_id", BATCH_COLUMN):
                assert column_index.for_file(self.table, p.data_file, column) is not None
        assert visible.count_by_value(self.table, snapshot, "user_id", ids) == expected
        with indexes_off():
            assert visible.count_by_value(self.table, snapshot, "user_id", ids) == expected

    @invariant()
    def positions_match_the_model(self) -> None:
        """What the materializer asks of a file: the rows a set of ids hides, per column."""
        if not self.files:
            return
        planned = visible.plan(self.table, self.table.current_snapshot())
        by_seq = {seq: (batch, users) for seq, batch, users in self.files}
        for p in planned:
            for column in ("user_id", BATCH_COLUMN):  # built (see counts_match_the_model)
                assert column_index.for_file(self.table, p.data_file, column) is not None
            batch, users = by_seq[p.sequence_number]
            ids = {"user_id": pa.array(["u2", "u4"]), BATCH_COLUMN: pa.array([batch, "b0"])}
            found = position_deletes.hidden_positions(self.table, p.data_file, ids)
            assert found.to_pylist() == list(range(len(users)))  # the batch hides every row
            only_users = {"user_id": pa.array(["u2", "u4"])}
            found = position_deletes.hidden_positions(self.table, p.data_file, only_users)
            assert found.to_pylist() == [i for i, u in enumerate(users) if u in ("u2", "u4")]


class indexes_off:
    """`ICEBATCH_COLUMN_INDEX_MB=0` for a block: the read path."""

    def __enter__(self) -> None:
        self.saved = get_settings().column_index_mb
        get_settings().column_index_mb = 0

    def __exit__(self, *_: object) -> None:
        get_settings().column_index_mb = self.saved


ColumnIndexRules.TestCase.settings = settings(
    budget(25, 12), suppress_health_check=[HealthCheck.too_slow]
)
TestColumnIndexRules = ColumnIndexRules.TestCase


@pytest.fixture(autouse=True)
def _fresh_indexes() -> Iterator[None]:
    column_index.clear()
    yield
    column_index.clear()


def test_the_cache_keeps_to_its_budget(tmp_path: Path) -> None:
    catalog = SqlCatalog(
        "t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri()
    )
    schema = schema_from_specs([{"name": "user_id", "type": "string"}])
    table = tables.create_table(catalog, "o.t", schema, [])
    for n in range(3):
        rows = pa.table({"user_id": [f"user-{n}-{i:06d}" for i in range(20_000)]})
        rows = rows.append_column(BATCH_COLUMN, pa.array([f"b{n}"] * 20_000))
        table.append(rows.cast(schema_to_pyarrow(table.schema())))
    files = [p.data_file for p in visible.plan(table, table.current_snapshot())]
    one = column_index.for_file(table, files[0], "user_id")
    assert one is not None
    saved = get_settings().column_index_mb
    try:
        # room for two files' indexes, not three: the least recently used goes
        get_settings().column_index_mb = max(1, (2 * one.nbytes + 1024**2 // 2) // 1024**2)
        column_index.clear()
        for data_file in files:
            assert column_index.for_file(table, data_file, "user_id") is not None
        cache = column_index._CACHE
        assert cache.used <= get_settings().column_index_mb * 1024**2
        assert (files[0].file_path, "user_id") not in cache.items
        assert (files[2].file_path, "user_id") in cache.items
        positions = column_index.for_file(table, files[1], "user_id")
        assert positions is not None
        assert positions.positions(pa.array(["user-1-000007"])).tolist() == [7]
    finally:
        get_settings().column_index_mb = saved
    assert np.all(one.order[one.starts[:-1]] >= 0)
