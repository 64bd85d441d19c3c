"""An ingest's input files: what was staged, and what the Spark reader needs from each before it
reads it (CSV headers, Parquet schemas). The file-level checks live with the row checks in
`workers.uploads.explain`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


@dataclass(frozen=True)
class StagedFile:
    """One uploaded file of a batch: its client-side name and where it was staged."""

    name: str
    path: Path


def csv_header(path: Path) -> list[str]:
    """The CSV file's header (its columns, in file order), to group files Spark can read alike."""
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        return next(csv.reader(handle), [])


def parquet_schema(path: Path) -> pa.Schema:
    """The Parquet file's Arrow schema (its footer only), to group files Spark can read alike."""
    return pq.read_schema(path)
