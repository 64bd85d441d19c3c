"""Snapshot ranges of incremental reads (app/lake/changes.py)."""

from __future__ import annotations

from typing import Any

import pytest


def test_a_broken_chain_is_missing_snapshot() -> None:
    from types import SimpleNamespace

    from app.lake import changes as lake_changes

    def snap(sid: int, parent: int | None, seq: int) -> Any:
        return SimpleNamespace(snapshot_id=sid, parent_snapshot_id=parent, sequence_number=seq)

    kept = {3: snap(3, 2, 3), 4: snap(4, 3, 4)}
    table: Any = SimpleNamespace(snapshot_by_id=kept.get)
    with pytest.raises(lake_changes.MissingSnapshot) as missing:
        lake_changes.snapshot_range(table, None, kept[4])
    assert missing.value.snapshot_id == 2
    assert [s.snapshot_id for s in lake_changes.snapshot_range(table, kept[3], kept[4]).chain] == [
        4
    ]
    with pytest.raises(lake_changes.NotAncestor):
        lake_changes.snapshot_range(table, kept[4], kept[3])


def test_candidate_values_are_the_candidates_as_lists_converted_once() -> None:
    """A change task's ids per file (`candidate_values`, JSON-able) equal the Arrow candidates,
    sliced from one Python list per filter and tombstone age (not converted per file)."""
    from pyiceberg.conversions import to_bytes
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.schema import Schema
    from pyiceberg.typedef import Record
    from pyiceberg.types import LongType, NestedField, StringType

    from app.lake import visible

    schema = Schema(NestedField(1, "user_id", StringType()), NestedField(2, "n", LongType()))
    ids = [f"u{i:03d}" for i in range(100)]
    rows = pa_tombstones([(1, v, 10 if i % 2 else 20) for i, v in enumerate(ids)])
    filt = visible.TombstoneFilter(schema, rows)

    def planned(lower: str, upper: str, seq: int) -> visible.PlannedFile:
        data_file = DataFile.from_args(
            content=DataFileContent.DATA,
            file_path=f"{lower}-{upper}.parquet",
            file_format=FileFormat.PARQUET,
            partition=Record(),
            record_count=5,
            file_size_in_bytes=1,
            lower_bounds={1: to_bytes(StringType(), lower)},
            upper_bounds={1: to_bytes(StringType(), upper)},
        )
        return visible.PlannedFile(data_file, seq, 1)

    files = [planned("u010", "u020", 5), planned("u000", "u099", 5), planned("u050", "u0999", 15)]
    files += [planned("u2", "u3", 5), planned("u000", "u099", 25)]
    for file in files:
        want = {c: a.to_pylist() for c, a in filt.candidates(file).items()}
        assert filt.candidate_values(file) == want
    assert filt.candidate_values(files[0]) == {"user_id": ids[10:21]}
    assert filt.candidate_values(files[2]) == {"user_id": ids[50:100:2]}  # newer than seq 15
    assert filt.candidate_values(files[3]) == {}
    assert sorted(filt.namespaces[0].lists) == [-1, 15]  # one conversion per tombstone age


def pa_tombstones(rows: list[tuple[int, str, int]]) -> Any:
    import pyarrow as pa

    namespace, ids, seqs = zip(*rows, strict=True)
    return pa.table(
        {
            "namespace": pa.array(namespace, pa.int32()),
            "id": pa.array(ids, pa.string()),
            "added_seq": pa.array(seqs, pa.int64()),
        }
    )
