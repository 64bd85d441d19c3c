"""Quiet periodic passes: Celery logs each beat pass four times at INFO (sent, received,
succeeded, or discarded when it expired unrun), every `cdc_schedule_seconds` (2 s) for the CDC
pass and every `scheduler_seconds` for maintenance: about 90 lines a minute of an idle worker.
Those lines go to DEBUG; the passes log what they did themselves (a job queued, a dataset
skipped), and a pass that fails is still logged at ERROR by Celery."""

from __future__ import annotations

import logging

from app.jobs.kinds import TaskName

PERIODIC = (TaskName.SCHEDULE.value, TaskName.CDC_SCHEDULE.value, TaskName.PRUNE.value)
# how Celery names a task in its lines: `name[id]` (worker) and `(name)` (beat)
_MARKS = tuple(mark for name in PERIODIC for mark in (f"{name}[", f"({name})"))


class PeriodicPasses(logging.Filter):
    """Demote Celery's INFO lines about a periodic pass to DEBUG (dropped unless the root
    logger logs DEBUG)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not record.name.startswith("celery"):
            return True
        message = record.getMessage()
        if not any(mark in message for mark in _MARKS):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)


def install() -> None:
    """Filter every handler of the root logger (where Celery's lines end up)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, PeriodicPasses) for f in handler.filters):
            handler.addFilter(PeriodicPasses())
