"""Pruning the metadata store (`app/pruning/service.py`): a store of jobs, outbox messages,
idempotency keys, batches, restatements, privacy jobs, consumers and records of expired
snapshots of every state and age, pruned, and
the rows left per table compared with a plain Python model of the rules; the receipts the API
serves are the same before and after; a second pass deletes nothing; every DELETE stays within
its chunk. On both stores, each in a store of its own (`fresh_stack`)."""

from __future__ import annotations

import itertools
import logging
import math
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY
from sqlalchemy import event, select
from sqlalchemy.engine import Engine

from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment

AGES_DAYS = (0.01, 2, 45, 400)  # around the defaults: outbox/keys 1, jobs/restatements 30, 365
FINISHED = ("succeeded", "failed")
LIVE = ("queued", "running")


@dataclass
class Store:
    """What the test wrote, in plain Python: the model's input."""

    org: str
    dataset_id: str
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    outbox: dict[str, dict[str, Any]] = field(default_factory=dict)
    keys: dict[str, dict[str, Any]] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    restatements: dict[str, dict[str, Any]] = field(default_factory=dict)
    privacy_jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    expired_snapshots: set[int] = field(default_factory=set)
    # each record of an expired snapshot: its sequence number, age, and what names it
    records: dict[int, dict[str, Any]] = field(default_factory=dict)


def _ago(now: datetime, days: float) -> datetime:
    return now - timedelta(days=days)


