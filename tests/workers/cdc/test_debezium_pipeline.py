"""Debezium's change events through the whole pipeline in one process: accepted, staged,
processed, and read back from the raw table as each source row's newest state."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.debezium import pg_event
from tests.fixtures.spark import RunJobs
from tests.workers.cdc.test_pipeline import process, rows

pytestmark = pytest.mark.spark
T0 = 1_764_230_400_000


def post(client: TestClient, values: list[Any]) -> dict[str, int]:
    answer = client.post(
        "/v1/cdc/debezium", content=json.dumps(values), headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 202, answer.text
    body: dict[str, int] = answer.json()
    return body


def test_debezium_changes_land_as_each_rows_newest_state(
    client: TestClient, run_jobs: RunJobs
) -> None:
    config = {
        "sources": [
            {"table": "inventory.customers", "record_type": "customer", "entity_prefix": "c:"},
            {"table": "inventory.orders", "key": ["order_id"], "entity_prefix": "o:"},
        ]
    }
    assert client.put("/v1/cdc/config", json=config).status_code == 200
    order = {"order_id": 1, "customer": 2, "total": 9.5}
    history = [
        pg_event("r", 1, 100, ts_ms=T0 + 60_000, after={"id": 1, "name": "snapshot"}),
        pg_event("c", 2, 120, ts_ms=T0 + 1_000, after={"id": 2, "name": "Bo"}),
        pg_event("c", 1, 130, table="orders", after=order),
        pg_event("u", 1, 150, ts_ms=T0 + 1_000, after={"id": 1, "name": "Ada"}),
        pg_event("u", 1, 151, ts_ms=T0 + 1_000, after={"id": 1, "name": "Ada L."}),  # same ms
        pg_event("d", 2, 160, ts_ms=T0 + 2_000),
        pg_event("c", 3, 170, ts_ms=T0 + 3_000, after={"id": 3, "name": "Cy"}),
    ]
    deliveries = history + history[:4]  # redelivered
    random.Random(7).shuffle(deliveries)
    answers = [post(client, deliveries[:6]), post(client, deliveries[6:])]
    counted = {k: sum(a[k] for a in answers) for k in ("accepted", "duplicates", "superseded")}
    assert sum(counted.values()) == len(deliveries)  # each delivery counted once
    assert counted["accepted"] <= len(history)  # no change applied twice
    process(client, run_jobs)
    found = rows(client)
    documents = {e: json.loads(r["document"]) for e, r in found.items()}
    assert documents == {
        "c:1": {"id": 1, "name": "Ada L."},
        "c:3": {"id": 3, "name": "Cy"},
        "o:1": order,
    }
    assert found["c:1"]["record_type"] == "customer"
    assert found["o:1"]["record_type"] == "inventory.orders"

    truncate = post(client, [pg_event("t", 0, 200, ts_ms=T0 + 9_000)])
    assert (truncate["truncates"], truncate["deleted_by_truncate"]) == (1, 2)  # not the order
    late = post(client, [pg_event("u", 3, 190, ts_ms=T0 + 8_000, after={"id": 3, "name": "x"})])
    assert late["superseded"] == 1
    process(client, run_jobs)
    assert set(rows(client)) == {"o:1"}
