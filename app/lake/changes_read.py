"""The per-file read of incremental changes: a pure function of a FileTask (app.lake.changes)
and a ReadContext, shared by the API (streamed file by file) and the export job (Spark tasks).

Output rows have the table's columns (all nullable) plus `_change_type`, `_operation`,
`_request_id`, `_snapshot_id` (`_batch_id` is already a table column). A row deleted by a GDPR
tombstone keeps only the dataset's identity columns and `_batch_id`, and so does any row, appended
or deleted, of an identity a GDPR tombstone in force hides (`FileTask.erased`: the delete may
come after the range; `app.lake.gdpr_tombstones`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io import load_file_io
from pyiceberg.io.pyarrow import ArrowScan, schema_to_pyarrow
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadataUtil
from pyiceberg.typedef import Record

from app.lake import cdc_changes
from app.lake.changes import (
    CHANGE_FIELDS,
    NO_MATCH,
    ChangeRange,
    FileTask,
    TaskBatch,
    TaskTombstone,
    plan_changes,
    rank,
)
from app.lake.gdpr_tombstones import GDPR, GdprTombstones
from app.lake.masks import hidden_mask, kept_batches
from app.lake.types import BATCH_COLUMN


def output_schema(schema: Schema) -> pa.Schema:
    """The table's columns (all nullable: GDPR rows keep only identity columns) + the change
    columns."""
    base = schema_to_pyarrow(schema, include_field_ids=False)
    return pa.schema([f.with_nullable(True) for f in base] + CHANGE_FIELDS)


@dataclass(frozen=True)
class ReadContext:
    """What a reader needs besides the task: the table's metadata without its snapshot history,
    where its files live, and the dataset's identity columns."""

    metadata_json: str
    io_properties: dict[str, str]
    location: str
    identity_columns: tuple[str, ...]

    @classmethod
    def of(cls, table: Table, identity_columns: list[str]) -> ReadContext:
        bare = table.metadata.model_copy(
            update={
                "snapshots": [],
                "snapshot_log": [],
                "metadata_log": [],
                "refs": {},
                "current_snapshot_id": None,
                "statistics": [],
                "partition_statistics": [],
            }
        )
        return cls(
            bare.model_dump_json(),
            dict(table.io.properties),
            table.location(),
            tuple(identity_columns),
        )


