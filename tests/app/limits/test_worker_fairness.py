"""One org's backlog does not starve another org's first job: its messages beyond its first
few go to lower-priority Redis lists, which the workers read after the first one."""

from __future__ import annotations

import json

import pytest
import redis
from fastapi.testclient import TestClient

from app.limits.inflight import FAIR_PRIORITIES, broker_priority
from tests.fixtures.batches import CSV
from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import STORES, Environment

QUEUE = "icebatch"
SEP = "\x06\x16"  # kombu's Redis transport: list `icebatch\x06\x16<step>` per priority step


def test_priority_by_jobs_in_flight() -> None:
    assert [broker_priority(n) for n in (0, 3, 4, 15, 16, 63, 64, 10_000)] == [
        0,
        0,
        3,
        3,
        6,
        6,
        9,
        9,
    ]
    assert FAIR_PRIORITIES[0] == (4, 0)


def consumption_order(client: redis.Redis) -> list[str]:
    """The job ids of the queued messages in the order a worker takes them: the lists by
    priority step (BRPOP names them in that order), each from its right end (RPOP)."""
    order = []
    for step in (0, 3, 6, 9):
        key = QUEUE if step == 0 else f"{QUEUE}{SEP}{step}"
        for raw in reversed(client.lrange(key, 0, -1)):
            message = json.loads(raw)
            order.append(message["headers"]["argsrepr"].strip("[]()'\","))
    return order


@pytest.mark.skipif("postgres" not in STORES, reason="priorities need the Redis broker")
@pytest.mark.parametrize("stack", ["postgres"], indirect=True)
def test_a_backlog_does_not_delay_another_orgs_first_job(
    stack: Environment, client_for: ClientFactory
) -> None:
    flooder, quiet = client_for(), client_for()
    datasets = {c: c.post("/v1/datasets", json=EVENTS).json()["id"] for c in (flooder, quiet)}

    def queue_ingest(client: TestClient) -> str:
        body = {"dataset_id": datasets[client], "format": "csv"}
        batch_id = client.post("/v1/batches", json=body).json()["id"]
        client.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV)
        done = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
        assert done.status_code == 202, done.text
        job_id: str = done.json()["job"]["id"]
        return job_id

    backlog = [queue_ingest(flooder) for _ in range(6)]
    first_of_quiet = queue_ingest(quiet)

    broker = redis.Redis.from_url(stack.env["ICEBATCH_BROKER_URL"])
    mine = set(backlog) | {first_of_quiet}
    order = [job for job in consumption_order(broker) if job in mine]
    # the flooder's first four (its fair share) first, in order, then the quiet org's first
    # job, then the flooder's backlog
    assert order == [*backlog[:4], first_of_quiet, *backlog[4:]]
