"""Vacuum end to end on PostgreSQL + Redis: a full vacuum racing restatements and ingests, and a
worker SIGKILLed inside the rewrite commit.

The rows the API returns must equal an independent model: plain sets of event ids, built by
applying every ingest and restatement in commit order (the sequence numbers of the snapshot log
and of the jobs' results; a restatement's tombstones first, then the rows its snapshot adds). A
vacuum changes no visible row, so it is not in the model at all.
"""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pyarrow.parquet as pq
import pytest

from tests.fixtures.datasets import EVENTS
from tests.fixtures.e2e import (
    done_job,
    finished,
    gdpr,
    ingest,
    log_shows,
    privacy_complete,
    replay,
    revert,
)
from tests.fixtures.service import Service, new_org, wait_for
from tests.fixtures.vacuum_e2e import (
    Log,
    active_tombstones,
    batch_records,
    check_rows,
    every_job_succeeded,
    job_at,
    load_table,
    rewritten_files,
    snapshot_log,
    tombstones_of,
    uri_path,
    vacuum,
    vacuum_snapshots,
)

pytestmark = [pytest.mark.e2e, pytest.mark.spark]
# on PostgreSQL with Spark in the worker, and as deployed at scale: Spark on a standalone
# cluster of 2 hosts (network namespaces), 2 API processes (tests/fixtures/cluster.py)
postgres_and_cluster = pytest.mark.parametrize("service", ["postgres", "cluster"], indirect=True)


# seconds the vacuum waits between writing its files and taking the commit lease: enough for
# worker-b to boot and commit the first restatements inside the window; free, since the racing
# clients take longer anyway (worker-b's first Spark job starts its JVM)
PAUSE = 15


