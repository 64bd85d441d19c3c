"""The pruning tests' store and model: random rows of every kind the pruning rules look at
(`build`), the ids each table keeps by those rules in plain Python (`model`), and the ids left
in the store (`present`)."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from tests.app.pruning import cdc_model

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
    # the org's CDC chunks by first sequence number: last one, age since staged (None: not yet)
    chunks: dict[int, dict[str, Any]] = field(default_factory=dict)
    processed_seq: int = 0


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

    def record(
        snapshot_id: int, age: float, restatement: str | None = None, seq: int | None = None
    ) -> None:
        seq = next(sequence_numbers) if seq is None else seq
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
    record(2**42, 400, seq=1)
    store.chunks, store.processed_seq = cdc_model.build(rng, org, now, AGES_DAYS, rows)
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
    chunks = cdc_model.kept(store.chunks, store.processed_seq, settings.cdc_chunk_retention_days)
    return {
        "expired_snapshots": records,
        "cdc_chunks": chunks,
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
            "cdc_chunks": cdc_model.present(session, store.org),
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
