"""Infrastructure faults with nothing lost: the broker killed and restarted empty, the metadata
store restarted, each in the middle of a mixed workload (`tests/fixtures/workload.py`) that is
checked against its model at the end.

Each test runs its own Redis (and PostgreSQL) on a free port: the machine's shared servers are
never touched. About 1.5-2 minutes each (one worker with a local[2] SparkSession).
"""

from __future__ import annotations

import ast
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fixtures.environments import PG_HOST, create_pg_database, drop_pg_database
from tests.fixtures.private_servers import PrivatePostgres, PrivateRedis
from tests.fixtures.service import FAST_RECOVERY, SLOW, TLS, Service, new_org, wait_for
from tests.fixtures.workload import Workload, mixed_run, reruns

pytestmark = [pytest.mark.e2e, pytest.mark.spark, pytest.mark.postgres]
DOWN_SECONDS = 6


def _service(tmp_path: Path, database_url: str, broker_url: str) -> Service:
    env = {
        **FAST_RECOVERY,
        "ICEBATCH_DATABASE_URL": database_url,
        "ICEBATCH_BROKER_URL": broker_url,
        "ICEBATCH_WAREHOUSE": "",
        "ICEBATCH_CATALOG_NAME": "icebatch",
        "ICEBATCH_STORE_RETRY_AFTER_SECONDS": "1",
    }
    return Service(env, tmp_path)


def _started(service: Service) -> Workload:
    service.start_api()
    key = service.create_key(new_org())
    service.start_worker()
    return Workload(service.client(key), explain=service.report)


def _busy(workload: Workload) -> bool:
    """A job is running and another waits behind it (the worker takes one at a time)."""
    states = [j["state"] for j in workload.all_jobs()]
    return "running" in states and "queued" in states


@pytest.fixture
def shared_pg_service(tmp_path: Path, private_redis: PrivateRedis) -> Iterator[Service]:
    database = create_pg_database("icebatch_faults")
    service = _service(tmp_path, f"{PG_HOST}/{database}", private_redis.url)
    try:
        yield service
    finally:
        service.stop()
        drop_pg_database(database)


def test_redis_killed_and_restarted_empty(
    shared_pg_service: Service, private_redis: PrivateRedis
) -> None:
    """Redis dies with jobs queued and one running, and comes back with no message at all: the
    reconciler sees the new server and re-sends the queued jobs' messages (and the outbox the
    message the API could not send meanwhile); every job finishes, once."""
    service = shared_pg_service
    # ingests in Spark, seconds each, so that jobs still wait in the queue when Redis dies: small
    # ones (no Spark, ~0.05 s) could all be done by then, and the restart found nothing to re-send
    service.env["ICEBATCH_SMALL_BATCH_BYTES"] = "0"
    workload = _started(service)

    def kill_redis(w: Workload) -> None:
        wait_for(lambda: _busy(w), SLOW, "a job running with others queued", every=0.5)
        private_redis.kill()
        w.ingest(["u60"])  # accepted while the broker is down: its message waits in the outbox
        time.sleep(2)
        private_redis.start()
        assert private_redis.answers()

    mixed_run(workload, kill_redis)
    worker_log = service.log("worker")
    assert "the broker restarted; re-sending the queued jobs' messages" in worker_log, worker_log
    # at once, in the pass that saw the restart: not 5 × stale_after later as a forgotten message
    after = worker_log.split("the broker restarted", 1)[1]
    first_pass = re.search(r"reconciler: (\{[^}]*\})", after)
    assert first_pass is not None, after[:5000]
    assert ast.literal_eval(first_pass.group(1))["requeued"] >= 1, after[:5000]


def test_postgres_restarted_mid_run(
    tmp_path: Path, private_postgres: PrivatePostgres, private_redis: PrivateRedis
) -> None:
    """PostgreSQL stops with jobs queued and one running, and starts again: meanwhile the API
    answers 503 + Retry-After fast (never 500, never a hang), /readyz says the database is down,
    the worker pauses; afterwards every job finishes, once, without spending an attempt."""
    database_url = private_postgres.create_database("icebatch")
    service = _service(tmp_path, database_url, private_redis.url)
    try:
        workload = _started(service)

        def restart_postgres(w: Workload) -> None:
            wait_for(lambda: _busy(w), SLOW, "a job running with others queued", every=0.5)
            private_postgres.stop()
            started = time.monotonic()
            for method, path in (
                ("GET", f"/v1/datasets/{w.dataset_id}"),
                ("GET", "/v1/jobs"),
                ("POST", f"/v1/datasets/{w.dataset_id}/vacuum"),
            ):
                down = w.client.request(method, path, json={}, timeout=15)
                assert down.status_code == 503, down.text
                assert down.headers["Retry-After"] == "1"
                assert down.headers["content-type"] == "application/problem+json"
                assert "metadata store is unavailable" in down.json()["detail"]
            ready = httpx.get(f"{service.url}/readyz", timeout=15, verify=TLS)
            assert ready.status_code == 503
            assert ready.json()["checks"]["database"].startswith("down")
            assert time.monotonic() - started < 10  # no request hung on the dead store
            time.sleep(max(0.0, DOWN_SECONDS - (time.monotonic() - started)))
            private_postgres.start()

        mixed_run(workload, restart_postgres)
        worker_log = service.log("worker")
        assert "the metadata store is back" in worker_log, worker_log[-5000:]
        again = reruns(workload.all_jobs())
        assert again == {}, f"{again}\n{service.lines_about(again)}"
    finally:
        service.stop()
