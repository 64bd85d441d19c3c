"""Rows per table of the metadata store before and after one pruning pass (issue 26, goal 4).

Run: `.venv/bin/python -m bench.metadata_store [--deletes 1000] [--database-url URL]`
(an empty database; by default a fresh embedded SQLite store in a temporary home).

`--deletes` GDPR deletes go in through the API (in-process, each with an `Idempotency-Key`),
then the rows are aged as the workers and 400 days would leave them, without Spark: every job
succeeded, every message published, every restatement committed; every other one erased with
its commit snapshot expired, the rest still in force. One pass of `app.pruning.service.prune`
(the default retentions), then a second one, which must delete nothing. The audit events
the calls left (they cannot be aged: the store refuses UPDATE) are then moved to `bench._audit`
as the pass moves them once `ICEBATCH_AUDIT_RETENTION_DAYS` has passed; `GET /v1/audit` must
list the same events after as before.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

TABLES = (
    "privacy_jobs",
    "restatements",
    "jobs",
    "outbox",
    "idempotency_keys",
    "audit_events",
    "batches",
    "datasets",
    "api_keys",
    "expired_snapshots",
    "forgotten_snapshots",
)
DATASET = {
    "name": "events",
    "schema": [
        {"name": "event_id", "type": "long", "required": True},
        {"name": "user_id", "type": "string"},
    ],
    "partition": [],
    "identity_columns": ["user_id"],
}


def counts() -> dict[str, int]:
    from sqlalchemy import text

    from app.db import session_scope

    with session_scope() as session:
        return {
            table: int(session.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
            for table in TABLES
        }


def age(dataset_id: str, days: float) -> None:
    """What the workers leave, `days` ago: jobs done, messages sent, deletes committed; every
    other delete erased with its commit snapshot expired."""
    from sqlalchemy import select, update

    from app.db import session_scope
    from app.models import (
        ExpiredSnapshot,
        IdempotencyKey,
        Job,
        OutboxMessage,
        PrivacyJob,
        Restatement,
    )

    old = datetime.now(UTC) - timedelta(days=days)
    with session_scope() as session:
        session.execute(update(Job).values(state="succeeded", finished_at=old, updated_at=old))
        session.execute(update(OutboxMessage).values(published_at=old))
        session.execute(update(IdempotencyKey).values(created_at=old))
        session.execute(update(PrivacyJob).values(updated_at=old))
        ids = session.scalars(select(Restatement.id).order_by(Restatement.created_at)).all()
        for n, restatement_id in enumerate(ids):
            erased = n % 2 == 0
            session.execute(
                update(Restatement)
                .where(Restatement.id == restatement_id)
                .values(
                    state="committed",
                    snapshot_id=n + 1,
                    sequence_number=n + 1,
                    committed_at=old,
                    erased_at=old if erased else None,
                    updated_at=old,
                )
            )
            if erased:
                session.add(
                    ExpiredSnapshot(
                        dataset_id=dataset_id,
                        snapshot_id=n + 1,
                        sequence_number=n + 1,
                        committed_at=old,
                        expired_at=old,
                    )
                )


def listed(client: Any) -> list[int]:
    """Every seq `GET /v1/audit` lists, page after page."""
    seqs: list[int] = []
    cursor = None
    while True:
        params = {"limit": 500} | ({"cursor": cursor} if cursor else {})
        page = client.get("/v1/audit", params=params).json()
        seqs += [item["seq"] for item in page["items"]]
        cursor = page["next"]
        if cursor is None:
            return seqs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deletes", type=int, default=1000)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    os.environ["ICEBATCH_HOME"] = tempfile.mkdtemp(prefix="icebatch-bench-")
    os.environ["ICEBATCH_DATABASE_URL"] = args.database_url
    os.environ["ICEBATCH_RATE_LIMIT_PER_SECOND"] = "0"
    os.environ["ICEBATCH_MAX_INFLIGHT_JOBS_PER_ORG"] = "0"

    from fastapi.testclient import TestClient

    from app.audit import repository as audit
    from app.cli import migrate
    from app.db import session_scope
    from app.keys.issue import create_key
    from app.lake import audit as lake
    from app.lake.catalog import get_catalog
    from app.main import create_app
    from app.models import Scope
    from app.pruning import service
    from app.retention import repository as retention
    from workers.audit import archive

    migrate()
    with session_scope() as session:
        key = create_key(session, "bench", Scope.ADMIN)
    client = TestClient(create_app(), headers={"Authorization": f"Bearer {key}"})
    dataset_id = client.post("/v1/datasets", json=DATASET).json()["id"]
    for n in range(args.deletes):
        body = {"dataset_ids": [dataset_id], "column": "user_id", "values": [f"u{n}"]}
        response = client.post("/v1/privacy/jobs", json=body, headers={"Idempotency-Key": f"{n}"})
        assert response.status_code == 202, response.text
    age(dataset_id, 400)
    before = counts()
    with session_scope() as session:  # what an erasure's receipt counts, forgotten records too
        expired = retention.count_expired_before(session, dataset_id, 2**62)
    started = time.perf_counter()
    total_events = listed(client)
    sql_seconds = time.perf_counter() - started
    pruned = service.prune()
    # audit events cannot be aged in SQL (the store refuses UPDATE): moved as the pass would
    # once ICEBATCH_AUDIT_RETENTION_DAYS had passed
    moved = archive.move(datetime.now(UTC) + timedelta(seconds=1), 10_000)
    after = counts()
    again = service.prune()
    assert set(again.values()) == {0}, again
    with session_scope() as session:
        assert retention.count_expired_before(session, dataset_id, 2**62) == expired
    with session_scope() as session:
        in_sql = audit.count(session, "bench")
    trail = lake.load(get_catalog(), "bench")
    in_iceberg = trail.scan().to_arrow().num_rows if trail is not None else 0
    assert in_sql + in_iceberg == before["audit_events"], (in_sql, in_iceberg)
    started = time.perf_counter()
    assert listed(client) == total_events
    iceberg_seconds = time.perf_counter() - started
    print(f"{args.deletes} GDPR deletes, {args.database_url or 'embedded SQLite'}")
    print("| table | before | after |\n|---|---|---|")
    for table in TABLES:
        print(f"| {table} | {before[table]:,} | {after[table]:,} |")
    print(f"| total | {sum(before.values()):,} | {sum(after.values()):,} |")
    print(f"pruned: {pruned}; a second pass: {again}")
    print(f"expired snapshots counted by an erasure's receipt: {expired:,} before and after")
    print(
        f"audit events: {moved:,} moved to bench._audit ({in_iceberg:,} rows there, {in_sql:,} "
        f"left in SQL); GET /v1/audit lists {len(total_events):,} before and after"
    )
    print(
        f"GET /v1/audit, every page of 500: {sql_seconds:.3f} s from SQL, {iceberg_seconds:.3f} s "
        f"from the Iceberg table ({iceberg_seconds / sql_seconds:.2f}x)"
    )


if __name__ == "__main__":
    main()