def build(rng: random.Random, org: str, dataset_id: str) -> Store:
    """Random rows of every kind the rules look at, written through the ORM."""
    from app.db import session_scope
    from app.models import (
        Batch,
        Consumer,
        ExpiredSnapshot,
        IdempotencyKey,
        Job,
        OutboxMessage,
        PrivacyJob,
        Restatement,
    )
    from app.models.base import new_id

    now = datetime.now(UTC)
    store = Store(org, dataset_id)
    rows: list[Any] = []
    sequence_numbers = itertools.count(10)

    def record(snapshot_id: int, age: float, restatement: str | None = None) -> None:
        seq = next(sequence_numbers)
        store.records[snapshot_id] = {
            "seq": seq,
            "age": age,
            "restatement": restatement,
            "batch": False,
            "consumer": False,
        }
        rows.append(
            ExpiredSnapshot(
                dataset_id=dataset_id,
                snapshot_id=snapshot_id,
                sequence_number=seq,
                committed_at=_ago(now, age + 50),
                expired_at=_ago(now, age),
            )
        )

    def job(subject: str | None = None, kind: str = "ingest") -> str:
        job_id = new_id()
        state = rng.choice([*FINISHED, *FINISHED, *LIVE])
        age = rng.choice(AGES_DAYS)
        finished = _ago(now, age) if state in FINISHED else None
        store.jobs[job_id] = {"state": state, "finished_age": age, "subject": subject}
        rows.append(
            Job(
                id=job_id,
                org=org,
                kind=kind,
                task_name="icebatch.ingest",
                subject_id=subject,
                request_id=job_id,
                state=state,
                created_at=_ago(now, age + 0.001),
                updated_at=_ago(now, age),
                finished_at=finished,
            )
        )
        for _ in range(rng.randint(0, 2)):
            outbox_id = new_id()
            published = rng.choice([None, *AGES_DAYS])
            store.outbox[outbox_id] = {"job": job_id, "published_age": published}
            rows.append(
                OutboxMessage(
                    id=outbox_id,
                    job_id=job_id,
                    task_name="icebatch.ingest",
                    created_at=_ago(now, age),
                    published_at=None if published is None else _ago(now, published),
                )
            )
        return job_id

    def batch(
        status: str,
        job_id: str | None = None,
        restated_by: str | None = None,
        snapshot_id: int | None = None,
    ) -> None:
        batch_id = new_id()
        store.batches[batch_id] = {"status": status, "job": job_id, "restated_by": restated_by}
        rows.append(
            Batch(
                id=batch_id,
                org=org,
                dataset_id=dataset_id,
                format="csv",
                status=status,
                job_id=job_id,
                restated_by=restated_by,
                snapshot_id=snapshot_id,
            )
        )

    for _ in range(40):  # ingests: a batch (in flight or not) and its job, or a job alone
        job_id = job()
        if rng.random() < 0.6:
            batch(rng.choice(["staged", "processing", "success", "failed"]), job_id=job_id)
    for _ in range(15):
        key_id = new_id()
        age = rng.choice(AGES_DAYS)
        store.keys[key_id] = {"age": age}
        rows.append(
            IdempotencyKey(
                id=key_id, org=org, key=key_id, fingerprint="f", created_at=_ago(now, age)
            )
        )

    def restatement(
        kind: str, privacy_job_id: str | None, state: str, erased: bool, age: float
    ) -> str:
        restatement_id = new_id()
        snapshot_id = rng.randrange(1, 2**40)
        if rng.random() < 0.7:
            store.expired_snapshots.add(snapshot_id)
            record(snapshot_id, 450, restatement_id if state == "committed" else None)
        store.restatements[restatement_id] = {
            "kind": kind,
            "state": state,
            "age": age,
            "erased": erased,
            "snapshot_expired": snapshot_id in store.expired_snapshots,
            "privacy_job": privacy_job_id,
        }
        job_id = job(restatement_id, kind)
        store.restatements[restatement_id]["job"] = job_id
        rows.append(
            Restatement(
                id=restatement_id,
                org=org,
                dataset_id=dataset_id,
                kind=kind,
                state=state,
                job_id=job_id,
                request_id=restatement_id,
                privacy_job_id=privacy_job_id,
                column="user_id",
                ids=[f"u{rng.randrange(1000)}"],
                snapshot_id=snapshot_id if state == "committed" else None,
                sequence_number=7 if state == "committed" else None,
                committed_at=_ago(now, age) if state == "committed" else None,
                erased_at=_ago(now, age) if erased else None,
                created_at=_ago(now, age + 0.001),
                updated_at=_ago(now, age),
            )
        )
        return restatement_id

    states = ["committed", "committed", "committed", "failed", "ready", "committing"]
    for _ in range(25):  # reverts and replays; a committed one restated a batch
        state = rng.choice(states)
        kind = rng.choice(["revert", "replay"])
        restatement_id = restatement(kind, None, state, False, rng.choice(AGES_DAYS))
        if state == "committed" or rng.random() < 0.3:
            batch("reverted" if state == "committed" else "success", restated_by=restatement_id)
    for _ in range(25):  # privacy jobs, one GDPR restatement per dataset (1 or 2 here)
        privacy_job_id = new_id()
        age = rng.choice((*AGES_DAYS, 400, 400))  # old enough more often: all of it must be
        store.privacy_jobs[privacy_job_id] = {"age": age}
        rows.append(
            PrivacyJob(
                id=privacy_job_id,
                org=org,
                column="user_id",
                dataset_ids=[dataset_id],
                value_count=1,
                created_at=_ago(now, age + 0.001),
                updated_at=_ago(now, age),
            )
        )
        for _ in range(rng.randint(1, 2)):
            state = rng.choice(states)
            erased = state == "committed" and rng.random() < 0.8
            restatement("gdpr", privacy_job_id, state, erased, rng.choice((*AGES_DAYS, 400, 400)))
    # records no restatement names, of every age: named by a batch, by a consumer, by nothing;
    # and the dataset's oldest, old and named by nothing
    for i, (age, namer) in enumerate(itertools.product(AGES_DAYS, ("batch", "consumer", None))):
        snapshot_id = 2**41 + i
        record(snapshot_id, age)
        if namer == "batch":
            batch("success", snapshot_id=snapshot_id)
        elif namer == "consumer":
            rows.append(
                Consumer(
                    org=org,
                    dataset_id=dataset_id,
                    name=f"c{i}",
                    snapshot_id=snapshot_id,
                    sequence_number=store.records[snapshot_id]["seq"],
                )
            )
        if namer is not None:
            store.records[snapshot_id][namer] = True
    store.records[2**42] = {"seq": 1, "age": 400, "restatement": None}
    store.records[2**42] |= {"batch": False, "consumer": False}
    rows.append(
        ExpiredSnapshot(
            dataset_id=dataset_id,
            snapshot_id=2**42,
            sequence_number=1,
            committed_at=_ago(now, 450),
            expired_at=_ago(now, 400),
        )
    )
    with session_scope() as session:
        for row in rows:  # parents first: datasets, jobs, then the rows that name them
            session.add(row)
            session.flush()
    return store


