"""The API's caches on PostgreSQL (`app.invalidation`): keys and batch versions served from
memory, dropped when their rows change — by this process at its commit, by any other process
through `LISTEN/NOTIFY` — and not served at all while that channel is down."""

from __future__ import annotations

import time
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from tests.fixtures.batches import CSV
from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS
from tests.fixtures.statements import Statements

ON_POSTGRES = pytest.mark.parametrize("stack", ["postgres"], indirect=True)


def channel_up() -> None:
    from app import invalidation

    deadline = time.monotonic() + 10
    while not invalidation.feed().fresh():
        assert time.monotonic() < deadline, "the invalidation channel did not come up"
        time.sleep(0.05)


def store() -> psycopg.Connection[Any]:
    """Another connection to the metadata store: what another process writes with."""
    from app.config import get_settings

    return psycopg.connect(get_settings().database_url, autocommit=True)


def staged_batch(client: TestClient, dataset: str | None = None) -> str:
    dataset = dataset or client.post("/v1/datasets", json=EVENTS).json()["id"]
    batch: str = client.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"}).json()[
        "id"
    ]
    assert client.put(f"/v1/batches/{batch}/files/a.csv", content=CSV).status_code == 201
    assert client.post(f"/v1/batches/{batch}?action=COMPLETE").status_code == 202
    return batch


@ON_POSTGRES
def test_a_poll_is_answered_from_memory_until_another_process_changes_the_batch(
    client: TestClient,
) -> None:
    batch = staged_batch(client)
    channel_up()
    first = client.get(f"/v1/batches/{batch}")
    tag = first.headers["etag"]
    with Statements() as polled:
        again = client.get(f"/v1/batches/{batch}", headers={"If-None-Match": tag})
        full = client.get(f"/v1/batches/{batch}")
    assert (again.status_code, full.status_code) == (304, 200)
    assert full.json() == first.json()
    assert full.headers["etag"] == tag
    assert polled.count == 0  # key, fair use (in memory), tag and body: no SQL

    with store() as conn:
        conn.execute(
            "UPDATE batches SET row_count = 41, updated_at = now() WHERE id = %s", (batch,)
        )
    time.sleep(1.0)
    changed = client.get(f"/v1/batches/{batch}", headers={"If-None-Match": tag})
    assert changed.status_code == 200
    assert changed.json()["row_count"] == 41
    assert changed.headers["etag"] != tag


@ON_POSTGRES
def test_this_process_sees_its_own_write_at_once(client: TestClient) -> None:
    """A write through this process's session drops its entries at commit, before any
    notification comes back: a client sees what its own request did on its next one."""
    batch = staged_batch(client)
    channel_up()
    tag = client.get(f"/v1/batches/{batch}").headers["etag"]
    assert client.get(f"/v1/batches/{batch}", headers={"If-None-Match": tag}).status_code == 304
    from app.db import session_scope
    from app.models import Batch

    with session_scope() as session:
        # no trigger for this transaction: no notification comes back, only the commit's own
        session.execute(text("SET LOCAL session_replication_role = replica"))
        found = session.get(Batch, batch)
        assert found is not None
        found.row_count = 7
    answer = client.get(f"/v1/batches/{batch}", headers={"If-None-Match": tag})
    assert answer.status_code == 200
    assert answer.json()["row_count"] == 7


@ON_POSTGRES
def test_a_revoked_key_answers_401_here_at_once_and_from_elsewhere_within_a_second(
    client_for: ClientFactory,
) -> None:
    admin = client_for()
    reader, other = client_for(admin.org, "read"), client_for(admin.org, "read")  # type: ignore[attr-defined]
    channel_up()
    keys = admin.get("/v1/keys").json()["items"]
    assert reader.get("/v1/jobs").status_code == 200
    assert other.get("/v1/jobs").status_code == 200
    reader_id, other_id = (
        next(k["id"] for k in keys if k["prefix"] in c.headers["authorization"])
        for c in (reader, other)
    )
    assert admin.delete(f"/v1/keys/{reader_id}").status_code == 200
    assert reader.get("/v1/jobs").status_code == 401  # this process: its next request

    with store() as conn:  # another process
        conn.execute("UPDATE api_keys SET revoked_at = now() WHERE id = %s", (other_id,))
    time.sleep(1.0)
    assert other.get("/v1/jobs").status_code == 401
    assert admin.get("/v1/jobs").status_code == 200


