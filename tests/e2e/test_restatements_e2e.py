"""Restatements end to end on PostgreSQL + Redis: concurrent clients against two workers, and
workers SIGKILLed inside the commit step, again and again.

Both tests end with the same audit. The rows the API returns must equal an independent model
built from the snapshot log's order: a batch's rows carry the sequence number of the snapshot that
added them, and a tombstone of sequence number `s` (its job's result) hides the rows of its
column's value committed with a lower sequence number. The tombstone listing must hold exactly one
tombstone per (request, id), and no commit id may appear on two snapshots.

A third test, expected to fail, reproduces a holder that outlives its lease committing its group a
second time (see its reason).
"""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import httpx
import pytest

from tests.fixtures.datasets import EVENTS
from tests.fixtures.e2e import (
    BATCH_COLUMN,
    Record,
    Restated,
    done_job,
    finished,
    gdpr,
    ingest,
    log_shows,
    privacy_complete,
    read_rows,
    replay,
    revert,
)
from tests.fixtures.service import SLOW, Service, new_org, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.spark]
# on PostgreSQL with Spark in the worker, and as deployed at scale: Spark on a standalone
# cluster of 2 hosts (network namespaces), 2 API processes (tests/fixtures/cluster.py)
postgres_and_cluster = pytest.mark.parametrize("service", ["postgres", "cluster"], indirect=True)

RESTATEMENTS = ("revert", "replay", "gdpr")


@dataclass
class Sent:
    """What the clients sent: each batch's rows (ingests and replays) and each restatement."""

    rows: dict[str, list[Record]]
    restated: list[Restated]


def audit(client: httpx.Client, dataset_id: str, sent: Sent) -> dict[str, int]:
    """Rows, tombstones and snapshot log against the model; returns a few figures."""
    snapshots = client.get(f"/v1/datasets/{dataset_id}/snapshots").json()["items"]
    by_id = {s["snapshot_id"]: s for s in snapshots}
    commit_ids = Counter(
        s["icebatch"]["icebatch.request-id"]
        for s in snapshots
        if "icebatch.request-id" in s["icebatch"]
    )
    assert [c for c, n in commit_ids.items() if n > 1] == []

    for r in sent.restated:
        job = client.get(f"/v1/jobs/{r.job_id}").json()
        assert job["state"] == "succeeded", job
        result = job["result"]
        snapshot = by_id[result["snapshot_id"]]
        assert snapshot["sequence_number"] == result["sequence_number"]
        assert snapshot["icebatch"]["icebatch.request-id"] == result["commit_id"]
        assert snapshot["icebatch"]["icebatch.operation"] == r.kind
        assert result["tombstones_written"] == len(r.ids)
        r.request_id, r.sequence_number = job["request_id"], result["sequence_number"]

    # the model: rows at their batch's sequence number, minus what a later tombstone hides
    hiding: dict[tuple[str, str], int] = {}  # (column, value) -> highest tombstone seq
    for r in sent.restated:
        for value in r.ids:
            key = (r.column, value)
            hiding[key] = max(hiding.get(key, 0), r.sequence_number)
    expected: set[tuple[int, str, str]] = set()
    for batch_id, records in sent.rows.items():
        batch = client.get(f"/v1/batches/{batch_id}").json()
        seq = by_id[batch["snapshot_id"]]["sequence_number"]
        for event_id, user in records:
            if hiding.get((BATCH_COLUMN, batch_id), 0) > seq:
                continue
            if hiding.get(("user_id", user), 0) > seq:
                continue
            expected.add((event_id, user, batch_id))
    got = Counter(
        (r["event_id"], r["user_id"], r["_batch_id"]) for r in read_rows(client, dataset_id)
    )
    assert [row for row, n in got.items() if n > 1] == []  # no row twice
    assert set(got) == expected

    # exactly one tombstone per (request, id), at its request's sequence number
    listing = client.get(f"/v1/datasets/{dataset_id}/tombstones", params={"limit": 10_000}).json()
    assert listing["next"] is None
    found: dict[str, Counter[tuple[str, str, int]]] = defaultdict(Counter)
    for t in listing["items"]:
        found[t["meta"]["request_id"]][(t["namespace"], t["id"], t["added_sequence_number"])] += 1
    assert {
        r.request_id: Counter({(r.column, v, r.sequence_number): 1 for v in r.ids})
        for r in sent.restated
    } == dict(found)
    assert listing["total"] == sum(len(r.ids) for r in sent.restated)

    restatement_snapshots = [
        s for s in snapshots if s["icebatch"].get("icebatch.operation") in RESTATEMENTS
    ]
    grouped = Counter(int(s["icebatch"]["icebatch.request-count"]) for s in restatement_snapshots)
    assert sum(size * n for size, n in grouped.items()) == len(sent.restated)
    return {
        "requests": len(sent.restated),
        "restatement_snapshots": len(restatement_snapshots),
        "largest_group": max(grouped, default=0),
        "rows": len(expected),
        "tombstones": listing["total"],
    }


