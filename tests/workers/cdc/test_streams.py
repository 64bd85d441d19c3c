"""The stream dumper against the machine's Redis: Debezium Server's Redis sink entries (both
formats) accepted once, acknowledged after the commit, bad entries set aside, and a reader
killed before its commit or between its commit and its XACK losing nothing and applying
nothing twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from app.cdc import streams as cdc_streams
from app.cdc.metrics import cdc_families
from app.cdc.schemas import CdcLag
from tests.app.cdc.test_debezium_accept import folded, staged
from tests.fixtures.clients import ClientFactory
from tests.fixtures.debezium import pg_event
from tests.fixtures.environments import Environment
from workers.cdc import streams, task

# the PostgreSQL + Redis store only: the streams are in the broker's Redis
pytestmark = pytest.mark.parametrize("stack", ["postgres"], indirect=True)


@pytest.fixture
def redis_stack(stack: Environment) -> Environment:
    return stack


@pytest.fixture
def conn(redis_stack: Environment) -> redis.Redis:
    return cdc_streams.client()


@pytest.fixture
def tenant(redis_stack: Environment, client_for: ClientFactory) -> tuple[TestClient, str]:
    """A tenant reading a new stream of its own."""
    client = client_for()
    stream = f"dbserver1.inventory.customers.{uuid.uuid4().hex[:8]}"
    answer = client.put("/v1/cdc/config", json={"streams": [stream]})
    assert answer.status_code == 200, answer.text
    return client, stream


@pytest.fixture
def quick_claims() -> Iterator[None]:
    from app.config import get_settings

    settings = get_settings()
    before = settings.cdc_stream_claim_idle_seconds
    settings.cdc_stream_claim_idle_seconds = 0.3
    yield
    settings.cdc_stream_claim_idle_seconds = before


def compact(conn: redis.Redis, stream: str, value: dict[str, Any] | None) -> None:
    """As the sink's default `compact` format writes: the record key is the field's name."""
    key = json.dumps({"id": value["after"]["id"] if value and value.get("after") else 0})
    conn.xadd(stream, {key: json.dumps(value) if value is not None else "default"})


def extended(conn: redis.Redis, stream: str, value: dict[str, Any]) -> None:
    conn.xadd(stream, {"key": json.dumps({"id": 1}), "value": json.dumps(value), "TXID": "7"})


def lag_of(client: TestClient) -> dict[str, Any]:
    found: dict[str, Any] = client.get("/v1/cdc/lag").json()
    return found


def test_entries_of_both_formats_are_accepted_once_and_acknowledged(
    tenant: tuple[TestClient, str], conn: redis.Redis
) -> None:
    client, stream = tenant
    org = client.org  # type: ignore[attr-defined]
    changes = [pg_event("c", 1, 100), pg_event("c", 2, 110), pg_event("u", 1, 120)]
    for change in changes[:2]:
        compact(conn, stream, change)
    compact(conn, stream, None)  # a tombstone, as the sink writes a null value
    extended(conn, stream, changes[2])
    before = lag_of(client)["streams"]
    assert [(s["stream"], s["undelivered"], s["pending"]) for s in before] == [(stream, 4, 0)]
    assert before[0]["oldest_undelivered_age_seconds"] >= 0

    run = streams.consume(org, [stream])

    assert (run.entries, run.accepted, run.skipped, run.dead) == (4, 3, 1, 0)
    assert folded(staged(org)) == {"1": {"id": 1, "v": 120}, "2": {"id": 2, "v": 110}}
    after = lag_of(client)
    assert after["accepted"] == 3
    assert [(s["length"], s["undelivered"], s["pending"]) for s in after["streams"]] == [(4, 0, 0)]
    assert streams.consume(org, [stream]).entries == 0  # acknowledged: nothing read again
    compact(conn, stream, changes[0])  # the sink restarted before its offsets were flushed
    again = streams.consume(org, [stream])
    assert (again.accepted, again.duplicates) == (0, 1)
    compact(conn, stream, changes[1])  # waiting: Prometheus shows it per tenant and stream
    families = {f.name: f for f in cdc_families([CdcLag.model_validate(lag_of(client))])}
    (sample,) = families["icebatch_cdc_stream_undelivered"].samples
    assert (sample.labels, sample.value) == ({"tenant": org, "stream": stream}, 1)


def test_a_bad_entry_is_set_aside_and_the_stream_goes_on(
    tenant: tuple[TestClient, str], conn: redis.Redis
) -> None:
    client, stream = tenant
    org = client.org  # type: ignore[attr-defined]
    no_lsn = pg_event("u", 3, 130)
    del no_lsn["source"]["lsn"]
    no_lsn["source"]["sequence"] = None
    compact(conn, stream, pg_event("c", 1, 100))
    conn.xadd(stream, {"k": "{not json"})
    compact(conn, stream, no_lsn)
    compact(conn, stream, pg_event("c", 2, 140))

    run = streams.consume(org, [stream])

    assert (run.accepted, run.dead) == (2, 2)
    dead = conn.xrange(cdc_streams.dead_stream(stream))
    reasons = sorted(fields[b"reason"].decode() for _, fields in dead)
    assert reasons[0].startswith("not JSON") or "JSON" in reasons[0]
    assert any("source.lsn" in r for r in reasons)
    lag = lag_of(client)["streams"][0]
    assert (lag["pending"], lag["undelivered"], lag["dead_letters"]) == (0, 0, 2)
    assert folded(staged(org)) == {"1": {"id": 1, "v": 100}, "2": {"id": 2, "v": 140}}


def reader(org: str, stream: str, failpoint: str) -> subprocess.Popen[bytes]:
    """A stream reader in a process of its own, pausing at `failpoint` (to be killed there)."""
    code = f"from workers.cdc import streams\nstreams.consume({org!r}, [{stream!r}])\n"
    env = {**os.environ, "ICEBATCH_FAILPOINTS": f"{failpoint}=120"}
    return subprocess.Popen([sys.executable, "-c", code], env=env)


def wait_for(process: subprocess.Popen[bytes], done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 90
    while not done():
        assert process.poll() is None, "the reader ended before its failpoint"
        assert time.monotonic() < deadline, "the reader never reached its failpoint"
        time.sleep(0.1)


def pending(conn: redis.Redis, stream: str, org: str) -> int:
    try:
        return int(conn.xpending(stream, cdc_streams.group_name(org))["pending"])
    except redis.ResponseError:  # NOGROUP: the reader has not made it yet
        return 0


@pytest.mark.parametrize("failpoint", ["cdc-streams-before-commit", "cdc-streams-before-ack"])
def test_a_reader_killed_mid_round_loses_nothing_and_applies_nothing_twice(
    tenant: tuple[TestClient, str], conn: redis.Redis, quick_claims: None, failpoint: str
) -> None:
    client, stream = tenant
    org = client.org  # type: ignore[attr-defined]
    changes = [pg_event("c", key, 100 + 10 * key) for key in range(1, 21)]
    changes += [pg_event("d", 3, 400), pg_event("u", 4, 410)]
    for change in changes:
        compact(conn, stream, change)
    process = reader(org, stream, failpoint)
    try:
        if failpoint == "cdc-streams-before-commit":
            wait_for(process, lambda: pending(conn, stream, org) == len(changes))
            time.sleep(0.5)  # at the failpoint: read, accepted in its transaction, not committed
        else:
            wait_for(process, lambda: lag_of(client)["accepted"] == len(changes))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    committed = lag_of(client)["accepted"]
    assert committed == (0 if failpoint == "cdc-streams-before-commit" else len(changes))
    assert pending(conn, stream, org) == len(changes)  # delivered to the dead reader, not acked
    time.sleep(0.4)  # idle past the claim time: another reader takes them over

    run = streams.consume(org, [stream])

    assert run.entries == len(changes)
    assert run.accepted + run.duplicates == len(changes)
    assert run.duplicates == committed
    assert pending(conn, stream, org) == 0
    events = staged(org)
    assert len(events) == len(changes)  # each change once
    expected = {str(k): {"id": k, "v": 100 + 10 * k} for k in range(1, 21) if k != 3}
    expected["4"] = {"id": 4, "v": 410}
    assert folded(events) == expected


def test_the_scheduler_starts_a_reader_per_tenant_with_streams(
    tenant: tuple[TestClient, str], conn: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, stream = tenant
    org = client.org  # type: ignore[attr-defined]
    sent: list[str] = []
    monkeypatch.setattr(task.cdc_streams_task, "delay", sent.append)
    assert org in task.schedule_cdc()["streams"]
    assert org in sent
    compact(conn, stream, pg_event("c", 1, 100))
    result = task.streams_pass(org)
    assert (result["entries"], result["accepted"]) == (1, 1)
    from app.lake import lease

    with lease.exclusive(task.streams_lease(org)) as mine:  # another worker is reading
        assert mine
        sent.clear()
        task.schedule_cdc()
        assert org not in sent
        assert task.streams_pass(org) == {}
