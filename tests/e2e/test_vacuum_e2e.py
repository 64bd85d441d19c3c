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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
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
from tests.fixtures.service import Service, new_org, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.spark]
postgres_only = pytest.mark.parametrize("service", ["postgres"], indirect=True)

# user of row j of a batch; rows j and j + 3 share a day, so a batch's files hold the users
# (u5, u6), (u1, u2) and (u7, u8): only the second file's bounds on user_id admit u1
USERS = ["u5", "u1", "u7", "u6", "u2", "u8"]
Row = tuple[int, str, str]  # (event_id, user_id, _batch_id)
Tombstone = tuple[str, str, str, int]  # (request_id, namespace, id, added sequence number)


def batch_records(i: int) -> list[Record]:
    """Six rows: event `i*100 + j` of user USERS[j] (a day partition per event id % 3)."""
    return [(i * 100 + j, USERS[j]) for j in range(6)]


@dataclass
class Log:
    """What the clients did: rows of each batch (ingests and replays) and each restatement."""

    rows: dict[str, list[Record]] = field(default_factory=dict)
    restated: list[Restated] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ingested(self, batch_id: str, records: list[Record]) -> None:
        with self.lock:
            self.rows[batch_id] = records

    def restatement(self, r: Restated) -> None:
        with self.lock:
            self.restated.append(r)


def every_job_succeeded(client: httpx.Client) -> Counter[str]:
    """Every job of the organization (ingests, restatements, vacuums) ended `succeeded` (a
    batch reads `success` a moment before its job row finishes: wait for that)."""

    def settled() -> list[dict[str, Any]] | None:
        jobs = client.get("/v1/jobs", params={"limit": 500}).json()
        assert jobs["next_offset"] is None
        items: list[dict[str, Any]] = jobs["items"]
        return items if all(j["state"] not in ("queued", "running") for j in items) else None

    items = wait_for(settled, 30, "every job to finish", every=0.5)
    assert [j for j in items if j["state"] != "succeeded"] == [], items
    return Counter(j["kind"] for j in items)


def snapshot_log(client: httpx.Client, dataset_id: str) -> dict[int, dict[str, Any]]:
    items = client.get(f"/v1/datasets/{dataset_id}/snapshots").json()["items"]
    return {s["snapshot_id"]: s for s in items}


def settle(client: httpx.Client, log: Log, snapshots: dict[int, dict[str, Any]]) -> None:
    """Every restatement job succeeded; fill in its request id and sequence number."""
    for r in log.restated:
        job = client.get(f"/v1/jobs/{r.job_id}").json()
        assert job["state"] == "succeeded", job
        result = job["result"]
        assert result["tombstones_written"] == len(r.ids), result
        snapshot = snapshots[result["snapshot_id"]]
        assert snapshot["sequence_number"] == result["sequence_number"]
        assert snapshot["icebatch"]["icebatch.operation"] == r.kind
        r.request_id, r.sequence_number = job["request_id"], result["sequence_number"]


def model(client: httpx.Client, log: Log, snapshots: dict[int, dict[str, Any]]) -> set[Row]:
    """Apply ingests and restatements in commit order to a plain set of rows."""
    steps: list[tuple[int, int, Callable[[dict[int, tuple[str, str]]], None]]] = []

    def adds(batch_id: str, records: list[Record]) -> Callable[[dict[int, tuple[str, str]]], None]:
        def apply(live: dict[int, tuple[str, str]]) -> None:
            for event_id, user in records:
                assert event_id not in live, event_id
                live[event_id] = (user, batch_id)

        return apply

    def hides(column: str, values: list[str]) -> Callable[[dict[int, tuple[str, str]]], None]:
        where = 1 if column == BATCH_COLUMN else 0

        def apply(live: dict[int, tuple[str, str]]) -> None:
            for event_id in [e for e, row in live.items() if row[where] in values]:
                del live[event_id]

        return apply

    for batch_id, records in log.rows.items():
        batch = client.get(f"/v1/batches/{batch_id}").json()
        assert batch["status"] in ("success", "reverted", "replaced"), batch
        steps.append(
            (snapshots[batch["snapshot_id"]]["sequence_number"], 1, adds(batch_id, records))
        )
    for r in log.restated:
        steps.append((r.sequence_number, 0, hides(r.column, r.ids)))  # hide, then add (replay)
    live: dict[int, tuple[str, str]] = {}
    for _, _, apply in sorted(steps, key=lambda s: (s[0], s[1])):
        apply(live)
    return {(event_id, user, batch_id) for event_id, (user, batch_id) in live.items()}


