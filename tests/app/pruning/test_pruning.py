"""Pruning the metadata store (`app/pruning/service.py`): a store of jobs, outbox messages,
idempotency keys, batches, restatements, privacy jobs, consumers, records of expired snapshots
and CDC chunks of every state and age (`store_model.py`), pruned, and the rows left per table
compared with a plain Python model of the rules; the receipts the API serves, and the CDC
tenant's lag, are the same before and after; a second pass deletes nothing; every DELETE
stays within its chunk. On both stores, each in a store of its own (`fresh_stack`)."""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY
from sqlalchemy import event
from sqlalchemy.engine import Engine

from tests.app.pruning.store_model import Store, build, model, present
from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment


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


def chunk_lag(store: Store) -> tuple[Any, ...]:
    """When the CDC tenant's oldest unstaged and oldest unprocessed chunk were accepted."""
    from app.cdc import repository as cdc
    from app.db import session_scope
    from app.models import CdcTenant

    with session_scope() as session:
        tenant = session.get(CdcTenant, store.org)
        assert tenant is not None
        return (
            cdc.oldest_unstaged_at(session, store.org, tenant.staged_seq),
            cdc.oldest_unprocessed_at(session, store.org, tenant.processed_seq),
            cdc.any_unstaged(session, store.org, tenant.staged_seq),
        )


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
        "cdc_chunks": len(store.chunks),
    }
    # the model prunes something of every table it prunes, and keeps something of each
    for table in service.TABLES:
        assert 0 < len(expected[table]) < len(before[table]), table
    with session_scope() as session:
        in_force = [r.id for r in privacy.gdpr_in_force(session, dataset_id)]
    assert in_force
    served = receipts(client, store, expected)
    lag = chunk_lag(store)
    assert None not in lag[:2]
    assert lag[2]
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
    assert chunk_lag(store) == lag
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
        "cdc_chunks": chunk,
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