@postgres_and_cluster
def test_vacuum_racing_restatements_and_ingests(service: Service) -> None:
    """A full vacuum pauses after writing its new files (lease not held); meanwhile clients
    send a GDPR delete of a user whose rows are in those files, reverts, replays and ingests
    (one with rows of a user deleted before). Nothing is lost and nothing resurrected."""
    started = time.monotonic()
    # the race of tombstone commits with the vacuum; the materializer's race with it (its
    # position deletes on files the vacuum replaces make it plan again) is
    # tests/workers/test_position_deletes.py's
    service.env["ICEBATCH_MATERIALIZE_DELETES"] = "false"
    service.start_api()
    key = service.create_key(new_org())
    service.start_worker("worker-a", env={"ICEBATCH_FAILPOINTS": f"after-purge-data={PAUSE}"})
    client = service.client(key)
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    log = Log()
    batches = []
    for i in range(5):  # worker-a is alone: the setup runs on it, then it takes the vacuum
        records = batch_records(i)
        batches.append(ingest(client, dataset_id, records))
        log.ingested(batches[-1], records)
    privacy_id, r = gdpr(client, dataset_id, ["u1"])  # every batch has a file of u1 and u2
    log.restatement(r)
    log.restatement(revert(client, batches[4]))  # batch 4's files hold no live row any more
    privacy_complete(client, privacy_id)
    done_job(client, log.restated[-1].job_id)
    check_rows(client, dataset_id, log)
    setup = time.monotonic()

    job = vacuum(client, dataset_id)
    wait_for(job_at(client, job["id"], ("scan", "purge-data")), 60, "worker-a to claim the vacuum")
    service.start_worker("worker-b")  # a normal worker: it serves everything the clients send
    wait_for(
        log_shows(service, "worker-a", "failpoint after-purge-data: pausing"),
        60,
        "the vacuum to pause after writing its files",
        every=0.1,
    )
    racing = time.monotonic()

    # the GDPR delete of u2 (rows in the files the vacuum rewrote) is sent first, so it leads
    # the queue; the others right after it
    first_sent = threading.Event()

    def gdpr_u2(c: httpx.Client, _: int) -> None:
        privacy, restated = gdpr(c, dataset_id, ["u2"])
        first_sent.set()
        privacy_complete(c, privacy)
        log.restatement(restated)

    def do_ingest(c: httpx.Client, i: int) -> None:
        # rows of u1, deleted before the vacuum: ingested after, they stay visible
        records = [(i * 100 + j, ["u1", "u2", "u7"][j % 3]) for j in range(6)]
        log.ingested(ingest(c, dataset_id, records), records)

    def do_revert(c: httpx.Client, i: int) -> None:
        restated = revert(c, batches[i])
        done_job(c, restated.job_id)
        log.restatement(restated)

    def do_replay(c: httpx.Client, i: int) -> None:
        records = [(i * 100 + 50 + j, ["u1", "u2", "u8"][j]) for j in range(3)]
        batch_id, restated = replay(c, dataset_id, batches[i], records)
        batch = finished(c, batch_id, timeout=120)
        assert batch["status"] == "success", batch
        done_job(c, restated.job_id, timeout=60)
        log.ingested(batch_id, records)
        log.restatement(restated)

    work: list[tuple[Callable[[httpx.Client, int], None], int]] = [
        (gdpr_u2, 0),
        (do_revert, 2),
        (do_replay, 1),
        (do_replay, 3),
        (do_ingest, 10),
        (do_ingest, 11),
    ]

    def client_thread(item: tuple[Callable[[httpx.Client, int], None], int]) -> None:
        action, arg = item
        with service.client(key) as c:
            if action is not gdpr_u2:
                assert first_sent.wait(timeout=30)
            action(c, arg)

    with ThreadPoolExecutor(max_workers=len(work)) as pool:
        for future in [pool.submit(client_thread, w) for w in work]:
            future.result()
    vacuumed = done_job(client, job["id"], timeout=120)
    finished_at = time.monotonic()
    kinds = every_job_succeeded(client)
    assert kinds == Counter(ingest=7, gdpr=2, revert=2, replay=2, vacuum=1), kinds

    # every job succeeded, the rows equal the model; the vacuum hid nothing and showed nothing
    expected = check_rows(client, dataset_id, log)
    # u1, deleted before the vacuum: the rows it got later (ingests, replays) stay visible
    assert {e for e, u, _ in expected if u == "u1"} == {150, 350, 1000, 1003, 1100, 1103}

    snapshots = snapshot_log(client, dataset_id)
    result = vacuumed["result"]
    head = snapshots[result["snapshot_id"]]
    assert head["icebatch"]["icebatch.operation"] == "vacuum", head
    assert head["icebatch"]["icebatch.request-id"] == vacuumed["request_id"]
    assert len(vacuum_snapshots(snapshots, vacuumed["request_id"])) == 1
    assert "tombstone.vacuum.file" in head["tombstone"], head
    start_seq = snapshots[result["start_snapshot_id"]]["sequence_number"]
    assert int(head["icebatch"]["icebatch.start-sequence-number"]) == start_seq

    # the restatements split by commit order around the vacuum's start snapshot
    earlier = [r for r in log.restated if r.sequence_number <= start_seq]
    later = [r for r in log.restated if r.sequence_number > start_seq]
    assert [r.kind for r in earlier] == ["gdpr", "revert"]
    assert sorted(r.kind for r in later) == ["gdpr", "replay", "replay", "revert"]
    u2 = next(r for r in later if r.ids == ["u2"])
    # the race happened: u2's tombstone landed between the vacuum's start and its commit
    assert start_seq < u2.sequence_number < head["sequence_number"], (u2, head)

    # the vacuum purged the tombstones active at its start; those committed during it stay
    assert active_tombstones(client, dataset_id, as_of=result["start_snapshot_id"]) == (
        tombstones_of(earlier)
    )
    assert active_tombstones(client, dataset_id) == tombstones_of(later)
    assert int(head["tombstone"]["tombstone.metrics.vacuum.count"]) == sum(
        len(r.ids) for r in earlier
    )
    assert result["tombstones_purged"] == sum(len(r.ids) for r in earlier)
    assert sorted(result["purged_request_ids"]) == sorted(r.request_id for r in earlier)
    purged = pq.read_table(uri_path(head["tombstone"]["tombstone.vacuum.file"])).to_pylist()
    assert Counter((t["request_id"], t["id"], t["added_seq"]) for t in purged) == Counter(
        {(r.request_id, v, r.sequence_number): 1 for r in earlier for v in r.ids}
    )

    # the new files: data sequence number = the start's; u2's rows are physically there (the
    # later tombstone hides them), rows of u1 and batch 4 (hidden at the start) are gone
    table = load_table(service)
    files = rewritten_files(table, result["snapshot_id"])
    assert {seq for _, seq in files} == {start_seq}, files
    physical = [row for path, _ in files for row in pq.read_table(path).to_pylist()]
    assert {r["user_id"] for r in physical} == {"u2"}
    assert {r["_batch_id"] for r in physical} == set(batches[:4])
    print(
        f"\nvacuum race: result { ({k: result[k] for k in ('files_rewritten', 'files_deleted')}) }"
        f", rows purged {result['rows_purged']}, tombstones purged {result['tombstones_purged']}"
        f"; restatements during it {[(r.kind, r.sequence_number) for r in later]}, start seq "
        f"{start_seq}, vacuum seq {head['sequence_number']}; setup {setup - started:.0f} s, "
        f"race {finished_at - racing:.0f} s, total {time.monotonic() - started:.0f} s"
    )


