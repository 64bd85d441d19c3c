"""The worker's Celery app: one queue, late acks, prefetch 1; a reconciler thread per process."""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery.signals import worker_ready, worker_shutting_down

from app.config import get_settings
from app.jobs.broker import make_celery
from app.jobs.reconciler import reconcile_once

log = logging.getLogger(__name__)
celery = make_celery(get_settings())
celery.conf.update(
    include=[
        "workers.tasks.ingest",
        "workers.tasks.restate",
        "workers.tasks.export",
        "workers.tasks.rewrite",
        "workers.tasks.expire",
        "workers.scheduler",
    ],
    # automatic maintenance: `icebatch worker --beat` runs Celery's embedded beat
    beat_schedule={
        "icebatch-maintenance": {
            "task": "icebatch.schedule",
            "schedule": get_settings().scheduler_seconds,
            "options": {"expires": get_settings().scheduler_seconds},
        }
    },
    beat_schedule_filename=str(get_settings().home / "celerybeat-schedule"),
)
_stop = threading.Event()


def _reconcile_forever() -> None:
    interval = get_settings().reconcile_seconds
    while not _stop.wait(interval):
        try:
            counts = reconcile_once()
            if any(counts.values()):
                log.info("reconciler: %s", counts)
        except Exception:
            log.warning("reconciler pass failed", exc_info=True)


@worker_ready.connect
def _start_reconciler(**_: Any) -> None:
    threading.Thread(target=_reconcile_forever, name="reconciler", daemon=True).start()


@worker_shutting_down.connect
def _stop_reconciler(**_: Any) -> None:
    _stop.set()
