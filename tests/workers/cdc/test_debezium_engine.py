"""Change events made by Debezium itself (its 3.6 engine and PostgreSQL connector, from PyPI),
not built by us from its documentation: a real database's snapshot, inserts, updates (two in
one transaction, one leaving a TOASTed column out), deletes, a key change and a truncate,
captured by three engines at once — JSON values with schemas (Debezium Server's default),
without (README's setting) and CloudEvents — and posted to `POST /v1/cdc/debezium` as its HTTP
sink does: in order, in arrays of up to 200, with the whole stream delivered again midway (a
restart from an older offset). After the processor ran, the raw table holds exactly the source
tables' rows: the source database is the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.debezium_source import Capture, SourceDatabase
from tests.fixtures.spark import RunJobs
from tests.workers.cdc.test_pipeline import process, rows

pytestmark = pytest.mark.spark
TABLES = ["inventory.customers", "inventory.orders"]
ENGINES = {
    "schemas": {"format": "json", "schemas": True},
    "plain": {"format": "json", "schemas": False},
    "cloudevents": {"format": "cloudevents", "schemas": False},
}
CONFIG = {
    "sources": [
        {"table": "inventory.customers", "key": ["id"], "record_type": "customer"},
        {"table": "inventory.orders", "key": ["id"], "entity_prefix": "order:"},
    ]
}
SENTINEL = 9999  # the workload's last insert: an engine that has it has everything
BIO = "(SELECT string_agg(md5(g::text), '') FROM generate_series(1, 300) g)"  # 9.6 kB: TOASTed
SNAPSHOT = [
    "CREATE SCHEMA inventory",
    "CREATE TABLE inventory.customers (id int PRIMARY KEY, name text, tier int, vip boolean,"
    " bio text)",
    "CREATE TABLE inventory.orders (id bigint PRIMARY KEY, customer int, total_cents bigint)",
    "INSERT INTO inventory.customers SELECT i, 'n' || i, i % 3, i % 2 = 0,"
    f" CASE WHEN i <= 3 THEN {BIO} || i END FROM generate_series(1, 40) i",
    "INSERT INTO inventory.orders SELECT i, i % 40, i * 100 FROM generate_series(1, 30) i",
]
STREAM = [
    [
        "INSERT INTO inventory.customers SELECT i, 'new' || i, 1, true, NULL"
        " FROM generate_series(41, 300) i"
    ],
    # the TOASTed bio is left out of these updates' images (Debezium's placeholder)
    ["UPDATE inventory.customers SET tier = 9 WHERE id <= 10"],
    [  # one transaction: two updates of a row in the same millisecond, a delete, an insert
        "UPDATE inventory.customers SET name = 'first' WHERE id = 11",
        "UPDATE inventory.customers SET name = 'second' WHERE id = 11",
        "DELETE FROM inventory.customers WHERE id = 12",
        "INSERT INTO inventory.customers VALUES (301, 'x', 2, false, 'short')",
    ],
    ["DELETE FROM inventory.customers WHERE id BETWEEN 13 AND 15"],
    ["INSERT INTO inventory.customers VALUES (14, 'back', 0, true, NULL)"],
    ["UPDATE inventory.customers SET id = 1000 WHERE id = 16"],  # a key change: delete + create
    ["UPDATE inventory.customers SET bio = 'rewritten' WHERE id = 2"],
    ["TRUNCATE inventory.orders"],
    ["INSERT INTO inventory.orders SELECT i, 7, i FROM generate_series(25, 40) i"],
    ["UPDATE inventory.orders SET total_cents = -1 WHERE id = 30"],
    [f"INSERT INTO inventory.customers VALUES ({SENTINEL}, 'last', 0, false, NULL)"],
]


def change(value: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """(op, after image) of a change event value in any of the three forms."""
    if "specversion" in value:  # CloudEvents: the op an extension attribute, the rows in data
        data = value["data"]
        return value["iodebeziumop"], data.get("payload", data).get("after")
    payload = value.get("payload", value)
    return payload["op"], payload.get("after")


def has_sentinel(values: list[Any]) -> bool:
    return any((change(value)[1] or {}).get("id") == SENTINEL for value in values)


def snapshot_done(values: list[Any]) -> bool:
    return len(values) >= 70  # 40 customers and 30 orders read


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The engines' batches of the whole workload, and the source tables' rows at its end."""
    folder: Path = tmp_path_factory.mktemp("debezium")
    source = SourceDatabase()
    capture = Capture(source, folder / "capture", TABLES)
    try:
        source.start()
        source.execute(*SNAPSHOT)
        capture.start(ENGINES)
        for engine in ENGINES:
            capture.wait_for(engine, snapshot_done, timeout=180)
        for transaction in STREAM:
            source.execute(*transaction)
        for engine in ENGINES:
            capture.wait_for(engine, has_sentinel, timeout=120)
        captured = {
            "batches": {engine: capture.batches(engine) for engine in ENGINES},
            "customers": source.rows("inventory.customers"),
            "orders": source.rows("inventory.orders"),
        }
    finally:  # the engines' JVM and the source server are not needed by the tests themselves
        capture.stop()
        source.destroy()
    return captured


