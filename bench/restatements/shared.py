"""What every part of the restatements benchmark uses: the services' addresses, the sizes and
levels, the progress log and timing helpers."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")
PG = os.environ.get("ICEBATCH_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
REDIS = os.environ.get("ICEBATCH_BENCH_REDIS", "redis://127.0.0.1:6379")
DAYS, USERS, UNIVERSE, NS = 4, 100_000, 1_000_000, "bench"
LEVELS = (0, 1_000, 10_000, 100_000)
DIAG = 10_000  # the level of part (b)'s diagnostic reads
COLUMNS = ["event_id", "user_id", "event_time", "payload", "_batch_id"]
MODES = {
    "cow": "copy-on-write",
    "mor": "merge-on-read",
}
BEGAN = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - BEGAN:7.1f}s] {message}", flush=True)


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    began = time.perf_counter()
    value = fn()
    return time.perf_counter() - began, value


def pct(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by the nearest-rank rule; nan when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(np.ceil(q * len(ordered))) - 1))]