class FileReader:
    """Reads FileTasks into change rows (`output_schema`), one record batch at a time."""

    def __init__(self, context: ReadContext) -> None:
        self.metadata = TableMetadataUtil.parse_raw(context.metadata_json)
        self.io = load_file_io(context.io_properties, context.location)
        self.schema = self.metadata.schema()
        self.target = output_schema(self.schema)
        self.table_fields = len(self.schema.fields)
        self.types = {f.name: f.type for f in self.target}
        self.keep_gdpr = {*context.identity_columns, BATCH_COLUMN}
        self.scan = ArrowScan(self.metadata, self.io, self.schema, AlwaysTrue())

    def read(self, task: FileTask) -> Iterator[pa.RecordBatch]:
        data_file = DataFile.from_args(
            content=DataFileContent.DATA,
            file_path=task.path,
            file_format=FileFormat.PARQUET,
            partition=Record(),
            record_count=task.record_count,
            file_size_in_bytes=0,
        )
        data_file.spec_id = self.metadata.default_spec_id
        hidden = {c: pa.array(ids, self.types[c]) for c, ids in task.hidden.items()}
        erased = {c: pa.array(ids, self.types[c]) for c, ids in task.erased.items()}
        for batch in kept_batches(self.scan, data_file, hidden):
            if not batch.num_rows:
                continue
            if task.change == "appended":
                out = self._appended(batch, task.batches)
            else:
                out = self._deleted(batch, task.matches, task.limit)
            for part in out:
                if part.num_rows:
                    yield self._erase(part, erased) if erased else part

    def _erase(self, part: pa.RecordBatch, erased: dict[str, pa.Array]) -> pa.RecordBatch:
        """Null every column but the identity columns, `_batch_id` and the change columns in
        the rows of an identity a GDPR tombstone in force hides."""
        mask = hidden_mask(part, erased)
        if not pc.any(mask).as_py():
            return part
        columns = [
            column
            if i >= self.table_fields or name in self.keep_gdpr
            else pc.if_else(mask, pa.scalar(None, column.type), column)
            for i, (name, column) in enumerate(zip(part.schema.names, part.columns, strict=True))
        ]
        return pa.RecordBatch.from_arrays(columns, schema=part.schema)

    def _appended(
        self, batch: pa.RecordBatch, batches: list[TaskBatch]
    ) -> Iterator[pa.RecordBatch]:
        ids = pa.array([b.batch_id for b in batches], pa.string())
        position = pc.index_in(batch.column(BATCH_COLUMN).cast(pa.string()), value_set=ids)
        keep = pc.is_valid(position)
        batch, position = batch.filter(keep), position.filter(keep)
        picked = pc.cast(position, pa.int64()).to_numpy(zero_copy_only=False)
        yield self._annotate(
            batch,
            "appended",
            np.asarray([b.operation for b in batches], dtype=object)[picked],
            np.asarray([b.request_id for b in batches], dtype=object)[picked],
            np.asarray([b.snapshot_id for b in batches], dtype=object)[picked],
        )

    def _deleted(
        self, batch: pa.RecordBatch, matches: dict[str, list[TaskTombstone]], limit: int
    ) -> Iterator[pa.RecordBatch]:
        rows = batch.num_rows
        best = np.full(rows, NO_MATCH, dtype=np.int64)
        deleted = np.zeros(rows, dtype=bool)
        operation = np.full(rows, None, dtype=object)
        request = np.full(rows, None, dtype=object)
        snapshot = np.full(rows, None, dtype=object)
        for column, found in matches.items():
            values = pa.array([t.value for t in found], self.types[column])
            position = pc.index_in(batch.column(column), value_set=values)
            picked = pc.fill_null(pc.cast(position, pa.int64()), -1).to_numpy(zero_copy_only=False)
            ranks = np.array([rank(t) for t in found] + [NO_MATCH], dtype=np.int64)
            row_rank = ranks[picked]  # -1 picks the sentinel
            earliest = np.array([t.earliest_seq for t in found] + [NO_MATCH], dtype=np.int64)
            deleted |= earliest[picked] <= limit
            better = row_rank < best
            if not better.any():
                continue
            chosen = picked[better]
            best[better] = row_rank[better]
            operation[better] = np.asarray([t.operation for t in found], dtype=object)[chosen]
            request[better] = np.asarray([t.request_id for t in found], dtype=object)[chosen]
            snapshot[better] = np.asarray([t.snapshot_id for t in found], dtype=object)[chosen]
        matched = deleted & (best < NO_MATCH)
        gdpr = matched & (operation == GDPR)
        plain = matched & ~gdpr
        for mask, erase in ((plain, False), (gdpr, True)):
            if not mask.any():
                continue
            part = batch.filter(pa.array(mask))
            if erase:
                part = pa.RecordBatch.from_arrays(
                    [
                        part.column(i) if name in self.keep_gdpr else pa.nulls(part.num_rows)
                        for i, name in enumerate(part.schema.names)
                    ],
                    names=part.schema.names,
                )
            yield self._annotate(part, "deleted", operation[mask], request[mask], snapshot[mask])

    def _annotate(
        self,
        batch: pa.RecordBatch,
        change: str,
        operation: np.ndarray,
        request: np.ndarray,
        snapshot: np.ndarray,
    ) -> pa.RecordBatch:
        rows = batch.num_rows
        columns = [
            column.cast(self.target.field(i).type)
            for i, column in enumerate(batch.columns[: self.table_fields])
        ]
        values = ([change] * rows, operation.tolist(), request.tolist(), snapshot.tolist())
        columns += [pa.array(v, f.type) for f, v in zip(CHANGE_FIELDS, values, strict=True)]
        return pa.RecordBatch.from_arrays(columns, schema=self.target)


def read_changes(
    table: Table,
    rng: ChangeRange,
    kind: str,
    identity_columns: list[str],
    gdpr: GdprTombstones,
) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The change rows of `kind` over `rng`, planned now, read file by file as consumed;
    `gdpr`: the GDPR tombstones in force (`app.privacy.reads.in_force`)."""
    tasks = plan_changes(table, rng, kind, gdpr)
    reader = FileReader(ReadContext.of(table, identity_columns))

    def batches() -> Iterator[pa.RecordBatch]:
        for task in tasks:
            yield from reader.read(task)
        if kind == "deleted" and cdc_changes.is_cdc(rng):  # a CDC raw table's merges
            yield from cdc_changes.deleted(table, rng, reader._annotate)

    return reader.target, batches()