def post(client: TestClient, batch: list[str | None], content_type: str) -> dict[str, int]:
    """One batch as the HTTP sink posts it: a JSON array of the values as serialized."""
    body = "[" + ",".join("null" if v is None else v for v in batch) + "]"
    answer = client.post(
        "/v1/cdc/debezium", content=body.encode(), headers={"Content-Type": content_type}
    )
    assert answer.status_code == 202, answer.text
    counts: dict[str, int] = answer.json()
    return counts


# every form on PostgreSQL; the embedded store's own SQL (the source keys) with one of them
@pytest.mark.parametrize(
    ("stack", "engine"),
    [*(("postgres", engine) for engine in ENGINES), ("embedded", "plain")],
    indirect=["stack"],
)
def test_the_raw_table_holds_the_source_tables_rows(
    client: TestClient, run_jobs: RunJobs, captured: dict[str, Any], engine: str
) -> None:
    assert client.put("/v1/cdc/config", json=CONFIG).status_code == 200
    batches: list[list[str | None]] = captured["batches"][engine]
    content_type = "application/cloudevents+json" if engine == "cloudevents" else "application/json"
    values = [json.loads(v) for b in batches for v in b if v is not None]
    changes = len(values)
    assert changes > 0
    operations = sorted({change(v)[0] for v in values})
    assert operations == ["c", "d", "r", "t", "u"], operations  # the workload made each kind
    if engine == "schemas":
        assert all(set(v) == {"schema", "payload"} for v in values)
    if engine == "cloudevents":
        assert all(v.get("specversion") == "1.0" and "data" in v for v in values)

    half = len(batches) // 2
    first = [post(client, batch, content_type) for batch in batches[:half]]
    again = [post(client, batch, content_type) for batch in batches]  # a rewind: all again
    process(client, run_jobs)
    # every change of the first half was a duplicate the second time; the second half was new,
    # and nothing was applied twice
    redelivered = sum(1 for b in batches[:half] for v in b if v is not None)
    total = {k: sum(a[k] for a in again[:half]) for k in ("accepted", "duplicates", "superseded")}
    assert total["accepted"] == 0, total
    assert total["duplicates"] + total["superseded"] == redelivered, total
    counted = sum(a["accepted"] + a["duplicates"] + a["superseded"] for a in first + again)
    truncates = sum(a["truncates"] for a in first + again)
    truncated = sum(a["deleted_by_truncate"] for a in first + again)
    skipped = sum(a["skipped"] for a in first + again)
    tombstones = sum(1 for b in batches[:half] + batches for v in b if v is None)
    assert skipped == tombstones
    # each change counted once a delivery; a truncate's deletes are counted as accepted too
    delivered = redelivered + changes
    assert counted - truncated + truncates == delivered, (counted, truncated, truncates)

    found = rows(client)
    documents = {entity: json.loads(row["document"]) for entity, row in found.items()}
    expected = {str(r["id"]): r for r in captured["customers"]}
    expected |= {f"order:{r['id']}": r for r in captured["orders"]}
    assert documents.keys() == expected.keys()
    different = [e for e in expected if documents[e] != expected[e]]
    assert not different, [(e, documents[e], expected[e]) for e in different[:3]]
    types = {row["record_type"] for entity, row in found.items() if entity.startswith("order:")}
    assert types == {"inventory.orders"}
    assert {row["record_type"] for e, row in found.items() if e.isdigit()} == {"customer"}