def check_rows(client: httpx.Client, dataset_id: str, log: Log) -> set[Row]:
    snapshots = snapshot_log(client, dataset_id)
    settle(client, log, snapshots)
    expected = model(client, log, snapshots)
    got = Counter(
        (r["event_id"], r["user_id"], r["_batch_id"]) for r in read_rows(client, dataset_id)
    )
    assert [row for row, n in got.items() if n > 1] == []  # no row twice
    assert set(got) - expected == set(), "rows the model hides (resurrected)"
    assert expected - set(got) == set(), "rows the model keeps (lost)"
    return expected


def active_tombstones(
    client: httpx.Client, dataset_id: str, as_of: int | None = None
) -> Counter[Tombstone]:
    params: dict[str, Any] = {"limit": 10_000}
    if as_of is not None:
        params["as_of"] = str(as_of)
    listing = client.get(f"/v1/datasets/{dataset_id}/tombstones", params=params).json()
    assert listing["next_offset"] is None
    return Counter(
        (t["meta"]["request_id"], t["namespace"], t["id"], t["added_sequence_number"])
        for t in listing["items"]
    )


def tombstones_of(restated: list[Restated]) -> Counter[Tombstone]:
    return Counter(
        {(r.request_id, r.column, v, r.sequence_number): 1 for r in restated for v in r.ids}
    )


def uri_path(uri: str) -> Path:
    return Path(uri.removeprefix("file://"))


def load_table(service: Service) -> Any:
    """The dataset's table as of its newest metadata file (the test holds one dataset)."""
    from pyiceberg.table import StaticTable

    files = list((service.home / "warehouse").glob("**/metadata/*.metadata.json"))
    newest = max(files, key=lambda p: int(p.name.partition("-")[0]))
    return StaticTable.from_metadata(str(newest))


def rewritten_files(table: Any, snapshot_id: int) -> list[tuple[Path, int]]:
    """Files the rewrite snapshot added (live in it, not in its parent), with their data
    sequence numbers."""
    from app.lake import visible

    snapshot = table.snapshot_by_id(snapshot_id)
    parent = table.snapshot_by_id(snapshot.parent_snapshot_id)
    before = {p.data_file.file_path for p in visible.plan(table, parent)}
    return [
        (uri_path(p.data_file.file_path), p.sequence_number)
        for p in visible.plan(table, snapshot)
        if p.data_file.file_path not in before
    ]


def vacuum(client: httpx.Client, dataset_id: str) -> dict[str, Any]:
    response = client.post(f"/v1/datasets/{dataset_id}/vacuum", json={"mode": "full"})
    assert response.status_code == 202, response.text
    job: dict[str, Any] = response.json()
    assert job["kind"] == "vacuum"
    return job


def job_at(client: httpx.Client, job_id: str, stages: tuple[str, ...]) -> Callable[[], bool]:
    def check() -> bool:
        job = client.get(f"/v1/jobs/{job_id}").json()
        assert job["state"] in ("queued", "running"), job
        return job["state"] == "running" and job["stage"] in stages

    return check


def vacuum_snapshots(snapshots: dict[int, dict[str, Any]], request_id: str) -> list[dict[str, Any]]:
    return [s for s in snapshots.values() if s["icebatch"].get("icebatch.request-id") == request_id]


# seconds the vacuum waits between writing its files and taking the commit lease: enough for
# worker-b to boot and commit the first restatements inside the window; free, since the racing
# clients take longer anyway (worker-b's first Spark job starts its JVM)
PAUSE = 15


@postgres_only
def test_vacuum_racing_restatements_and_ingests(service: Service) -> None:
    """A full vacuum pauses after writing its new files (lease not held); meanwhile clients
    send a GDPR delete of a user whose rows are in those files, reverts, replays and ingests
    (one with rows of a user deleted before). Nothing is lost and nothing resurrected."""
    started = time.monotonic()
    key = service.create_key(new_org())
    service.start_api()
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


@postgres_only
def test_worker_killed_inside_the_rewrite_commit(service: Service) -> None:
    """SIGKILL the vacuum's worker (Python and JVM) while it holds the commit lease right before
    its commit; the reconciler re-queues the job, the other worker commits it once, and the
    dead holder's lease does not stay stuck."""
    started = time.monotonic()
    fast = {"ICEBATCH_COMMIT_LEASE_SECONDS": "5"}
    key = service.create_key(new_org())
    service.start_api()
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