def check_batch_states(client: httpx.Client, sent: Sent) -> None:
    for r in sent.restated:
        if r.column == BATCH_COLUMN:
            status = client.get(f"/v1/batches/{r.ids[0]}").json()["status"]
            assert status == ("reverted" if r.kind == "revert" else "replaced"), (r, status)


@postgres_and_cluster
def test_concurrent_clients_two_workers(service: Service) -> None:
    """8+ clients at once: reverts, replays, GDPR deletes (overlapping values) and ingests."""
    started = time.monotonic()
    service.start_api()
    key = service.create_key(new_org())
    service.start_worker("worker-a")
    service.start_worker("worker-b")
    client = service.client(key)
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    sent = Sent({}, [])
    lock = threading.Lock()

    def first(i: int) -> None:
        records = [(i * 100 + j, f"u{(i + j) % 8}") for j in range(4)]
        with service.client(key) as c:
            batch_id = ingest(c, dataset_id, records)
        with lock:
            sent.rows[batch_id] = records

    with ThreadPoolExecutor(max_workers=10) as pool:
        list(pool.map(first, range(10)))
    ingested = time.monotonic()
    batches = list(sent.rows)

    # the burst: every client waits at the barrier, then sends at the same moment
    def do_revert(c: httpx.Client, i: int) -> None:
        r = revert(c, batches[i])
        done_job(c, r.job_id)
        with lock:
            sent.restated.append(r)

    def do_replay(c: httpx.Client, i: int) -> None:
        records = [(5000 + i * 10 + j, f"u{(i + j) % 8}") for j in range(3)]
        batch_id, r = replay(c, dataset_id, batches[i], records)
        batch = finished(c, batch_id, timeout=180)
        assert batch["status"] == "success", batch
        done_job(c, r.job_id, timeout=30)
        with lock:
            sent.rows[batch_id] = records
            sent.restated.append(r)

    def do_gdpr(c: httpx.Client, users: list[str]) -> None:
        privacy_id, r = gdpr(c, dataset_id, users)
        privacy_complete(c, privacy_id)
        with lock:
            sent.restated.append(r)

    def do_ingest(c: httpx.Client, i: int) -> None:
        records = [(9000 + i * 10 + j, f"u{(i + j) % 8}") for j in range(3)]
        batch_id = ingest(c, dataset_id, records)
        with lock:
            sent.rows[batch_id] = records

    work: list[tuple[Callable[[httpx.Client, Any], None], Any]] = [
        *[(do_revert, i) for i in (0, 1, 2)],
        *[(do_replay, i) for i in (3, 4, 5)],
        *[(do_gdpr, users) for users in (["u1"], ["u2", "u3"], ["u1", "u4"], ["u3"], ["u6", "u2"])],
        *[(do_ingest, i) for i in (0, 1)],
    ]
    barrier = threading.Barrier(len(work))

    def client_thread(job: tuple[Callable[[httpx.Client, Any], None], Any]) -> None:
        action, arg = job
        with service.client(key) as c:
            barrier.wait(timeout=30)
            action(c, arg)

    with ThreadPoolExecutor(max_workers=len(work)) as pool:
        for future in [pool.submit(client_thread, w) for w in work]:
            future.result()

    check_batch_states(client, sent)
    figures = audit(client, dataset_id, sent)
    print(
        f"\nconcurrency: {figures}; ingest of 10 batches {ingested - started:.0f} s, "
        f"total {time.monotonic() - started:.0f} s"
    )
    assert figures["requests"] == 11
    # the burst's restatements share snapshots: group commit happened
    assert figures["restatement_snapshots"] < figures["requests"], figures


# each round: a worker with this failpoint, a few requests, SIGKILL once it pauses there
KILL_ROUNDS = ["after-commit=4", "before-commit=4", "after-commit=4", "after-commit=4"]


