"""Per data file, an index of one column: the positions of its rows by value.

Finding the rows a tombstone hides means reading its column in every data file whose bounds may
hold its id; with identities spread over every file (the usual case: files are sorted by
partition and batch, not by identity) that is the whole column of the table, for each group
commit's rows-hidden count and each materializer run. Data files never change once written, so
the index of a (file, column) built by one such read answers every later lookup in the process
by binary search: the committer and the materializer pay for a file once, not once per commit.

An index holds the column's distinct non-null values sorted (int64, or strings as fixed-width
bytes), and for each the positions of its rows. Strings with a NUL byte are not indexed (fixed
width bytes could not tell "a" from "a\\0"): such a file is read as before. The cache is bounded
in bytes (`ICEBATCH_COLUMN_INDEX_MB`), least recently used first out.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.manifest import DataFile
from pyiceberg.table import FileScanTask, Table

from app.config import get_settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ColumnIndex:
    """The rows of one data file by their value in one column."""

    keys: np.ndarray  # distinct non-null values, ascending: int64, or bytes of dtype S<width>
    starts: np.ndarray  # int64, len(keys) + 1: key i's positions are order[starts[i]:starts[i+1]]
    order: np.ndarray  # the row positions (int32), grouped by key
    rows: int  # rows in the file, nulls included

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.starts.nbytes + self.order.nbytes)

    def lookup(self, ids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """For `ids` (typed like the column): the positions of the rows holding one of them
        and, aligned with those, the index in `ids` of the id each holds (its first, when
        `ids` repeats it)."""
        probe, at = self._probe(ids)
        probe, first = np.unique(probe, return_index=True)  # an id asked twice counts once
        at = at[first]
        if not len(probe):
            return _NONE, _NONE
        if not len(self.keys):
            return _NONE, _NONE
        slot: np.ndarray = np.minimum(np.searchsorted(self.keys, probe), len(self.keys) - 1)
        found = np.flatnonzero(self.keys[slot] == probe)
        if not len(found):
            return _NONE, _NONE
        starts, ends = self.starts[slot[found]], self.starts[slot[found] + 1]
        sizes = ends - starts
        # every position of every found key, without a Python loop: a run per key
        runs = np.repeat(starts - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes)
        positions = self.order[np.arange(int(sizes.sum())) + runs].astype(np.int64)
        return positions, np.repeat(at[found], sizes)

    def positions(self, ids: pa.Array) -> np.ndarray:
        """The sorted positions of the rows whose value is one of `ids`."""
        return np.sort(self.lookup(ids)[0])

    def _probe(self, ids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """`ids` in the keys' representation, with their indexes in `ids` (ids that cannot be
        in the file, because they are null or do not fit the keys, are left out); vectorized:
        a group commit asks thousands of ids of every file."""
        valid = ids.is_valid().to_numpy(zero_copy_only=False)
        if self.keys.dtype.kind != "S":
            values = ids.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
            at = np.flatnonzero(valid)
            return values[at], at
        width = self.keys.dtype.itemsize
        padded, lengths, nul = _fixed_width(ids.fill_null(""))
        at = np.flatnonzero(valid & ~nul & (lengths <= width))
        return padded[at].astype(f"S{width}"), at


_NONE = np.zeros(0, dtype=np.int64)


def build(column: pa.Array | pa.ChunkedArray) -> ColumnIndex | None:
    """The index of a column read whole from one file; None when it cannot be indexed (a
    type other than strings and integers, or a string with a NUL byte)."""
    values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    rows = len(values)
    valid = np.flatnonzero(values.is_valid().to_numpy(zero_copy_only=False))
    present = values.drop_null() if len(valid) < rows else values
    if pa.types.is_integer(present.type):
        keys = present.to_numpy(zero_copy_only=False).astype(np.int64)
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
    elif pa.types.is_string(present.type) or pa.types.is_large_string(present.type):
        # Arrow sorts strings bytewise, the order of their NUL-padded fixed-width form
        order = pc.sort_indices(present).to_numpy()
        ordered, _, nul = _fixed_width(present.take(order))
        if nul.any():
            return None
    else:
        return None
    new_key = np.ones(len(ordered), dtype=bool)
    new_key[1:] = ordered[1:] != ordered[:-1]
    firsts = np.flatnonzero(new_key)
    return ColumnIndex(
        keys=ordered[firsts],
        starts=np.append(firsts, len(ordered)).astype(np.int64),
        order=valid[order].astype(np.int32),
        rows=rows,
    )


def _fixed_width(strings: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-null strings as NUL-padded fixed-width bytes, built from the Arrow buffers without a
    Python object per value; with each one's length in bytes and whether it holds a NUL byte
    (such a value cannot be told from its prefix in this form)."""
    strings = strings.cast(pa.large_string())
    count = len(strings)
    if count and pc.all(pc.string_is_ascii(strings)).as_py():
        # ASCII (the usual identity): Arrow pads every value to one width in C++, and its
        # data buffer is then the fixed-width array itself
        lengths = pc.binary_length(strings).to_numpy(zero_copy_only=False).astype(np.int64)
        width = max(1, int(lengths.max()))
        padded = pc.utf8_rpad(strings, width=width, padding="\0")
        fixed = np.frombuffer(padded.buffers()[2], dtype=f"S{width}", count=count, offset=0)
        nul = pc.match_substring(strings, "\0").to_numpy(zero_copy_only=False)
        return fixed, lengths, nul
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int64)[
        strings.offset : strings.offset + count + 1
    ]
    data_buffer = strings.buffers()[2]
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8)
        if data_buffer is not None
        else np.zeros(0, np.uint8)
    )
    data = data[offsets[0] : offsets[-1]] if count else data[:0]
    lengths = np.diff(offsets)
    width = max(1, int(lengths.max()) if count else 1)
    padded = np.zeros(count * width, dtype=np.uint8)
    nul = np.zeros(count, dtype=bool)
    if len(data):
        # byte j of string i goes to i * width + j: one scatter of the data, O(its bytes)
        owner = np.repeat(np.arange(count), lengths)
        shift = np.arange(count, dtype=np.int64) * width - (offsets[:-1] - offsets[0])
        padded[shift[owner] + np.arange(len(data))] = data
        nul[owner[data == 0]] = True
    return padded.view(f"S{width}"), lengths, nul


