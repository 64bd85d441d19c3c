"""Operator metrics on `/metrics`: each family against a store in a known state, the cache that
keeps scrapes cheap, stale values when the store is down, and the alert rules' metric names."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # no stubs pinned; only safe_load is used
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import event
from sqlalchemy.engine import Engine

from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment, reset_caches
from tests.fixtures.service import free_port

ALERTS = Path(__file__).resolve().parents[2] / "docs" / "alerts.yml"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(client: TestClient) -> Samples:
    response = client.get("/metrics")
    assert response.status_code == 200
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


@pytest.fixture
def metrics_client(fresh_stack: Environment, client_for: ClientFactory) -> TestClient:
    from app.metrics import OPERATOR_METRICS

    OPERATOR_METRICS.expire()  # what an earlier test's store left in the cache is not ours
    return client_for()


@pytest.fixture
def statements() -> Iterator[list[str]]:
    """Every SQL statement any engine of this process runs meanwhile (ours and PyIceberg's)."""
    seen: list[str] = []

    def count(*args: Any) -> None:
        seen.append(str(args[2]))

    event.listen(Engine, "before_cursor_execute", count)
    yield seen
    event.remove(Engine, "before_cursor_execute", count)


def _known_state(client: TestClient) -> dict[str, Any]:
    """Jobs, outbox messages, privacy jobs, leases and two datasets' tombstones, as written."""
    from app.db import session_scope
    from app.lake import commit
    from app.lake.catalog import get_catalog
    from app.lake.tombstones import NewTombstone
    from app.models import CommitLease, Dataset, Job, OutboxMessage, PrivacyJob

    now = datetime.now(UTC)
    ago = lambda seconds: now - timedelta(seconds=seconds)  # noqa: E731
    with_tombstones = client.post("/v1/datasets", json=EVENTS).json()
    empty = client.post("/v1/datasets", json={**EVENTS, "name": "other"}).json()
    with session_scope() as session:
        dataset = session.get(Dataset, with_tombstones["id"])
        assert dataset is not None
        identifier = dataset.table_identifier
    table = get_catalog().load_table(identifier)
    field_id = table.schema().find_field("user_id").field_id
    for values in (["a", "b"], ["c"]):
        commit.commit(
            table,
            files=[],
            new_tombstones=[NewTombstone(field_id, v, "req", "gdpr") for v in values],
            properties={},
        )
    jobs = [  # (kind, state, created, heartbeat)
        ("ingest", "queued", ago(100), None),
        ("ingest", "queued", ago(40), None),
        ("vacuum", "running", ago(900), ago(600)),  # stale: no heartbeat for 10 minutes
        ("expire", "running", ago(30), now),
        ("gdpr", "succeeded", ago(500), ago(400)),
        ("gdpr", "succeeded", ago(500), ago(400)),
        ("export", "failed", ago(500), ago(400)),
    ]
    with session_scope() as session:
        rows = [
            Job(
                org="metrics",
                kind=kind,
                task_name="icebatch.ingest",
                request_id=f"r{n}",
                state=state,
                created_at=created,
                heartbeat_at=beat,
            )
            for n, (kind, state, created, beat) in enumerate(jobs)
        ]
        session.add_all(rows)
        session.flush()
        session.add_all(
            [
                OutboxMessage(job_id=rows[0].id, task_name="t", created_at=ago(30)),
                OutboxMessage(job_id=rows[1].id, task_name="t", created_at=ago(5)),
                OutboxMessage(job_id=rows[2].id, task_name="t", published_at=now),
                PrivacyJob(
                    org="metrics",
                    column="user_id",
                    dataset_ids=[],
                    value_count=1,
                    created_at=ago(2 * 86400),
                ),
                PrivacyJob(org="metrics", column="user_id", dataset_ids=[], value_count=1),
                PrivacyJob(
                    org="metrics", column="user_id", dataset_ids=[], value_count=1, erased_at=now
                ),
                CommitLease(dataset_id=with_tombstones["id"], token=1, expires_at=ago(-30)),
                CommitLease(dataset_id=empty["id"], token=3, expires_at=ago(5)),
            ]
        )
    return {"tombstones": with_tombstones["id"], "empty": empty["id"]}


def test_each_family_reports_the_store_as_it_is(
    metrics_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.config import get_settings

    monkeypatch.setenv("ICEBATCH_AUTO_VACUUM_TOMBSTONES", "3")
    get_settings.cache_clear()
    datasets = _known_state(metrics_client)
    got = scrape(metrics_client)
    expected_jobs = {
        ("ingest", "queued"): 2,
        ("vacuum", "running"): 1,
        ("expire", "running"): 1,
        ("gdpr", "succeeded"): 2,
        ("export", "failed"): 1,
    }
    from app.jobs.kinds import JobKind
    from app.models import JobState

    for kind in JobKind:
        for state in JobState:
            count = value(got, "icebatch_jobs", kind=kind.value, state=state.value)
            assert count == expected_jobs.get((kind.value, state.value), 0), (kind, state)
    assert value(got, "icebatch_jobs_oldest_queued_age_seconds", kind="ingest") == pytest.approx(
        100, abs=10
    )
    assert value(got, "icebatch_jobs_oldest_queued_age_seconds", kind="vacuum") == 0
    assert value(got, "icebatch_jobs_stale_heartbeat", kind="vacuum") == 1
    assert value(got, "icebatch_jobs_stale_heartbeat", kind="expire") == 0
    assert value(got, "icebatch_outbox_unpublished") == 2
    assert value(got, "icebatch_outbox_oldest_unpublished_age_seconds") == pytest.approx(30, abs=10)
    assert value(got, "icebatch_privacy_jobs_unerased") == 2
    assert value(got, "icebatch_privacy_job_oldest_unerased_age_seconds") == pytest.approx(
        2 * 86400, abs=10
    )
    assert value(got, "icebatch_commit_leases_held") == 1
    assert value(got, "icebatch_datasets") == 2
    assert value(got, "icebatch_metrics_datasets_sampled") == 2
    assert value(got, "icebatch_dataset_tombstones_active", dataset=datasets["tombstones"]) == 3
    assert value(got, "icebatch_dataset_snapshots", dataset=datasets["tombstones"]) == 2
    assert value(got, "icebatch_dataset_tombstones_active", dataset=datasets["empty"]) == 0
    assert value(got, "icebatch_dataset_snapshots", dataset=datasets["empty"]) == 0
    assert value(got, "icebatch_vacuum_backlog_datasets") == 1  # 3 tombstones >= 3
    assert value(got, "icebatch_vacuum_backlog_tombstones") == 3
    assert value(got, "icebatch_metrics_last_success_timestamp_seconds") == pytest.approx(
        time.time(), abs=30
    )


def test_per_dataset_series_are_capped(
    metrics_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.config import get_settings

    monkeypatch.setenv("ICEBATCH_METRICS_MAX_DATASETS", "2")
    get_settings.cache_clear()
    made = [
        metrics_client.post("/v1/datasets", json={**EVENTS, "name": f"d{n}"}).json()["id"]
        for n in range(3)
    ]
    got = scrape(metrics_client)
    series = {
        dict(labels)["dataset"] for name, labels in got if name == "icebatch_dataset_snapshots"
    }
    assert series == set(made[:2])  # the first ones created: a stable set, never flapping
    assert value(got, "icebatch_datasets") == 3


def test_scrapes_within_the_cache_period_do_not_query(
    metrics_client: TestClient, statements: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.config import get_settings
    from app.metrics import OPERATOR_METRICS

    # a period the 100 scrapes cannot outlast on a loaded machine (CI saw 15 s run out); what
    # makes a cached scrape cheap is that it queries nothing, so statements are counted, not time
    monkeypatch.setattr(get_settings(), "metrics_cache_seconds", 3600.0)
    metrics_client.post("/v1/datasets", json=EVENTS)
    statements.clear()
    first_scrape = scrape(metrics_client)
    first = len(statements)
    for _ in range(99):
        assert metrics_client.get("/metrics").status_code == 200
    # one gathering: the store's clock, ten queries (the CDC tenants: none here), the catalog's
    # lookup of the one table
    assert 11 < first <= 13, statements
    assert len(statements) == first, statements[first:]
    assert (
        value(scrape(metrics_client), "icebatch_datasets")
        == value(first_scrape, "icebatch_datasets")
        == 1
    )
    # the next gathering reads no table whose metadata file did not change
    OPERATOR_METRICS.expire()
    statements.clear()
    scrape(metrics_client)
    assert len(statements) == 11, "\n---\n".join(statements)


def test_a_store_that_is_down_leaves_the_last_values(
    metrics_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.metrics import OPERATOR_METRICS

    metrics_client.post("/v1/datasets", json=EVENTS)
    before = scrape(metrics_client)
    errors = before.get(("icebatch_metrics_collect_errors_total", frozenset({("source", "store")})))
    monkeypatch.setenv(
        "ICEBATCH_DATABASE_URL", f"postgresql://postgres@127.0.0.1:{free_port()}/gone"
    )
    reset_caches()
    OPERATOR_METRICS.expire()
    during = scrape(metrics_client)
    assert (
        value(during, "icebatch_metrics_collect_errors_total", source="store") == (errors or 0) + 1
    )
    assert value(during, "icebatch_datasets") == value(before, "icebatch_datasets") == 1
    assert value(during, "icebatch_metrics_last_success_timestamp_seconds") == value(
        before, "icebatch_metrics_last_success_timestamp_seconds"
    )


def test_every_metric_an_alert_names_is_exposed(metrics_client: TestClient) -> None:
    import app.lake.lease  # noqa: F401  (the commit lease's families: every worker has them)
    import workers.metrics  # noqa: F401  (the worker's own families: its /metrics port)

    exposed: set[str] = set()
    for family in text_string_to_metric_families(metrics_client.get("/metrics").text):
        suffixes = ("", "_total", "_bucket", "_count", "_sum", "_created")
        exposed |= {family.name + suffix for suffix in suffixes}
    rules = yaml.safe_load(ALERTS.read_text())
    named = set()
    for group in rules["groups"]:
        for rule in group["rules"]:
            assert {"alert", "expr", "labels", "annotations"} <= set(rule), rule
            named |= set(re.findall(r"\bicebatch_[a-z_]+", rule["expr"]))
    assert named, "the rules name no metric"
    assert named <= exposed, named - exposed


def test_cdc_gauges_name_each_tenant(metrics_client: TestClient, client_for: ClientFactory) -> None:
    import json
    from datetime import UTC, datetime

    other = client_for()
    now = datetime.now(UTC).isoformat()
    for client, count in ((metrics_client, 3), (other, 1)):
        body = "\n".join(
            json.dumps(
                {"op": "PUT", "entity_id": f"e{i}", "record_type": "r", "timestamp": now}
                | {"payload": {}}
            )
            for i in range(count)
        )
        answer = client.post(
            "/v1/cdc/events", content=body, headers={"Content-Type": "application/x-ndjson"}
        )
        assert answer.status_code == 202, answer.text
    got = scrape(metrics_client)
    for client, count in ((metrics_client, 3), (other, 1)):
        lag = client.get("/v1/cdc/lag").json()
        tenant = lag["tenant"]
        assert value(got, "icebatch_cdc_events", tenant=tenant, stage="accepted") == count
        assert value(got, "icebatch_cdc_events", tenant=tenant, stage="staged") == 0
        assert value(got, "icebatch_cdc_events", tenant=tenant, stage="processed") == 0
        assert value(got, "icebatch_cdc_replication_lag_seconds", tenant=tenant) == pytest.approx(
            lag["replication_lag_seconds"]
        )