@postgres_and_cluster
def test_workers_killed_inside_the_commit_step(service: Service) -> None:
    """SIGKILL the lease holder right before / right after its Iceberg commit, round after
    round; the next worker recovers each group from the snapshot log, once."""
    started = time.monotonic()
    fast = {"ICEBATCH_COMMIT_LEASE_SECONDS": "5"}
    service.start_api()
    key = service.create_key(new_org())
    service.start_worker(env=fast)
    client = service.client(key)
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    sent = Sent({}, [])
    for i in range(len(KILL_ROUNDS) + 2):  # the last two batches stay; u6..u9 are never deleted
        records = [(i * 100 + j, f"u{(3 * i + j) % 10}") for j in range(5)]
        sent.rows[ingest(client, dataset_id, records)] = records
    batches = list(sent.rows)
    service.kill("worker")  # restatement work only from here on: no Spark
    privacy_ids: list[str] = []

    def submit(i: int) -> None:
        if i < len(KILL_ROUNDS):
            sent.restated.append(revert(client, batches[i]))
        for users in ([f"u{i}", f"u{i + 1}"], [f"u{i + 1}"]):
            privacy_id, r = gdpr(client, dataset_id, users)
            privacy_ids.append(privacy_id)
            sent.restated.append(r)

    landed: list[int] = []
    for i, failpoint in enumerate(KILL_ROUNDS):
        line = f"failpoint {failpoint.partition('=')[0]}: pausing"
        submit(i)
        service.start_worker(env={**fast, "ICEBATCH_FAILPOINTS": failpoint})
        wait_for(
            log_shows(service, "worker", line),
            60,
            f"round {i}: the worker to log {line!r}",
            every=0.1,
        )
        service.kill("worker", signal.SIGKILL)
        snapshots = client.get(f"/v1/datasets/{dataset_id}/snapshots").json()["items"]
        landed.append(
            sum(s["icebatch"].get("icebatch.operation") in RESTATEMENTS for s in snapshots)
        )

    submit(len(KILL_ROUNDS))
    service.start_worker(env=fast)
    for r in sent.restated:
        done_job(client, r.job_id, timeout=120)
    for privacy_id in privacy_ids:
        privacy_complete(client, privacy_id, timeout=10)

    check_batch_states(client, sent)
    figures = audit(client, dataset_id, sent)
    logs = "\n".join(p.read_text(errors="replace") for p in service.home.glob("worker-*.log"))
    recovered = logs.count("already landed as snapshot")
    attempts = Counter(client.get(f"/v1/jobs/{r.job_id}").json()["attempt"] for r in sent.restated)
    after_kills = sum(f.startswith("after-commit") for f in KILL_ROUNDS)
    print(
        f"\nkills: {len(KILL_ROUNDS)} ({KILL_ROUNDS}); groups found landed by the next holder: "
        f"{recovered}; restatement snapshots after each kill: {landed}; job attempts: {attempts}; "
        f"{figures}; "
        f"total {time.monotonic() - started:.0f} s"
    )
    # the killed holder had made one commit attempt: it landed (after-commit) or not (before-)
    assert landed == list(accumulate(int(f.startswith("after-commit")) for f in KILL_ROUNDS)), (
        landed
    )
    # each after-commit kill left a landed group that a later lease holder recorded, once
    assert recovered == after_kills, logs[-5000:]
    assert figures["rows"] > 0


@postgres_and_cluster
def test_holder_paused_past_its_lease_commits_its_group_once(service: Service) -> None:
    """Holder A pauses between its last renew and its commit for longer than the lease. B takes
    the lease and commits A's group under the same commit id; A's commit lands while B waits;
    B's attempt meets a new parent, finds the commit id in the log and only records it."""
    lease = {"ICEBATCH_COMMIT_LEASE_SECONDS": "10"}
    service.start_api()
    key = service.create_key(new_org())
    service.start_worker("worker-a", env={**lease, "ICEBATCH_FAILPOINTS": "before-commit=16"})
    client = service.client(key)
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    sent = Sent({}, [])
    sent.restated.append(gdpr(client, dataset_id, ["u1"])[1])
    line = "failpoint before-commit: pausing"
    wait_for(log_shows(service, "worker-a", line), SLOW, "A to pause before its commit")
    # B holds the lease from A's expiry on; it pauses 8 s before each commit (A's lands first)
    service.start_worker("worker-b", env={**lease, "ICEBATCH_FAILPOINTS": "before-commit=8"})
    sent.restated.append(gdpr(client, dataset_id, ["u2"])[1])
    for r in sent.restated:
        job = done_job(client, r.job_id, timeout=90)
        r.request_id = job["request_id"]
    listing = client.get(f"/v1/datasets/{dataset_id}/tombstones").json()["items"]
    assert Counter((t["meta"]["request_id"], t["id"]) for t in listing) == Counter(
        {(r.request_id, r.ids[0]): 1 for r in sent.restated}
    ), listing
    audit(client, dataset_id, sent)
