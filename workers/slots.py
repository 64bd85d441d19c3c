"""The worker slots maintenance may take: never all of them.

A worker run with `--concurrency` N takes N jobs at once. Vacuums, compactions and expiries run
for 10-100 s each, and the scheduler may start several at once: at 100k restatements a
compaction and an expiry took both slots of a worker for 13 s, and a burst's 2,000 GDPR deletes,
whose group commit waits for a slot, waited with them (bench/RESULTS.md, costs at scale). So
they run in at most N - `worker_reserved_slots` slots of a process (at least one): a message of
theirs that finds them taken is sent again in `maintenance_slot_retry_seconds` (the job waits
in the queue, its stage `waiting-for-slot`) and the slot it reached is free at once for
restatements, ingests and CDC.

The materializer is not counted: it takes about a second, and it is what makes other engines
hide restated rows. Counted, it waited behind expiries and its lag p99 went from 5-8 s to
11-28 s a level (the scale run of 4be5579).

The beat's pruning pass is counted too (`workers.scheduler.prune_task`: it takes a slot of the
share or is sent again): uncounted, a pass (about 12 s at 100k restatements in the scale run)
and a vacuum could hold both slots of a `--concurrency 2` worker.

A worker with one slot (`icebatch up`, `--concurrency 1`) keeps none: its slot runs everything.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from app.config import get_settings
from app.jobs import service as jobs
from app.jobs.kinds import TaskName

log = logging.getLogger(__name__)
T = TypeVar("T")
MAINTENANCE_TASKS = frozenset({TaskName.REWRITE, TaskName.EXPIRE})  # vacuum, compaction, expire


class Slots:
    """How many maintenance jobs one worker process runs at once, and how many it may."""

    def __init__(self, concurrency: int | None = None) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self.limit: int | None = None  # no share until sized: tasks run in-process run at once
        if concurrency is not None:
            self.configure(concurrency)

    def configure(self, concurrency: int) -> None:
        """Size the share for a pool of `concurrency` slots."""
        reserved = get_settings().worker_reserved_slots
        self.limit = max(1, concurrency - reserved)

    def run_or_later(self, work: Callable[[], T], later: Callable[[float], None]) -> T | None:
        """`work()` in a maintenance slot if one is free; else None, and `later(retry)` to have
        the message come again in `maintenance_slot_retry_seconds`."""
        with self.maintenance() as taken:
            if taken:
                return work()
        later(get_settings().maintenance_slot_retry_seconds)
        return None

    @contextmanager
    def maintenance(self) -> Iterator[bool]:
        """Take a maintenance slot for the block if one is free: True when taken (given back at
        the end), False when all are taken."""
        with self._lock:
            taken = self.limit is None or self._running < self.limit
            if taken:
                self._running += 1
        try:
            yield taken
        finally:
            if taken:
                with self._lock:
                    self._running -= 1


# this worker process's, sized from its pool when the worker is ready (`workers/celery_app.py`);
# until then, and in a process that runs tasks without a worker (the tests' `run_jobs`), no share
SLOTS = Slots()


def run(name: TaskName, job_id: str, run_job: Callable[[], None], slots: Slots = SLOTS) -> None:
    """`run_job()` for the message of task `name` on job `job_id`; a maintenance job waits in
    the queue instead when this process runs as many as it may."""
    if name not in MAINTENANCE_TASKS:
        run_job()
        return

    def later(retry: float) -> None:
        if jobs.wait_for_slot(job_id, retry):
            log.info(
                "job %s: %s maintenance slot(s) busy here; sent again in %.1f s",
                job_id,
                slots.limit,
                retry,
            )

    slots.run_or_later(run_job, later)