class _Cache:
    """The process's indexes by (file, column), bounded in bytes; safe across threads."""

    def __init__(self) -> None:
        self.items: OrderedDict[tuple[str, str], ColumnIndex | None] = OrderedDict()
        self.used = 0
        self.lock = threading.Lock()

    def peek(self, key: tuple[str, str]) -> tuple[ColumnIndex | None, bool]:
        """What is cached for `key`, and whether anything is (None: not indexable)."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key], True
        return None, False

    def get(self, key: tuple[str, str], load: Callable[[], ColumnIndex | None]) -> Any:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        index = load()  # outside the lock: two loads of one file are harmless
        budget = get_settings().column_index_mb * 1024**2
        size = index.nbytes if index is not None else 0
        with self.lock:
            if key not in self.items and size <= budget:
                self.items[key] = index
                self.used += size
            while self.used > budget and self.items:
                _, dropped = self.items.popitem(last=False)
                self.used -= dropped.nbytes if dropped is not None else 0
        return index

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.used = 0


_CACHE = _Cache()


class _Builder:
    """Builds indexes in a thread of their own, so that a file's first lookup reads the file
    as before instead of waiting for its index (a cold worker would otherwise stall the first
    group commit for the whole table's)."""

    def __init__(self) -> None:
        self.queue: queue.Queue[tuple[tuple[str, str], Callable[[], ColumnIndex | None]]] = (
            queue.Queue()
        )
        self.pending: set[tuple[str, str]] = set()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def request(self, key: tuple[str, str], load: Callable[[], ColumnIndex | None]) -> None:
        with self.lock:
            if key in self.pending:
                return
            self.pending.add(key)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="column-index", daemon=True)
                self.thread.start()
        self.queue.put((key, load))

    def _run(self) -> None:
        # the lowest CPU priority for this thread alone (Linux schedules threads as tasks):
        # a cold worker's indexes are built with what the API and the committer leave
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        while True:
            key, load = self.queue.get()
            try:
                _CACHE.get(key, load)
            except Exception:  # a file gone meanwhile (a rewrite): its next lookup reads it
                log.warning("could not index %s of %s", key[1], key[0], exc_info=True)
            finally:
                with self.lock:
                    self.pending.discard(key)


