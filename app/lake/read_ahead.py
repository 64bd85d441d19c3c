"""Reading a scan's data files one ahead of the caller.

PyIceberg reads one file's record batches at a time (`ArrowScan.to_record_batches`), so a reader
that masks a file's deleted rows, or a consumer that encodes them, leaves the read idle while it
works. Here the next file is read on a thread of its own meanwhile (Parquet decoding and Arrow's
kernels release the GIL): a scan costs about what its reads cost, whatever the caller does with
each file's rows. At most one file is held ahead, and only a file of up to `AHEAD_BYTES` on
disk: the memory of a read stays that of two such files.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol, TypeVar

import pyarrow as pa
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.manifest import DataFile
from pyiceberg.table import FileScanTask

AHEAD_BYTES = 128 * 1024**2  # the rewrites' target file size (Settings.rewrite_target_file_bytes)


class HasDataFile(Protocol):
    @property
    def data_file(self) -> DataFile: ...


P = TypeVar("P", bound=HasDataFile)


def file_batches(scan: ArrowScan, data_file: DataFile) -> list[pa.RecordBatch]:
    """Every record batch of one data file, in file order."""
    return list(scan.to_record_batches([FileScanTask(data_file)]))


def read_ahead(
    scan: ArrowScan, planned: Sequence[P]
) -> Generator[tuple[P, list[pa.RecordBatch]], None, None]:
    """Each planned file with its record batches, in order; the next one (when small enough)
    is read while the caller works on the current one."""
    if not planned:
        return
    with ThreadPoolExecutor(1, thread_name_prefix="icebatch-read-ahead") as pool:
        ahead: Future[list[pa.RecordBatch]] | None = None
        for i, current in enumerate(planned):
            batches = ahead.result() if ahead is not None else file_batches(scan, current.data_file)
            ahead = None
            if i + 1 < len(planned):
                following = planned[i + 1].data_file
                if following.file_size_in_bytes <= AHEAD_BYTES:
                    ahead = pool.submit(file_batches, scan, following)
            yield current, batches