@ON_POSTGRES
def test_a_change_missed_while_the_channel_is_down_is_seen_within_a_second(
    client_for: ClientFactory,
) -> None:
    """The listener's connection is cut and the revocation sends no notification at all
    (triggers off for that session): the cache stops answering once the channel is silent,
    and the store says the key is revoked."""
    admin = client_for()
    reader = client_for(admin.org, "read")  # type: ignore[attr-defined]
    channel_up()
    assert reader.get("/v1/jobs").status_code == 200
    reader_id = next(
        k["id"]
        for k in admin.get("/v1/keys").json()["items"]
        if k["prefix"] in reader.headers["authorization"]
    )
    with store() as conn:
        cut = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'icebatch-invalidation' AND datname = current_database()"
        ).fetchall()
        assert cut
        assert all(row[0] for row in cut)
        conn.execute("SET session_replication_role = replica")  # no trigger, no notification
        conn.execute("UPDATE api_keys SET revoked_at = now() WHERE id = %s", (reader_id,))
    time.sleep(1.0)
    assert reader.get("/v1/jobs").status_code == 401


def test_a_fill_read_before_a_change_is_refused_after_it() -> None:
    """The ticket rule: a value read before a change and stored after its notification would
    hide the change; `put` refuses it. Other keys still fill."""
    from app.invalidation import Cache, Feed

    class Up(Feed):
        def fresh(self) -> bool:
            return True

    feed = Up(None)
    cache: Cache[str, int] = Cache(feed, "batch")
    ticket = cache.ticket()
    feed.tell("batch", "b1")  # the change lands while the old value is being read
    cache.put("b1", 1, ticket, [("batch", "b1")])
    cache.put("b2", 2, ticket, [("batch", "b2")])
    assert cache.get("b1") is None
    assert cache.get("b2") == 2
    cache.put("b1", 3, cache.ticket(), [("batch", "b1"), ("job", "j1")])
    assert cache.get("b1") == 3
    feed.tell("job", "j1")  # a cache listens to the kinds it was made with only
    assert cache.get("b1") == 3
    feed.tell("batch", None)  # everything of a kind
    assert cache.get("b1") is None
    assert cache.get("b2") is None


def test_an_entry_is_read_again_after_its_age_whatever_the_channel_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app import invalidation
    from app.invalidation import Cache, Feed

    class Up(Feed):
        def fresh(self) -> bool:
            return True

    cache: Cache[str, int] = Cache(Up(None), "key")
    cache.put("k", 1, cache.ticket(), [("key", "k")])
    assert cache.get("k") == 1
    later = time.monotonic() + invalidation.MAX_AGE_SECONDS
    monkeypatch.setattr(invalidation.time, "monotonic", lambda: later)
    assert cache.get("k") is None


@ON_POSTGRES
def test_locking_one_batch_drops_that_batch_only(client: TestClient) -> None:
    """A set-based UPDATE that names its row's id (the row lock of `batches.get(for_update)`,
    a heartbeat) drops that row's entries at commit; one that names no id drops all of its
    kind. Both without a notification (triggers off)."""
    from sqlalchemy import update

    from app.batches import repository
    from app.db import session_scope
    from app.models import Batch

    first = staged_batch(client)
    dataset = client.get(f"/v1/batches/{first}").json()["dataset_id"]
    second = staged_batch(client, dataset)
    channel_up()
    tags = {b: client.get(f"/v1/batches/{b}").headers["etag"] for b in (first, second)}

    def polled(batch: str) -> int:
        with Statements() as statements:
            answer = client.get(f"/v1/batches/{batch}", headers={"If-None-Match": tags[batch]})
        assert answer.status_code in (200, 304)
        return statements.count

    assert polled(first) == polled(second) == 0
    org = client.org  # type: ignore[attr-defined]
    with session_scope() as session:
        session.execute(text("SET LOCAL session_replication_role = replica"))
        repository.get(session, org, first, for_update=True)
    assert polled(first) > 0  # read again (and its tag moved: updated_at)
    assert polled(second) == 0  # still answered from memory
    with session_scope() as session:
        session.execute(text("SET LOCAL session_replication_role = replica"))
        session.execute(update(Batch).where(Batch.org == org).values(row_count=Batch.row_count))
    assert polled(second) > 0  # rows unknown: every batch of this process read again
