"""Tombstone-changing commits: data files and tombstones in one snapshot, fenced on the parent.

PyIceberg retries a failed commit by re-applying the snapshot on the new parent. For a commit that
carries tombstones this is wrong: its tombstone list and sequence number were computed for the
parent it read, and replaying them on another parent silently drops the tombstones committed in
between. So the snapshot is applied without registering it for PyIceberg's retry, the
`AssertRefSnapshotId(main = parent)` requirement makes the catalog's compare-and-swap reject any
other parent, and the caller (the group committer) re-plans on `ParentMoved`.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow.parquet as pq
from pyiceberg.conversions import from_bytes
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.io.pyarrow import (
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.table.update import UpdateTableMetadata
from pyiceberg.typedef import Record

from app import clock
from app.lake import tombstones
from app.lake.tombstones import NewTombstone
from app.lake.transaction import begin


class ParentMoved(Exception):
    """Another commit landed first; nothing of this one is in the table: plan it again."""


def data_files(table: Table, paths: Iterable[str]) -> list[DataFile]:
    """Describe Parquet files written outside Iceberg (by a staged Spark write) as data files.

    Each file holds one partition (the writer split by the partition transforms), and the
    partition's source columns have exact bounds, so the partition value is the transform of the
    source column's lower bound, whatever the transform.
    """
    paths = list(paths)
    if not paths:  # a revert or GDPR group: no statistics plan to build
        return []
    metadata = table.metadata
    schema, spec = metadata.schema(), metadata.spec()
    plan = compute_statistics_plan(schema, metadata.properties)
    mapping = parquet_path_to_id_mapping(schema)
    out = []
    for path in paths:
        input_file = table.io.new_input(path)
        with input_file.open() as stream:
            parquet_metadata = pq.read_metadata(stream)
        stats = data_file_statistics_from_parquet_metadata(parquet_metadata, plan, mapping)
        serialized = stats.to_serialized_dict()
        values = []
        for field in spec.fields:
            source = schema.find_field(field.source_id)
            raw = serialized["lower_bounds"].get(field.source_id)
            value = None if raw is None else from_bytes(source.field_type, raw)  # type: ignore[arg-type]
            values.append(field.transform.transform(source.field_type)(value))
        out.append(
            DataFile.from_args(
                content=DataFileContent.DATA,
                file_path=path,
                file_format=FileFormat.PARQUET,
                partition=Record(*values),
                file_size_in_bytes=len(input_file),
                sort_order_id=None,
                spec_id=metadata.default_spec_id,
                equality_ids=None,
                key_metadata=None,
                **serialized,
            )
        )
    return out


def commit(
    table: Table,
    *,
    files: list[DataFile],
    new_tombstones: list[NewTombstone],
    properties: dict[str, str],
) -> Snapshot:
    """Commit `files` and `new_tombstones` as one snapshot on the table's current snapshot.

    Raises ParentMoved (having removed the files this call wrote) when the current snapshot
    changed since `table` was loaded.
    """
    parent = table.current_snapshot()
    transaction = begin(table)
    producer = transaction.update_snapshot().fast_append()
    snapshot_id = producer.snapshot_id
    written: list[str] = []
    summary = dict(properties)
    if new_tombstones:
        result = tombstones.write_commit(
            table,
            parent,
            new_tombstones,
            snapshot_id=snapshot_id,
            sequence_number=table.metadata.next_sequence_number(),
            now=clock.now(),
        )
        written, summary = result.written, summary | result.properties
    producer.snapshot_properties = summary
    for data_file in files:
        producer.append_data_file(data_file)
    # UpdateTableMetadata.commit, not producer.commit(): the latter registers the producer for
    # PyIceberg's retry-on-a-new-parent, which must never happen to a tombstone commit
    UpdateTableMetadata.commit(producer)
    try:
        transaction.commit_transaction()
    except CommitFailedException as exc:
        tombstones.discard(table.io, written)
        raise ParentMoved(str(exc)) from exc
    snapshot = table.snapshot_by_id(snapshot_id)
    assert snapshot is not None
    return snapshot
