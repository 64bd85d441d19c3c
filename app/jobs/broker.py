"""The Celery app as both sides see it: the API publishes by task name, workers consume."""

from __future__ import annotations

from functools import lru_cache

import redis
from celery import Celery

from app.config import Settings, get_settings

QUEUE = "icebatch"


def make_celery(settings: Settings) -> Celery:
    """Celery with at-least-once delivery; job state lives in SQL, never in a result backend."""
    celery = Celery("icebatch", broker=settings.broker_url)
    celery.conf.update(
        task_default_queue=QUEUE,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        broker_connection_retry_on_startup=True,
        # SQLAlchemy's transport hands its options to create_engine: only Redis gets them.
        broker_transport_options=(
            {"visibility_timeout": 3600} if settings.broker_url.startswith("redis") else {}
        ),
        # the API publishes after commit; a broker that is down must not hold a request long:
        # the outbox keeps the message and the reconciler publishes it later
        task_publish_retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.5},
        task_serializer="json",
        accept_content=["json"],
    )
    return celery


def declare_queue(settings: Settings) -> None:
    """Make the embedded broker's queue before any process uses it (`icebatch migrate`, run by
    every command that starts one). Kombu's SQLAlchemy transport makes a queue on first use, a
    SELECT then an INSERT: two processes starting at once (a worker's consumer and its embedded
    beat) race on it, and the loser's session stays failed. Redis needs nothing."""
    if not settings.broker_url.startswith("sqla+"):
        return
    from kombu import Connection, Queue

    with Connection(settings.broker_url) as connection:
        Queue(QUEUE, channel=connection.default_channel).declare()


@lru_cache
def get_celery() -> Celery:
    return make_celery(get_settings())


def broker_instance(settings: Settings) -> str | None:
    """An id of the running broker server that changes when it restarts (Redis's `run_id`);
    None for the embedded broker, whose queue is a file that survives its users."""
    if not settings.broker_url.startswith(("redis://", "rediss://")):
        return None
    client = redis.Redis.from_url(settings.broker_url, socket_timeout=2, socket_connect_timeout=2)
    try:
        return str(client.info("server")["run_id"])
    finally:
        client.close()