def model(store: Store, settings: Any) -> dict[str, set[Any]]:
    """The ids each table keeps, by the rules as docs/architecture.md states them."""

    def old(age: float | None, days: float) -> bool:
        return age is not None and age > days

    def live_job(restatement_id: str) -> bool:
        return any(
            j["subject"] == restatement_id and j["state"] in LIVE for j in store.jobs.values()
        )

    def gdpr_done(r: dict[str, Any]) -> bool:
        done = r["state"] == "failed" or (
            r["state"] == "committed" and r["erased"] and r["snapshot_expired"]
        )
        return done and old(r["age"], settings.privacy_job_retention_days)

    restatements = dict(store.restatements)
    gone_restatements: set[str] = set()
    privacy_jobs = set(store.privacy_jobs)
    for pid, p in store.privacy_jobs.items():
        parts = [rid for rid, r in restatements.items() if r["privacy_job"] == pid]
        if old(p["age"], settings.privacy_job_retention_days) and all(
            gdpr_done(restatements[rid]) and not live_job(rid) for rid in parts
        ):
            privacy_jobs.discard(pid)
            gone_restatements.update(parts)
    named = {b["restated_by"] for b in store.batches.values()}
    for rid, r in restatements.items():
        if (
            r["kind"] in ("revert", "replay")
            and r["state"] == "failed"
            and old(r["age"], settings.restatement_retention_days)
            and rid not in named
            and not live_job(rid)
        ):
            gone_restatements.add(rid)
    kept_restatements = set(restatements) - gone_restatements
    jobs = {
        jid
        for jid, j in store.jobs.items()
        if j["subject"] not in gone_restatements
        and not any(store.restatements[r]["job"] == jid for r in gone_restatements)
    }
    in_flight = {
        b["job"] for b in store.batches.values() if b["status"] in ("staged", "processing")
    }
    by_restatement = {store.restatements[r]["job"] for r in kept_restatements}
    for jid in list(jobs):
        j = store.jobs[jid]
        if (
            j["state"] in FINISHED
            and old(j["finished_age"], settings.job_retention_days)
            and jid not in by_restatement
            and jid not in in_flight
        ):
            jobs.discard(jid)
    outbox = {
        oid
        for oid, o in store.outbox.items()
        if o["job"] in jobs
        and not (
            store.jobs[o["job"]]["state"] in FINISHED
            and old(o["published_age"], settings.outbox_retention_days)
        )
    }
    key_days = settings.idempotency_key_retention_days
    keys = {kid for kid, k in store.keys.items() if not old(k["age"], key_days)}
    oldest = min(r["seq"] for r in store.records.values())
    records = {
        sid
        for sid, r in store.records.items()
        if not old(r["age"], settings.expired_snapshot_retention_days)
        or r["batch"]
        or r["consumer"]
        or r["restatement"] in kept_restatements
        or r["seq"] == oldest
    }
    return {
        "expired_snapshots": records,
        "jobs": jobs,
        "outbox": outbox,
        "idempotency_keys": keys,
        "restatements": kept_restatements,
        "privacy_jobs": privacy_jobs,
        "batches": set(store.batches),
    }


def present(store: Store) -> dict[str, set[Any]]:
    """The ids of the test's rows still in the store, per table."""
    from app.db import session_scope
    from app.models import (
        Batch,
        ExpiredSnapshot,
        IdempotencyKey,
        Job,
        OutboxMessage,
        PrivacyJob,
        Restatement,
    )

    with session_scope() as session:
        return {
            "expired_snapshots": set(
                session.scalars(
                    select(ExpiredSnapshot.snapshot_id).where(
                        ExpiredSnapshot.dataset_id == store.dataset_id
                    )
                )
            ),
            "jobs": set(session.scalars(select(Job.id).where(Job.org == store.org))),
            "outbox": set(
                session.scalars(
                    select(OutboxMessage.id).where(OutboxMessage.id.in_(list(store.outbox)))
                )
            ),
            "idempotency_keys": set(
                session.scalars(select(IdempotencyKey.id).where(IdempotencyKey.org == store.org))
            ),
            "restatements": set(
                session.scalars(select(Restatement.id).where(Restatement.org == store.org))
            ),
            "privacy_jobs": set(
                session.scalars(select(PrivacyJob.id).where(PrivacyJob.org == store.org))
            ),
            "batches": set(session.scalars(select(Batch.id).where(Batch.org == store.org))),
        }


