"""Icebatch as deployed at scale: 2 API processes and 3 Celery workers on PostgreSQL and Redis,
their Spark on a standalone cluster of 2 worker hosts (each in its own network namespace,
tests/fixtures/cluster.py). Clients ingest and restate at once; a vacuum's Spark tasks run on
the hosts from Icebatch's shipped code; a host killed under a running task is survived by
Spark's own retry (no second attempt of the job); with every host gone, a job fails with the
reason, never hangs, and nothing is lost; once the hosts are back, work goes on."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.fixtures.cluster import WORKERS, SparkCluster
from tests.fixtures.datasets import EVENTS
from tests.fixtures.e2e import (
    csv,
    done_job,
    finished,
    gdpr,
    ingest,
    privacy_complete,
    replay,
    revert,
    upload_batch,
)
from tests.fixtures.service import SLOW, Service, new_org, wait_for
from tests.fixtures.vacuum_e2e import Log, batch_records, check_rows, vacuum

pytestmark = [pytest.mark.e2e, pytest.mark.spark]
on_the_cluster = pytest.mark.parametrize("service", ["cluster"], indirect=True)

TASK_PAUSE = 8  # each rewrite task sleeps this long on its executor: a window to kill its host
PAUSING = "failpoint rewrite-task: pausing"


def host_running(cluster: SparkCluster, seen: dict[int, int]) -> Callable[[], int | None]:
    """The worker host whose executor has paused in a rewrite task since `seen` was taken."""

    def check() -> int | None:
        for host, text in cluster.executor_logs().items():
            if text.count(PAUSING) > seen.get(host, 0):
                return host
        return None

    return check


def pauses(cluster: SparkCluster) -> dict[int, int]:
    return {host: text.count(PAUSING) for host, text in cluster.executor_logs().items()}


def restore(cluster: SparkCluster, killed: list[int]) -> None:
    """The killed hosts back (the next cluster test needs them), and serving: every Spark
    application placed on them has an executor registered with its driver. A host registers
    in seconds, but the executors it is given are JVMs that take tens of seconds to start
    when CI's other tests load the machine: longer than a job's two 20 s executor waits."""
    since = len(cluster.launches())
    for worker in killed:
        cluster.start_worker(worker)
    wait_for(lambda: cluster.registered() >= WORKERS, 60, "every worker host to register")

    def placed_and_serving() -> bool:
        placed = {app for app, _, _ in cluster.launches()[since:]}
        # with every host gone, each application waits for executors: some must be placed
        if len(set(killed)) == WORKERS and not placed:
            return False
        return placed <= cluster.serving(since)

    try:
        wait_for(placed_and_serving, SLOW, "the returned hosts' executors to register")
    except AssertionError as timeout:
        raise AssertionError(f"{timeout}\n{cluster.diagnosis(since)}") from None


@on_the_cluster
def test_two_apis_three_workers_and_a_lost_host(service: Service) -> None:
    started = time.monotonic()
    cluster: SparkCluster = service.spark_cluster  # type: ignore[attr-defined]
    key = service.create_key(new_org())
    service.env["ICEBATCH_JOB_MAX_ATTEMPTS"] = "2"  # a job with no executor fails in ~2 waits
    service.env["ICEBATCH_SMALL_BATCH_BYTES"] = "0"  # every ingest needs the cluster's executors
    service.env["ICEBATCH_SPARK_CONF"] = service.env["ICEBATCH_SPARK_CONF"].replace(
        "{", f'{{"spark.executorEnv.ICEBATCH_FAILPOINTS": "rewrite-task={TASK_PAUSE}", ', 1
    )
    service.start_api()
    assert service.api_processes == 2
    for worker in ("worker-1", "worker-2", "worker-3"):
        service.start_worker(worker)
    client = service.client(key)
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    log = Log()
    batches: list[str] = []

    def first(i: int) -> None:
        with service.client(key) as c:
            # each worker's first Spark job: its application's executors start on the hosts
            # first (tens of seconds each on CI's loaded machine), so SLOW bounds the wait
            batch_id = ingest(c, dataset_id, batch_records(i), timeout=SLOW)
        log.ingested(batch_id, batch_records(i))
        with log.lock:
            batches.append(batch_id)

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(first, range(6)))
    batches.sort(key=lambda b: min(e for e, _ in log.rows[b]))

    # clients at once, across both API processes: GDPR deletes, a revert, a replay, an ingest
    def do_gdpr(c: httpx.Client, users: list[str]) -> None:
        privacy_id, r = gdpr(c, dataset_id, users)
        privacy_complete(c, privacy_id)
        log.restatement(r)

    def do_revert(c: httpx.Client, i: int) -> None:
        r = revert(c, batches[i])
        done_job(c, r.job_id)
        log.restatement(r)

    def do_replay(c: httpx.Client, i: int) -> None:
        records = [(5000 + j, ["u2", "u7", "u8"][j]) for j in range(3)]
        batch_id, r = replay(c, dataset_id, batches[i], records)
        done_job(c, r.job_id, timeout=120)
        log.ingested(batch_id, records)
        log.restatement(r)

    def do_ingest(c: httpx.Client, i: int) -> None:
        log.ingested(ingest(c, dataset_id, batch_records(i)), batch_records(i))

    work: list[tuple[Callable[[httpx.Client, Any], None], Any]] = [
        (do_gdpr, ["u1"]),
        (do_gdpr, ["u4", "u5"]),
        (do_revert, 0),
        (do_replay, 1),
        (do_ingest, 7),
    ]
    barrier = threading.Barrier(len(work))

    def client_thread(job: tuple[Callable[[httpx.Client, Any], None], Any]) -> None:
        with service.client(key) as c:
            barrier.wait(timeout=30)
            job[0](c, job[1])

    with ThreadPoolExecutor(max_workers=len(work)) as pool:
        for future in [pool.submit(client_thread, w) for w in work]:
            future.result()
    check_rows(client, dataset_id, log)
    loaded = time.monotonic()

    killed: list[int] = []
    try:
        # a vacuum's rewrite tasks pause on their executors; the host running one dies
        seen = pauses(cluster)
        job = vacuum(client, dataset_id)
        host = wait_for(host_running(cluster, seen), SLOW, "a rewrite task to run on a host")
        cluster.kill_worker(host)
        killed.append(host)
        vacuumed_job = done_job(client, job["id"], timeout=240)
        assert vacuumed_job["state"] == "succeeded", vacuumed_job
        assert vacuumed_job["attempt"] == 1, vacuumed_job  # Spark's retry, not a job attempt
        assert vacuumed_job["result"]["rows_purged"] > 0, vacuumed_job["result"]
        expected = check_rows(client, dataset_id, log)
        survivor = next(h for h in range(1, WORKERS + 1) if h != host)
        logs = cluster.executor_logs()
        # the task ran again on the other host, from the zip the driver shipped, not a checkout
        shipped = re.findall(
            rf"icebatch task rewrite: pid \d+, host address {re.escape(cluster.address(survivor))}"
            rf", code from (\S+)",
            logs[survivor],
        )
        assert shipped, logs[survivor][-3000:]
        for origin in shipped:
            assert origin.startswith(str(cluster.folder / f"worker-{survivor}" / "work")), origin
            assert re.search(r"/icebatch-[0-9a-f]{16}\.zip/app/__init__\.py$", origin), origin
        vacuumed = time.monotonic()

        # every host gone and none coming back: the next Spark job (an ingest) fails with the
        # reason after its attempts, instead of waiting for executors forever
        cluster.kill_worker(survivor)
        killed.append(survivor)
        batch_id = upload_batch(client, dataset_id, "csv", {"a.csv": csv(batch_records(8))})
        batch = finished(client, batch_id, timeout=240)
        assert batch["status"] == "failed", batch
        failed = client.get(f"/v1/jobs/{batch['job_id']}").json()
        assert failed["state"] == "failed", failed
        assert failed["attempt"] == 2, failed
        assert "no Spark executor for 20 s" in (failed["error"] or ""), failed["error"]
        assert check_rows(client, dataset_id, log) == expected  # nothing half-written shows
        stranded_at = time.monotonic()
    finally:
        restore(cluster, killed)

    # the hosts are back: the same batch goes in, and still nothing is lost
    log.ingested(ingest(client, dataset_id, batch_records(8)), batch_records(8))
    check_rows(client, dataset_id, log)
    print(
        f"\ncluster: load {loaded - started:.0f} s, vacuum with a host killed "
        f"{vacuumed - loaded:.0f} s, stranded ingest failed after {stranded_at - vacuumed:.0f} s, "
        f"total {time.monotonic() - started:.0f} s"
    )
