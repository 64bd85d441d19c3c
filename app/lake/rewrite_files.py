"""One rewrite task: read some data files of one partition, drop the rows their tombstones hide,
write the rest as one new Parquet file (PURGE DATA).

A task is plain data (paths, ids, an Arrow schema as bytes) so Spark can ship it to executors;
the function below is what runs there, and what a dry run runs in the driver to count rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.io.pyarrow import PyArrowFileIO

from app.lake import visible
from app.lake.masks import hidden_mask, keep_mask, typed_ids
from app.lake.parquet_encoding import dictionary_columns

# rows per Parquet row group of a rewritten file: readers decode row groups in parallel
# (PyArrow, DuckDB, whose own is 122,880 rows), so a vacuum output of 238k rows in one group
# read 1.7x slower in PyArrow than in two (bench/RESULTS.md, "Costs at scale", twenty-fifth
# session); PyArrow's default is 1Mi rows
ROW_GROUP_ROWS = 131_072


@dataclass
class RewriteInput:
    path: str
    hide: dict[str, list[Any]]  # column -> the ids whose rows this file must lose
    records: int = 0
    size: int = 0


@dataclass
class RewriteTask:
    index: int
    inputs: list[RewriteInput]
    output: str  # where the new file goes (not written when no row is left)
    schema: bytes  # the table's Arrow schema (with Iceberg field ids), IPC-serialized
    sort_by: list[str] = field(default_factory=list)
    # vacuum only: every row is hidden (the file's bounds hold one tombstoned id and no null):
    # drop it without reading it
    drop: bool = False
    # vacuum only: first read the tombstoned columns, and leave the file as it is when no row
    # is hidden after all (its bounds only straddled a tombstoned id)
    keep_if_clean: bool = False


@dataclass
class RewriteOutput:
    index: int
    inputs: list[str]
    output: str | None  # None: every row was hidden (the inputs are simply deleted)
    rows_in: int
    rows_out: int
    bytes_in: int  # bytes of the input files replaced (rewritten or dropped)
    bytes_out: int
    bytes_read: int = 0
    unchanged: bool = False  # no row was hidden: the inputs stay as they are


def input_for(planned: visible.PlannedFile, filt: visible.TombstoneFilter) -> RewriteInput:
    """The ids to drop from one live file: every active tombstone newer than the file."""
    candidates = filt.candidates(planned)
    data_file = planned.data_file
    return RewriteInput(
        data_file.file_path,
        {col: ids.to_pylist() for col, ids in candidates.items()},
        data_file.record_count,
        data_file.file_size_in_bytes,
    )


def _read(io: PyArrowFileIO, item: RewriteInput, target: pa.Schema) -> tuple[pa.Table, int, int]:
    """The file's rows that survive, in the table's schema; also rows and bytes read."""
    source = io.new_input(item.path)
    with source.open() as stream:
        table = pq.read_table(stream)
    rows_in, size = table.num_rows, len(source)
    if item.hide and rows_in:
        table = table.filter(keep_mask(table, typed_ids(table, item.hide)))
    columns = [
        table.column(f.name).cast(f.type)
        if f.name in table.column_names
        else pa.nulls(table.num_rows, f.type)
        for f in target
    ]
    return pa.Table.from_arrays(columns, schema=target), rows_in, size


def run(task: RewriteTask) -> RewriteOutput:
    """Rewrite one task's files into `task.output` (or nothing, when no row survives)."""
    inputs = [i.path for i in task.inputs]
    if task.drop:
        records, size = sum(i.records for i in task.inputs), sum(i.size for i in task.inputs)
        return RewriteOutput(task.index, inputs, None, records, 0, size, 0)
    if task.keep_if_clean and not count_hidden(task):
        read = sum(i.size for i in task.inputs)  # upper bound: only some columns were read
        return RewriteOutput(task.index, inputs, None, 0, 0, 0, 0, read, unchanged=True)
    io = PyArrowFileIO()
    target = pa.ipc.read_schema(pa.py_buffer(task.schema))
    parts, rows_in, bytes_in = [], 0, 0
    for item in task.inputs:
        kept, rows, size = _read(io, item, target)
        parts.append(kept)
        rows_in, bytes_in = rows_in + rows, bytes_in + size
    table = pa.concat_tables(parts) if parts else target.empty_table()
    if task.sort_by and table.num_rows:
        table = table.sort_by([(c, "ascending") for c in task.sort_by])
    if not table.num_rows:
        return RewriteOutput(task.index, inputs, None, rows_in, 0, bytes_in, 0, bytes_in)
    out = io.new_output(task.output)
    with out.create(overwrite=False) as stream:
        pq.write_table(
            table,
            stream,
            compression="zstd",
            write_statistics=True,
            row_group_size=ROW_GROUP_ROWS,
            use_dictionary=dictionary_columns(table),
        )
    size = len(io.new_input(task.output))
    return RewriteOutput(
        task.index, inputs, task.output, rows_in, table.num_rows, bytes_in, size, bytes_in
    )


def count_hidden(task: RewriteTask) -> int:
    """How many rows the task would drop (reads only the tombstoned columns): for dry runs."""
    io = PyArrowFileIO()
    hidden = 0
    for item in task.inputs:
        if not item.hide:
            continue
        with io.new_input(item.path).open() as stream:
            table = pq.read_table(stream, columns=list(item.hide))
        mask = hidden_mask(table, typed_ids(table, item.hide))
        hidden += int(pc.sum(mask).as_py() or 0)
    return hidden