@pytest.fixture
def deletes() -> Iterator[list[tuple[str, int]]]:
    """Every DELETE any engine of this process runs meanwhile: (its table, rows deleted)."""
    seen: list[tuple[str, int]] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("DELETE FROM"):
            seen.append((statement.split()[2].strip('"'), cursor.rowcount))

    event.listen(Engine, "after_cursor_execute", count)
    yield seen
    event.remove(Engine, "after_cursor_execute", count)


def receipts(client: TestClient, store: Store, kept: dict[str, set[Any]]) -> dict[str, Any]:
    """What the API serves about the rows the rules keep: privacy jobs, batches, jobs."""
    out: dict[str, Any] = {}
    for pid in sorted(kept["privacy_jobs"]):
        response = client.get(f"/v1/privacy/jobs/{pid}")
        assert response.status_code == 200, response.text
        out[pid] = response.json()
    for bid in sorted(kept["batches"]):
        response = client.get(f"/v1/batches/{bid}")
        assert response.status_code == 200, response.text
        body = response.json()
        if store.batches[bid]["job"] not in kept["jobs"]:
            body.pop("progress")  # the progress of a pruned job is unknown: null
        out[bid] = body
    for jid in sorted(kept["jobs"]):
        response = client.get(f"/v1/jobs/{jid}")
        assert response.status_code == 200, response.text
        out[jid] = response.json()
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_pruning_keeps_every_receipt_and_removes_what_the_rules_say(
    fresh_stack: Environment,
    client_for: ClientFactory,
    deletes: list[tuple[str, int]],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    seed: int,
) -> None:
    from app.config import get_settings
    from app.db import session_scope
    from app.privacy import repository as privacy
    from app.pruning import service
    from app.retention import repository as retention

    settings = get_settings()
    chunk = 3
    monkeypatch.setattr(settings, "prune_chunk_rows", chunk)
    # the receipts are read twice, a GET each: over fair use's burst (200) on a fast machine
    monkeypatch.setattr(settings, "rate_limit_per_second", 0.0)
    client = client_for()
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    store = build(random.Random(seed), client.org, dataset_id)  # type: ignore[attr-defined]
    before = present(store)
    expected = model(store, settings)
    assert {t: len(ids) for t, ids in before.items()} == {
        "expired_snapshots": len(store.records),
        "jobs": len(store.jobs),
        "outbox": len(store.outbox),
        "idempotency_keys": len(store.keys),
        "restatements": len(store.restatements),
        "privacy_jobs": len(store.privacy_jobs),
        "batches": len(store.batches),
    }
    # the model prunes something of every table it prunes, and keeps something of each
    for table in service.TABLES:
        assert 0 < len(expected[table]) < len(before[table]), table
    with session_scope() as session:
        in_force = [r.id for r in privacy.gdpr_in_force(session, dataset_id)]
    assert in_force
    served = receipts(client, store, expected)
    with session_scope() as session:  # an erasure's count of the snapshots expired before it
        expired_before = retention.count_expired_before(session, dataset_id, 2**62)
    assert expired_before == len(store.records)
    metric = "icebatch_store_rows_pruned_total"
    counted = {t: REGISTRY.get_sample_value(metric, {"table": t}) or 0.0 for t in service.TABLES}

    with caplog.at_level(logging.INFO, logger="app.pruning.service"):
        pruned = service.prune()

    after = present(store)
    assert after == expected
    # the store holds other rows than the test's (its key, its dataset): the pass counted ours
    assert pruned == {t: len(before[t]) - len(after[t]) for t in service.TABLES}
    with session_scope() as session:  # forgotten records still count as expired
        assert retention.forgotten_count(session, dataset_id) == pruned["expired_snapshots"]
        assert retention.count_expired_before(session, dataset_id, 2**62) == expired_before
    for table, count in pruned.items():  # the counter went up by as much, and a line says so
        assert REGISTRY.get_sample_value(metric, {"table": table}) == counted[table] + count
    lines = [r.getMessage() for r in caplog.records if r.name == "app.pruning.service"]
    assert lines == [f"pruned the metadata store: {pruned}"]
    with session_scope() as session:
        assert [r.id for r in privacy.gdpr_in_force(session, dataset_id)] == in_force
    assert receipts(client, store, expected) == served
    for jid in set(store.jobs) - expected["jobs"]:
        assert client.get(f"/v1/jobs/{jid}").status_code == 404
    # chunked: no statement deleted more than a chunk of the table it drives (a privacy job
    # takes its 1-2 restatements, their 1-2 jobs and 0-2 outbox rows each), in as many
    # statements as the chunks need
    limits = {
        "privacy_jobs": chunk,
        "idempotency_keys": chunk,
        "restatements": 2 * chunk,
        "jobs": 2 * chunk,
        "outbox": 4 * chunk,
        "expired_snapshots": chunk,
    }
    for table, rows in deletes:
        assert rows <= limits[table], (table, rows)
    key_deletes = [rows for table, rows in deletes if table == "idempotency_keys"]
    assert len(key_deletes) == math.ceil(pruned["idempotency_keys"] / chunk)
    assert sum(key_deletes) == pruned["idempotency_keys"]

    # idempotent: a second pass finds nothing
    deletes.clear()
    assert set(service.prune().values()) == {0}
    assert present(store) == expected
    assert deletes == []


