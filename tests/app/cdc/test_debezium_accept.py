"""`POST /v1/cdc/debezium`: each source row's changes accepted once, in log position order, and
what is staged folds to the row's newest change (an independent model: the change with the
highest position, per row, truncates included)."""

from __future__ import annotations

import base64
import json
import random
from datetime import UTC, datetime
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from app.cdc.debezium_accept import encode
from app.cdc.service import from_ipc
from app.db import session_scope
from app.models import CdcChunk
from tests.fixtures.clients import ClientFactory
from tests.fixtures.debezium import pg_event, with_schema

T0 = 1_764_230_400_000


def post(client: TestClient, values: Any, content_type: str = "application/json") -> Any:
    return client.post(
        "/v1/cdc/debezium", content=json.dumps(values), headers={"Content-Type": content_type}
    )


def staged(org: str) -> list[dict[str, Any]]:
    """The tenant's accepted events, in sequence order, as the processor will read them."""
    with session_scope() as session:
        bodies = session.scalars(
            select(CdcChunk.body).where(CdcChunk.org == org).order_by(CdcChunk.first_seq)
        ).all()
    return [row for body in bodies if body for row in from_ipc(body).to_pylist()]


def folded(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The processor's rule: an entity's events in (timestamp, seq) order, PUT sets the document,
    PATCH merges its top-level keys into it, DELETE removes it."""
    state: dict[str, dict[str, Any] | None] = {}
    for event in sorted(events, key=lambda e: (e["entity_id"], e["timestamp"], e["seq"])):
        entity = event["entity_id"]
        if event["op"] == "PUT":
            state[entity] = json.loads(event["payload"])
        elif event["op"] == "PATCH":
            state[entity] = (state.get(entity) or {}) | json.loads(event["payload"])
        else:
            state[entity] = None
    return {entity: doc for entity, doc in state.items() if doc is not None}


def counts(answer: Any) -> tuple[int, int, int]:
    assert answer.status_code == 202, answer.text
    body = answer.json()
    return body["accepted"], body["duplicates"], body["superseded"]


def test_a_change_is_applied_once_and_redeliveries_are_counted(client: TestClient) -> None:
    batch = [pg_event("c", 1, 100), pg_event("u", 1, 200), pg_event("c", 2, 150)]
    first = post(client, batch)
    assert first.json() == {
        "accepted": 3,
        "duplicates": 0,
        "superseded": 0,
        "truncates": 0,
        "deleted_by_truncate": 0,
        "skipped": 0,
        "first_sequence": 1,
        "last_sequence": 3,
    }
    again = post(client, batch)  # the sink's retry: the same changes, a new message id
    assert again.json()["first_sequence"] is None
    assert counts(again) == (0, 3, 0)
    assert counts(post(client, pg_event("u", 1, 150))) == (0, 0, 1)  # older than id 1's newest
    lag = client.get("/v1/cdc/lag").json()
    assert lag["accepted"] == 3  # only distinct changes count
    events = staged(client.org)  # type: ignore[attr-defined]
    assert [(e["op"], e["entity_id"], e["seq"]) for e in events] == [
        ("PUT", "1", 1),
        ("PUT", "1", 2),
        ("PUT", "2", 3),
    ]
    assert {e["record_type"] for e in events} == {"inventory.customers"}
    assert {e["source"] for e in events} == {"dbserver1"}
    assert folded(events) == {"1": {"id": 1, "v": 200}, "2": {"id": 2, "v": 150}}

    # a row's recent positions are kept across requests (the stored row updated, not only
    # inserted): a redelivery of its change before the newest is a duplicate, not superseded
    assert counts(post(client, pg_event("u", 1, 300))) == (1, 0, 0)
    assert counts(post(client, pg_event("u", 1, 400))) == (1, 0, 0)
    assert counts(post(client, [pg_event("u", 1, 300), pg_event("u", 1, 200)])) == (0, 2, 0)
    assert counts(post(client, pg_event("u", 1, 350))) == (0, 0, 1)  # never accepted


def test_a_delete_takes_its_key_from_before_and_nulls_and_messages_are_skipped(
    client: TestClient,
) -> None:
    message = {**pg_event("c", 9, 50), "op": "m", "after": None, "message": {"prefix": "x"}}
    answer = post(client, [pg_event("c", 7, 100), None, message, pg_event("d", 7, 120)])
    assert counts(answer) == (2, 0, 0)
    assert answer.json()["skipped"] == 2
    events = staged(client.org)  # type: ignore[attr-defined]
    assert [(e["op"], e["entity_id"], e["payload"]) for e in events] == [
        ("PUT", "7", '{"id":7,"v":100}'),
        ("DELETE", "7", None),
    ]
    assert folded(events) == {}


def test_a_bad_element_is_named_and_nothing_is_accepted(client: TestClient) -> None:
    bad = pg_event("u", 2, 110)
    del bad["source"]["lsn"]
    bad["source"]["sequence"] = "not json"
    answer = post(client, [pg_event("c", 1, 100), bad])
    assert answer.status_code == 422
    errors = answer.json()["errors"]
    assert [(e["element"], e["field"]) for e in errors] == [(2, "source.sequence")]
    assert client.get("/v1/cdc/lag").json()["accepted"] == 0
    assert staged(client.org) == []  # type: ignore[attr-defined]
    assert counts(post(client, [pg_event("c", 1, 100)])) == (1, 0, 0)  # nothing was kept


def test_a_snapshot_read_older_than_a_streamed_change_loses_whatever_the_arrival_order(
    client_for: ClientFactory,
) -> None:
    """The snapshot began at LSN 400 and read row 1 at T0 + 60 s; a change at LSN 500 was made at
    T0 (its clock is earlier, its position later)."""
    read = pg_event("r", 1, 400, ts_ms=T0 + 60_000, after={"id": 1, "v": "snapshot"})
    change = pg_event("u", 1, 500, ts_ms=T0, after={"id": 1, "v": "streamed"})
    late_read = client_for()
    assert counts(post(late_read, [change])) == (1, 0, 0)
    assert counts(post(late_read, [read])) == (0, 0, 1)
    read_first = client_for()
    assert counts(post(read_first, [read, change])) == (2, 0, 0)
    for client in (late_read, read_first):
        events = staged(client.org)  # type: ignore[attr-defined]
        assert folded(events) == {"1": {"id": 1, "v": "streamed"}}
    clamped = staged(read_first.org)[-1]  # type: ignore[attr-defined]
    assert clamped["timestamp"] == datetime.fromtimestamp((T0 + 60_000) / 1000, UTC)


def test_a_truncate_deletes_the_tables_rows_and_supersedes_older_changes(
    client: TestClient,
) -> None:
    other = pg_event("c", 1, 105, table="orders")
    post(client, [pg_event("c", 1, 100), pg_event("c", 2, 110), other])
    truncate = pg_event("t", 0, 200)
    answer = post(client, [truncate])
    assert counts(answer) == (2, 0, 0)
    assert answer.json()["deleted_by_truncate"] == 2
    assert counts(post(client, [truncate])) == (0, 1, 0)
    assert counts(post(client, [pg_event("c", 3, 150)])) == (0, 0, 1)  # made before the truncate
    assert counts(post(client, [pg_event("c", 3, 300)])) == (1, 0, 0)
    events = staged(client.org)  # type: ignore[attr-defined]
    # orders' row 1 and customers' row 1 share an entity id: the prefix config is the cure
    assert folded(events) == {"3": {"id": 3, "v": 300}}
    assert [(e["op"], e["entity_id"], e["record_type"]) for e in events[3:5]] == [
        ("DELETE", "1", "inventory.customers"),
        ("DELETE", "2", "inventory.customers"),
    ]


def test_sources_name_the_key_columns_record_type_and_prefix(client: TestClient) -> None:
    config = {
        "sources": [
            {
                "table": "inventory.order_lines",
                "key": ["order_id", "line"],
                "record_type": "order_line",
                "entity_prefix": "line:",
            }
        ]
    }
    assert client.put("/v1/cdc/config", json=config).status_code == 200
    assert client.get("/v1/cdc/config").json()["sources"][0]["record_type"] == "order_line"
    row = {"order_id": "A-7", "line": 2, "qty": 3}
    answer = post(client, [pg_event("c", 0, 100, table="order_lines", after=row)])
    assert counts(answer) == (1, 0, 0)
    event = staged(client.org)[0]  # type: ignore[attr-defined]
    assert (event["entity_id"], event["record_type"]) == ('line:["A-7",2]', "order_line")
    missing = post(client, [pg_event("c", 0, 101, table="order_lines", after={"order_id": "A-8"})])
    assert missing.status_code == 422
    assert missing.json()["errors"][0]["field"] == "after.line"
    twice = {"sources": [{"table": "a.b"}, {"table": "a.b", "key": ["x"]}]}
    assert client.put("/v1/cdc/config", json=twice).status_code == 422


def test_schemas_on_and_cloudevents_envelopes(client: TestClient) -> None:
    assert counts(post(client, with_schema(pg_event("c", 1, 100)))) == (1, 0, 0)
    cloud = {
        "specversion": "1.0",
        "id": "a1",
        "source": "/debezium/postgresql/dbserver1",
        "type": "io.debezium.connector.postgresql.DataChangeEvent",
        "datacontenttype": "application/json",
        "data": pg_event("u", 1, 200),
    }
    answer = post(client, cloud, content_type="application/cloudevents+json")
    assert counts(answer) == (1, 0, 0)
    assert folded(staged(client.org)) == {"1": {"id": 1, "v": 200}}  # type: ignore[attr-defined]


def test_the_sink_authenticates_with_oauth2_client_credentials_over_http_basic(
    client_for: ClientFactory,
) -> None:
    """Debezium's HTTP sink cannot send a fixed Authorization header; its `oauth2` type asks the
    token URL with HTTP Basic (`client_secret_basic`, its default), then sends the bearer."""
    admin = client_for()
    created = admin.post("/v1/keys", json={"scope": "write"}).json()
    basic = base64.b64encode(f"{created['id']}:{created['key']}".encode()).decode()
    issued = admin.post(
        "/iceberg/v1/oauth/tokens",
        content="grant_type=client_credentials",
        headers={
            "Authorization": f"Basic {basic}",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    assert issued.status_code == 200, issued.text
    token = issued.json()["access_token"]
    wrong = base64.b64encode(f"{created['id']}:ib_wrong".encode()).decode()
    refused = admin.post(
        "/iceberg/v1/oauth/tokens",
        content="grant_type=client_credentials",
        headers={"Authorization": f"Basic {wrong}"},
    )
    assert (refused.status_code, refused.json()["error"]) == (401, "invalid_client")
    answer = admin.post(
        "/v1/cdc/debezium",
        content=json.dumps(pg_event("c", 1, 100)),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert counts(answer) == (1, 0, 0)
    reader = client_for(admin.org, scope="read")  # type: ignore[attr-defined]
    assert post(reader, pg_event("c", 2, 100)).status_code == 403


# a row's history: (op, position); each change's clock is random, not in position order
HISTORY = st.lists(
    st.tuples(
        st.sampled_from(["c", "u", "d", "r", "t"]),
        st.integers(min_value=0, max_value=3),  # the row (t: the table)
        st.integers(min_value=0, max_value=600_000),  # the clock, ms after T0
    ),
    min_size=1,
    max_size=25,
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=HISTORY, seed=st.integers(0, 2**32 - 1))
def test_shuffled_redelivered_changes_fold_to_each_rows_newest(
    client_for: ClientFactory, history: list[tuple[str, int, int]], seed: int
) -> None:
    """Changes at rising LSNs, then shuffled, some delivered two or three times, posted in
    random batches: what is staged folds to each row's newest change by position."""
    rng = random.Random(seed)
    changes = [
        pg_event(op, key, 100 + 10 * i, ts_ms=T0 + clock, after={"id": key, "at": i})
        for i, (op, key, clock) in enumerate(history)
    ]
    model: dict[str, tuple[int, dict[str, Any] | None]] = {}
    for i, (op, key, _) in enumerate(history):
        if op == "t":
            model = dict.fromkeys(model, (i, None))
        else:
            model[str(key)] = (i, None if op == "d" else {"id": key, "at": i})
    expected = {k: doc for k, (_, doc) in model.items() if doc is not None}
    deliveries = [c for c in changes for _ in range(rng.choice([1, 1, 2, 3]))]
    rng.shuffle(deliveries)
    client = client_for()
    deliveries_made = len(deliveries)
    total = dict.fromkeys(["accepted", "duplicates", "superseded", "truncates"], 0)
    total["deleted_by_truncate"] = 0
    while deliveries:
        size = rng.randint(1, 6)
        batch, deliveries = deliveries[:size], deliveries[size:]
        answer = post(client, batch)
        assert answer.status_code == 202, answer.text
        for name in total:
            total[name] += answer.json()[name]
    events = staged(client.org)  # type: ignore[attr-defined]
    assert folded(events) == expected
    assert len(events) == total["accepted"]
    changed = total["accepted"] - total["deleted_by_truncate"] + total["truncates"]
    assert changed + total["duplicates"] + total["superseded"] == deliveries_made  # each once
    assert changed <= len(changes)  # no change applied twice
    assert len({e["seq"] for e in events}) == len(events)


def test_an_unchanged_toasted_column_keeps_its_value(client: TestClient) -> None:
    """PostgreSQL leaves an unchanged TOASTed column out of an update's image: Debezium puts its
    placeholder there, which must not overwrite the stored value."""
    bio = "a long text " * 500
    post(client, [pg_event("c", 1, 100, after={"id": 1, "bio": bio, "n": 1})])
    update = pg_event("u", 1, 110, after={"id": 1, "bio": "__debezium_unavailable_value", "n": 2})
    assert counts(post(client, [update])) == (1, 0, 0)
    events = staged(client.org)  # type: ignore[attr-defined]
    assert [e["op"] for e in events] == ["PUT", "PATCH"]
    assert folded(events) == {"1": {"id": 1, "bio": bio, "n": 2}}


PARTS = st.integers(min_value=0, max_value=2**80 - 1)  # a SQL Server LSN is 80 bits


@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.tuples(*[PARTS] * n), min_size=2)))
def test_encoded_positions_sort_as_their_tuples(positions: list[tuple[int, ...]]) -> None:
    """The stored text of a position compares as the tuple does (the held row's newest is
    found by text order), and tells different positions apart."""
    encoded = {p: encode(p) for p in positions}
    assert sorted(positions, key=encoded.__getitem__) == sorted(positions)
    assert len(set(encoded.values())) == len(set(positions))
    assert all(len(text) == len(encode(positions[0])) for text in encoded.values())