_BUILDER = _Builder()


def for_file(
    table: Table, data_file: DataFile, column: str, *, wait: bool = True
) -> ColumnIndex | None:
    """The index of `column` in one data file (built from one read of that column, then
    cached); None when the column cannot be indexed, or indexes are off
    (`ICEBATCH_COLUMN_INDEX_MB=0`), or (`wait=False`) while it is being built in the
    background: the caller reads the file meanwhile."""
    if get_settings().column_index_mb <= 0:
        return None
    key = (data_file.file_path, column)
    found, present = _CACHE.peek(key)
    if present:
        return found

    def load() -> ColumnIndex | None:
        began = time.perf_counter()
        scan = ArrowScan(table.metadata, table.io, table.schema().select(column), AlwaysTrue())
        read = scan.to_table([FileScanTask(data_file)])
        index = build(read.column(column))
        log.debug(
            "indexed %s of %s (%d rows) in %.3fs",
            column,
            data_file.file_path,
            read.num_rows,
            time.perf_counter() - began,
        )
        return index

    if wait:
        return _CACHE.get(key, load)
    _BUILDER.request(key, load)
    return None


def warm(io: FileIO, paths: Iterable[str], columns: Sequence[str]) -> int:
    """Index `columns` of files this process has just written (a vacuum's or a compaction's
    outputs), now, in the caller's thread; how many indexes it built. A lookup of a file not
    yet indexed reads the file's column and leaves the index to a thread of the lowest
    priority, so after a rewrite of the whole table every group commit's rows-hidden count and
    every materializer run read every new file again until that thread catches up: on a busy
    2-core host, the first bursts after a vacuum waited seconds a group (bench/RESULTS.md,
    "Costs at scale", 2026-12-06). A rewrite builds them before it takes the commit lease."""
    if get_settings().column_index_mb <= 0 or not columns:
        return 0
    built = 0
    for path in paths:
        wanted = [c for c in columns if not _CACHE.peek((path, c))[1]]
        if not wanted:
            continue
        try:
            with io.new_input(path).open() as stream:
                parquet = pq.ParquetFile(stream)
                present = [c for c in wanted if c in parquet.schema_arrow.names]
                read = parquet.read(columns=present)
        except OSError:  # an optimization only: its first lookup reads it, as before
            log.warning("could not index %s of %s", wanted, path, exc_info=True)
            continue
        for column in present:
            _CACHE.get((path, column), functools.partial(build, read.column(column)))
            built += 1
    return built


def clear() -> None:
    """Forget every index (tests; a file's index never goes stale)."""
    _CACHE.clear()


def hidden(
    table: Table, data_file: DataFile, ids: dict[str, pa.Array], *, wait: bool = True
) -> np.ndarray | None:
    """The sorted positions of the rows of `data_file` whose value in a column of `ids` is one
    of that column's ids (what `masks.hidden_mask` marks), from the indexes; None when a
    column's index is not there (see `for_file`): read the file instead."""
    found = []
    for column, values in ids.items():
        index = for_file(table, data_file, column, wait=wait)
        if index is None:
            return None
        found.append(index.lookup(values)[0])
    if not found:
        return _NONE
    return np.unique(np.concatenate(found))