def test_the_beat_runs_the_pruning_pass() -> None:
    from app.config import get_settings
    from app.jobs.kinds import TaskName
    from workers import periodic_logs, scheduler
    from workers.celery_app import celery

    entry = celery.conf.beat_schedule["icebatch-prune"]
    assert (entry["task"], entry["schedule"]) == ("icebatch.prune", get_settings().prune_seconds)
    assert scheduler.prune_task.name == TaskName.PRUNE
    assert TaskName.PRUNE in periodic_logs.PERIODIC


def test_one_pruning_pass_at_a_time(
    fresh_stack: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass that outlasts the beat's interval makes the next one a no-op (it would hold a
    second worker slot over the same rows); its lease is renewed while it runs, released after,
    and taken over once a holder that died stops renewing it."""
    from app.config import get_settings
    from app.lake import lease
    from app.models.restatement import PASS_LEASE_PREFIX
    from app.pruning import service
    from workers import scheduler

    monkeypatch.setattr(get_settings(), "commit_lease_seconds", 0.6)
    started, go = threading.Event(), threading.Event()
    real = service.prune

    def slow(settings: Any = None) -> dict[str, int]:
        started.set()
        assert go.wait(30)
        return real(settings)

    monkeypatch.setattr(service, "prune", slow)
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(scheduler.prune_task)
        assert started.wait(30)
        time.sleep(1.5)  # past two lease periods: only renewals keep it
        assert scheduler.prune_task() == {}
        go.set()
        result = first.result(timeout=60)
    assert set(service.TABLES) | {"audit_events"} == result.keys()

    monkeypatch.setattr(service, "prune", real)
    assert scheduler.prune_task().keys() == result.keys()  # released: the next pass runs
    dead = lease.acquire(PASS_LEASE_PREFIX + scheduler.PRUNE_PASS)  # a holder that dies
    assert dead is not None
    assert scheduler.prune_task() == {}
    time.sleep(0.8)
    assert scheduler.prune_task().keys() == result.keys()


def test_a_privacy_job_selected_then_changed_is_kept(
    fresh_stack: Environment, client_for: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass selects the finished privacy jobs once and deletes them chunk by chunk; each
    chunk is checked again where it is deleted, so one that changed after the selection (here:
    every job the rules keep, handed to the chunks as if it had been finished then) stays."""
    from app.config import get_settings
    from app.pruning import repository, service

    settings = get_settings()
    monkeypatch.setattr(settings, "prune_chunk_rows", 3)
    client = client_for()
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    store = build(random.Random(3), client.org, dataset_id)  # type: ignore[attr-defined]
    expected = model(store, settings)
    kept = sorted(expected["privacy_jobs"])
    assert kept
    real = repository.finished_privacy_job_ids
    selections: list[int] = []

    def stale(session: Any, before: Any, among: Any = None) -> list[str]:
        found = real(session, before, among)
        if among is not None:
            return found
        selections.append(len(found))
        return found + kept  # what the pass selected, and the kept ones as if finished then

    monkeypatch.setattr(repository, "finished_privacy_job_ids", stale)
    pruned = service.prune()
    assert len(selections) == 1  # one selection a pass
    assert selections[0] > 0  # with jobs to prune
    assert present(store) == expected
    assert pruned["privacy_jobs"] == len(store.privacy_jobs) - len(kept)
