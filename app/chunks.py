"""Long `IN (...)` lists sent in parts: every value is a bound parameter, and a statement may
bind at most 65,535 of them on PostgreSQL (its protocol) and 32,766 on SQLite. A list whose
length the workload sets (the GDPR restatements in force on a dataset, the requests a vacuum
purged) is queried a part at a time."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import TypeVar

T = TypeVar("T")
SIZE = 10_000  # values per statement: far below both limits, few round trips


def in_chunks(values: Collection[T], size: int = SIZE) -> Iterator[list[T]]:
    """`values` as lists of at most `size`, in their order (none for no values)."""
    listed = list(values)
    for start in range(0, len(listed), size):
        yield listed[start : start + size]
