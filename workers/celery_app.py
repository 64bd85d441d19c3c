"""The worker's Celery app: one queue, late acks, prefetch 1; a reconciler thread per process."""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import Task
from celery.signals import celeryd_init, setup_logging, worker_ready, worker_shutting_down

from app.config import get_settings
from app.jobs.broker import make_celery
from app.jobs.kinds import TaskName
from app.jobs.reconciler import Reconciler
from app.logs import configure_logging
from workers import metrics, periodic_logs, slots
from workers.runtime import Handler, run_job

log = logging.getLogger(__name__)
celery = make_celery(get_settings())
celery.conf.update(
    include=[  # the task entry point of each domain
        "workers.batches.task",
        "workers.restatements.task",
        "workers.changes.task",
        "workers.maintenance.task",
        "workers.retention.task",
        "workers.scheduler",
        "workers.cdc.task",
    ],
    # automatic maintenance: `icebatch worker --beat` runs Celery's embedded beat
    beat_schedule={
        "icebatch-maintenance": {
            "task": TaskName.SCHEDULE.value,
            "schedule": get_settings().scheduler_seconds,
            "options": {"expires": get_settings().scheduler_seconds},
        },
        "icebatch-cdc": {  # dumpers and processors of the tenants with work
            "task": TaskName.CDC_SCHEDULE.value,
            "schedule": get_settings().cdc_schedule_seconds,
            "options": {"expires": get_settings().cdc_schedule_seconds},
        },
        "icebatch-prune": {  # old rows out of the metadata store (app/pruning/service.py)
            "task": TaskName.PRUNE.value,
            "schedule": get_settings().prune_seconds,
            "options": {"expires": get_settings().prune_seconds},
        },
    },
    beat_schedule_filename=str(get_settings().home / "celerybeat-schedule"),
)
_stop = threading.Event()


def job_task(name: TaskName, handler: Handler) -> Task:
    """Register Celery task `name`: it runs `handler` on the job its message names (claimed,
    heartbeated and finished by `run_job`; the handler's result model, or dict, stored on the
    job). `app.jobs.kinds` says which kinds it serves."""

    def run(job_id: str) -> None:
        slots.run(name, job_id, lambda: run_job(job_id, handler))

    run.__name__ = run.__qualname__ = f"{handler.__name__}_task"
    return celery.task(name=name.value)(run)


def _reconcile_forever() -> None:
    interval = get_settings().reconcile_seconds
    reconciler = Reconciler()
    while not _stop.wait(interval):
        reconciler.run_once()


@celeryd_init.connect  # before the worker's first warnings
@setup_logging.connect
def _logging(**_: Any) -> None:
    """Celery leaves logging to us (no root-logger hijack, no stdout redirect): JSON lines;
    its lines about each periodic pass at DEBUG (`workers.periodic_logs`)."""
    configure_logging()
    periodic_logs.install()


@worker_ready.connect
def _warm_spark(**_: Any) -> None:
    """The SparkSession is built while the worker takes tasks (a task needing it waits)."""
    from workers.spark import warmup

    warmup.start()


@worker_ready.connect
def _size_maintenance_slots(sender: Any = None, **_: Any) -> None:
    pool = getattr(sender, "pool", None)  # the sender is the worker's consumer
    concurrency = getattr(pool, "limit", None) or 1
    slots.SLOTS.configure(concurrency)
    log.info(
        "vacuums, compactions and expiries take at most %s of %s slots",
        slots.SLOTS.limit,
        concurrency,
    )


@worker_ready.connect
def _start_reconciler(**_: Any) -> None:
    threading.Thread(target=_reconcile_forever, name="reconciler", daemon=True).start()
    port = get_settings().worker_metrics_port
    if port:
        metrics.serve(port)
        log.info("worker metrics on port %s", port)


# With `--concurrency` above 1 (Celery's thread pool), a task finishes and is acked in a pool
# thread, but the consumer's event loop only notices when it next wakes, which is up to 2 s
# later. Until then it fetches no new message, so a worker took about one job every 2 s
# (celery/celery#6941, open). A short repeating timer keeps the loop awake.
WAKE_SECONDS = 0.1


def _awake() -> None:
    """Nothing: being called is the point (the event loop ran)."""


@worker_ready.connect
def _keep_the_loop_awake(sender: Any = None, **_: Any) -> None:
    pool = getattr(sender, "pool", None)  # the sender is the worker's consumer
    if pool is not None and type(pool).__module__ == "celery.concurrency.thread":
        sender.timer.call_repeatedly(WAKE_SECONDS, _awake)
        log.info("thread pool: the event loop wakes every %s s", WAKE_SECONDS)


@worker_shutting_down.connect
def _stop_reconciler(**_: Any) -> None:
    _stop.set()
