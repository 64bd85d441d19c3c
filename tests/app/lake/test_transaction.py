"""The product's PyIceberg transaction (app/lake/transaction.py): the staged metadata is computed
once per staged state, and is always what PyIceberg itself computes for that state."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg import table as pyiceberg_table
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import update_table_metadata
from pyiceberg.types import LongType, NestedField, StringType

from app.lake.transaction import begin

SNAPSHOTS = 30


def _catalog(folder: Path) -> SqlCatalog:
    folder.mkdir(parents=True, exist_ok=True)
    return SqlCatalog("t", uri=f"sqlite:///{folder}/c.db", warehouse=(folder / "wh").as_uri())


def _table(catalog: SqlCatalog, name: str = "o.t") -> Table:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "user_id", StringType(), required=False),
    )
    catalog.create_namespace_if_not_exists(name.split(".")[0])
    return catalog.create_table(name, schema)


def _rows(table: Table, first: int, count: int = 2) -> pa.Table:
    ids = list(range(first, first + count))
    arrow = table.schema().as_arrow()
    return pa.Table.from_pydict({"id": ids, "user_id": [f"u{i}" for i in ids]}, schema=arrow)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """A table with SNAPSHOTS snapshots: the copies the cache saves grow with them."""
    table = _table(_catalog(tmp_path_factory.mktemp("history")))
    for i in range(SNAPSHOTS):
        with begin(table) as transaction:
            transaction.append(_rows(table, i * 2))
    return table


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[TableMetadata]:
    """Every staged metadata PyIceberg's transaction computes (its `update_table_metadata`)."""
    seen: list[TableMetadata] = []

    def spy(*args: Any, **kwargs: Any) -> TableMetadata:
        result = update_table_metadata(*args, **kwargs)
        seen.append(result)
        return result

    monkeypatch.setattr(pyiceberg_table, "update_table_metadata", spy)
    return seen


def _append(open_transaction: Callable[[Table], Any], table: Table, first: int) -> None:
    with open_transaction(table) as transaction:
        transaction.append(_rows(table, first), snapshot_properties={"icebatch.test": str(first)})


def test_an_append_computes_each_staged_state_once(
    history: Table, computed: list[TableMetadata]
) -> None:
    _append(Table.transaction, history, 10_000)
    plain = len(computed)
    computed.clear()
    _append(begin, history, 20_000)
    ours = len(computed)
    # one per staged state: the table's own, and after the snapshot's updates are staged
    assert ours <= 3, ours
    assert plain >= 3 * ours, (plain, ours)  # what PyIceberg 0.12 pays without the cache
    assert len({id(m) for m in computed}) == ours


def test_a_read_sees_what_was_staged_and_what_was_committed(history: Table) -> None:
    transaction = begin(history)
    before = transaction.table_metadata
    assert transaction.table_metadata is before  # kept while nothing is staged
    transaction.set_properties({"icebatch.a": "1"})
    staged = transaction.table_metadata
    assert staged is not before
    assert staged.properties["icebatch.a"] == "1"
    assert "icebatch.a" not in before.properties
    transaction.set_properties({"icebatch.a": "2"})
    assert transaction.table_metadata.properties["icebatch.a"] == "2"
    transaction.commit_transaction()
    # the commit replaced the table's metadata: the next read is computed on it
    assert history.properties["icebatch.a"] == "2"
    assert begin(history).table_metadata.properties["icebatch.a"] == "2"
    history.refresh()
    assert begin(history).table_metadata.current_snapshot_id == history.metadata.current_snapshot_id


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.integers(1, 3)),
            st.tuples(st.just("property"), st.sampled_from(["x", "y"])),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_the_same_table_as_pyiceberg_commits(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, Any]]
) -> None:
    """Random transactions, each committed on two twin tables, one through PyIceberg's own
    transaction and one through ours: after each, the same rows, properties and snapshot
    summaries; within one, every staged read equals PyIceberg's own computation of it."""
    folder = tmp_path_factory.mktemp("twins")
    catalog = _catalog(folder)
    theirs, ours = _table(catalog, "o.theirs"), _table(catalog, "o.ours")
    first = 0
    for step, arg in steps:
        for table, open_transaction in ((theirs, Table.transaction), (ours, begin)):
            with open_transaction(table) as transaction:
                if step == "append":
                    transaction.append(_rows(table, first, arg), snapshot_properties={"n": "1"})
                else:
                    transaction.set_properties({f"icebatch.{arg}": str(first)})
                expected = update_table_metadata(table.metadata, transaction._updates)
                staged = transaction.table_metadata
                assert staged.model_dump(exclude={"last_updated_ms"}) == expected.model_dump(
                    exclude={"last_updated_ms"}
                )
        first += 10
        assert ours.properties == theirs.properties
        assert ours.scan().to_arrow().sort_by("id") == theirs.scan().to_arrow().sort_by("id")
        summaries = [[s.summary for s in t.snapshots()] for t in (ours, theirs)]
        assert summaries[0] == summaries[1]


def test_every_commit_opens_its_transaction_through_begin() -> None:
    """No `<table>.transaction()` nor `table.append(...)` in the product outside
    app/lake/transaction.py: either opens PyIceberg's own, uncached transaction."""
    root = Path(__file__).resolve().parents[3]
    found = []
    for path in [*root.joinpath("app").rglob("*.py"), *root.joinpath("workers").rglob("*.py")]:
        if path == root / "app" / "lake" / "transaction.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            method, receiver = node.func.attr, node.func.value
            opens = method == "transaction" and not node.args
            appends = (
                method == "append" and isinstance(receiver, ast.Name) and receiver.id == "table"
            )
            if opens or appends:
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found, found
