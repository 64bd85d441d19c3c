"""The product's catalog (app/lake/catalog.py) parses a metadata file once per process, and a
load is as fresh as PyIceberg's own: a commit by another process is seen on the next load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import sql as pyiceberg_sql
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.types import LongType, NestedField

from app.lake.catalog import Catalog

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True))


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The metadata files PyIceberg's SQL catalog parses, in order."""
    seen: list[str] = []
    parse = pyiceberg_sql.FromInputFile.table_metadata

    def spy(input_file: Any, *args: Any, **kwargs: Any) -> TableMetadata:
        seen.append(input_file.location)
        return parse(input_file, *args, **kwargs)

    monkeypatch.setattr(pyiceberg_sql.FromInputFile, "table_metadata", staticmethod(spy))
    return seen


def _catalogs(folder: Path) -> tuple[Catalog, SqlCatalog]:
    """Ours and PyIceberg's own (another process, as far as ours can tell) on one database."""
    properties = {"uri": f"sqlite:///{folder}/c.db", "warehouse": (folder / "wh").as_uri()}
    return Catalog("t", **properties), SqlCatalog("t", **properties)


def _append(table: Any, ids: list[int]) -> None:
    table.append(pa.Table.from_pydict({"id": ids}, schema=SCHEMA.as_arrow()))


def test_a_metadata_file_is_parsed_once(tmp_path: Path, parsed: list[str]) -> None:
    ours, theirs = _catalogs(tmp_path)
    theirs.create_namespace("o")
    theirs.create_table("o.t", SCHEMA)
    parsed.clear()
    first, second = ours.load_table("o.t"), ours.load_table("o.t")
    assert parsed == [first.metadata_location]
    assert second.metadata_location == first.metadata_location
    assert second.metadata == first.metadata
    assert second.name() == ("o", "t")


def test_a_load_sees_what_another_process_committed_and_what_it_committed(
    tmp_path: Path, parsed: list[str]
) -> None:
    ours, theirs = _catalogs(tmp_path)
    theirs.create_namespace("o")
    theirs.create_table("o.t", SCHEMA)
    assert ours.load_table("o.t").current_snapshot() is None
    _append(theirs.load_table("o.t"), [1, 2])
    seen = ours.load_table("o.t")
    assert seen.metadata_location == theirs.load_table("o.t").metadata_location
    assert sorted(seen.scan().to_arrow()["id"].to_pylist()) == [1, 2]
    _append(seen, [3])  # through ours: it keeps what it wrote, theirs reads it
    parsed.clear()
    table = ours.load_table("o.t")
    assert parsed == []
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    assert table.metadata == theirs.load_table("o.t").metadata


def test_a_table_created_again_under_its_name_is_the_new_one(tmp_path: Path) -> None:
    ours, theirs = _catalogs(tmp_path)
    theirs.create_namespace("o")
    _append(theirs.create_table("o.t", SCHEMA), [1])
    assert ours.load_table("o.t").current_snapshot() is not None
    theirs.drop_table("o.t")
    theirs.create_table("o.t", SCHEMA)
    assert ours.load_table("o.t").current_snapshot() is None