@postgres_and_cluster
def test_worker_killed_inside_the_rewrite_commit(service: Service) -> None:
    """SIGKILL the vacuum's worker (Python and JVM) while it holds the commit lease right before
    its commit; the reconciler re-queues the job, the other worker commits it once, and the
    dead holder's lease does not stay stuck."""
    started = time.monotonic()
    fast = {"ICEBATCH_COMMIT_LEASE_SECONDS": "5"}
    service.start_api()
    key = service.create_key(new_org())
    # paused far longer than the test waits: it is killed there
    service.start_worker(
        "worker-a", env={**fast, "ICEBATCH_FAILPOINTS": "before-rewrite-commit=120"}
    )
    client = service.client(key)
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    log = Log()
    batches = []
    for i in range(3):
        records = batch_records(i)
        batches.append(ingest(client, dataset_id, records))
        log.ingested(batches[-1], records)
    privacy_id, r = gdpr(client, dataset_id, ["u1"])
    log.restatement(r)
    log.restatement(revert(client, batches[2]))
    privacy_complete(client, privacy_id)
    done_job(client, log.restated[-1].job_id)

    job = vacuum(client, dataset_id)
    line = "failpoint before-rewrite-commit: pausing"
    wait_for(
        log_shows(service, "worker-a", line), 90, "the vacuum to pause in its commit", every=0.1
    )
    # the other worker starts meanwhile; an ingest (appends take no lease) commits on it while
    # the paused holder keeps the lease
    service.start_worker("worker-b", env=fast)
    records = [(300 + j, ["u1", "u2", "u5"][j % 3]) for j in range(6)]
    log.ingested(ingest(client, dataset_id, records), records)
    killed_at = time.monotonic()
    service.kill("worker-a", signal.SIGKILL)
    assert vacuum_snapshots(snapshot_log(client, dataset_id), job["request_id"]) == []
    # the dead holder's lease expires: a restatement sent right away commits
    privacy_id, r = gdpr(client, dataset_id, ["u5"])
    log.restatement(r)
    privacy_complete(client, privacy_id, timeout=60)

    vacuumed = done_job(client, job["id"], timeout=120)
    recovered_at = time.monotonic()
    assert vacuumed["attempt"] == 2, vacuumed
    assert f"job {job['id']}: heartbeat stale" in service.log("worker-b")  # the reconciler
    # and one sent after the vacuum commits too
    log.restatement(revert(client, batches[1]))
    done_job(client, log.restated[-1].job_id, timeout=60)

    kinds = every_job_succeeded(client)
    assert kinds.pop("materialize") >= 1  # the materializer ran beside the vacuum, and succeeded
    assert kinds == Counter(ingest=4, gdpr=2, revert=2, vacuum=1), kinds
    expected = check_rows(client, dataset_id, log)
    assert {u for _, u, _ in expected} == {"u1", "u2", "u6", "u7", "u8"}
    snapshots = snapshot_log(client, dataset_id)
    (head,) = vacuum_snapshots(snapshots, vacuumed["request_id"])
    assert head["snapshot_id"] == vacuumed["result"]["snapshot_id"]
    assert head["icebatch"]["icebatch.operation"] == "vacuum"
    assert "tombstone.vacuum.file" in head["tombstone"]
    start_seq = int(head["icebatch"]["icebatch.start-sequence-number"])
    earlier = [r for r in log.restated if r.sequence_number <= start_seq]
    assert vacuumed["result"]["tombstones_purged"] == sum(len(r.ids) for r in earlier)
    assert active_tombstones(client, dataset_id) == tombstones_of(
        [r for r in log.restated if r.sequence_number > start_seq]
    )
    print(
        f"\nkilled in the rewrite commit: recovered {recovered_at - killed_at:.0f} s after the "
        f"kill; vacuum result {vacuumed['result']['files_rewritten']} files rewritten, "
        f"{vacuumed['result']['tombstones_purged']} tombstones purged; total "
        f"{time.monotonic() - started:.0f} s"
    )
