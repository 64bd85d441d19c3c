"""Debezium Server's HTTP sink bodies as normalized changes: each connector's change events as its
documentation shows them (with and without schema, array batches, CloudEvents), their log
positions and order, tombstones and messages, and every refusal naming element and field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.cdc.debezium import (
    Change,
    DebeziumChanges,
    FieldError,
    dedupe_key,
    entity_key,
    parse,
    position,
    table_name,
)
from app.errors import InvalidInput
from tests.fixtures.profile import budget

CE = "application/cloudevents+json"


def field(name: str, kind: str, optional: bool = True) -> dict[str, Any]:
    return {"type": kind, "optional": optional, "field": name}


def envelope(payload: dict[str, Any] | None, server: str = "dbserver1") -> dict[str, Any]:
    """The value as the JSON converter writes it with schemas enabled."""
    row = {
        "type": "struct",
        "fields": [field("id", "int32", False), field("email", "string")],
        "optional": True,
        "name": f"{server}.inventory.customers.Value",
    }
    return {
        "schema": {
            "type": "struct",
            "fields": [
                {**row, "field": "before"},
                {**row, "field": "after"},
                {
                    "type": "struct",
                    "fields": [
                        field("version", "string", False),
                        field("connector", "string", False),
                        field("name", "string", False),
                        field("ts_ms", "int64", False),
                    ],
                    "optional": False,
                    "name": "io.debezium.connector.Source",
                    "field": "source",
                },
                field("op", "string", False),
                field("ts_ms", "int64"),
            ],
            "optional": False,
            "name": f"{server}.inventory.customers.Envelope",
        },
        "payload": payload,
    }


def pg_source(lsn: int | None, committed: int | None = None, **extra: Any) -> dict[str, Any]:
    sequence = json.dumps(
        [None if committed is None else str(committed), None if lsn is None else str(lsn)]
    )
    source = {
        "version": "3.2.0.Final",
        "connector": "postgresql",
        "name": "PostgreSQL_server",
        "ts_ms": 1559033904863,
        "snapshot": "false",
        "db": "postgres",
        "sequence": sequence,
        "schema": "public",
        "table": "customers",
        "txId": 556,
        "lsn": lsn,
        "xmin": None,
    }
    source.update(extra)
    return source


def mysql_source(file: str, pos: int, row: int = 0, **extra: Any) -> dict[str, Any]:
    source = {
        "version": "3.2.0.Final",
        "connector": "mysql",
        "name": "mysql-server-1",
        "ts_ms": 1465581029100,
        "snapshot": "false",
        "db": "inventory",
        "table": "customers",
        "server_id": 223344,
        "gtid": None,
        "file": file,
        "pos": pos,
        "row": row,
        "thread": 7,
        "query": None,
    }
    source.update(extra)
    return source


def sqlserver_source(commit: str, change: str | None, serial: Any = "1", **extra: Any) -> Any:
    source = {
        "version": "3.2.0.Final",
        "connector": "sqlserver",
        "name": "server1",
        "ts_ms": 1559729468470,
        "snapshot": False,
        "db": "testDB",
        "schema": "dbo",
        "table": "customers",
        "change_lsn": change,
        "commit_lsn": commit,
        "event_serial_no": serial,
    }
    source.update(extra)
    return source


def mongo_source(ts_ms: int, ord: int, **extra: Any) -> dict[str, Any]:
    source = {
        "version": "3.2.0.Final",
        "connector": "mongodb",
        "name": "fulfillment",
        "ts_ms": ts_ms,
        "snapshot": False,
        "db": "inventory",
        "rs": "rs0",
        "collection": "customers",
        "ord": ord,
        "h": None,
    }
    source.update(extra)
    return source


def event(op: str, source: dict[str, Any], before: Any = None, after: Any = None) -> Any:
    return {"before": before, "after": after, "source": source, "op": op, "ts_ms": 1559033904961}


def body(*values: Any) -> bytes:
    """One value as it is, several as the sink's batch (a JSON array)."""
    return json.dumps(values[0] if len(values) == 1 else list(values)).encode()


def refused(raw: bytes, **options: Any) -> list[tuple[int, str]]:
    with pytest.raises(InvalidInput) as caught:
        parse(raw, **options)
    return [(e["element"], e["field"]) for e in caught.value.extra["errors"]]


ANNE = {"id": 1, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"}


# --- PostgreSQL ----------------------------------------------------------------------------


def test_postgresql_create_event_of_the_docs_with_its_schema() -> None:
    source = pg_source(24023128, 24023119, snapshot=True, txId=555)
    parsed = parse(body(envelope(event("c", source, after=ANNE), "PostgreSQL_server")))
    assert parsed == DebeziumChanges(
        changes=(
            Change(
                index=1,
                op="PUT",
                connector="postgresql",
                source_name="PostgreSQL_server",
                table="public.customers",
                key="1",
                position=(24023119, 24023128, 0),  # the snapshot flag makes it phase 0
                ts_ms=1559033904863,
                document=ANNE,
                snapshot=True,
            ),
        ),
        tombstones=0,
        messages=0,
        control=0,
    )


def test_postgresql_update_delete_and_truncate_without_schema_in_one_batch() -> None:
    raw = body(
        event("u", pg_source(46523128, 46523000), before={"id": 1}, after={**ANNE, "id": 1}),
        event("d", pg_source(46523200, 46523000), before={"id": 1}),
        {"source": pg_source(46523300, 46523250), "op": "t", "ts_ms": 1559033904961},
    )
    changes = parse(raw).changes
    assert [(c.index, c.op, c.key, c.document) for c in changes] == [
        (1, "PUT", "1", {**ANNE, "id": 1}),
        (2, "DELETE", "1", None),
        (3, "TRUNCATE", "", None),
    ]
    assert [c.position for c in changes] == [
        (46523000, 46523128, 1),
        (46523000, 46523200, 1),
        (46523250, 46523300, 1),
    ]
    assert {c.table for c in changes} == {"public.customers"}
    assert not any(c.snapshot for c in changes)


def test_postgresql_incremental_snapshot_read_takes_its_lsn_from_the_sequence() -> None:
    source = pg_source(None, 46523000, snapshot="incremental")
    del source["lsn"]  # Debezium leaves lsn, txId and xmin out of incremental snapshot reads
    source["sequence"] = '["46523000","46523500"]'
    (change,) = parse(body(event("r", source, after=ANNE))).changes
    assert change.position == (46523000, 46523500, 0)
    assert change.snapshot is True


def test_postgresql_without_sequence_orders_by_lsn_after_a_zero_commit() -> None:
    source = pg_source(46523128)
    del source["sequence"]  # versions before the sequence field
    (change,) = parse(body(event("c", source, after=ANNE))).changes
    assert change.position == (0, 46523128, 1)


def test_two_changes_in_one_millisecond_are_ordered_by_position_not_lsn() -> None:
    """Interleaved transactions: T2 (lsn 300) commits at 310 before T1 (lsn 200) commits; the
    stream gives T2 first, and T1's change carries T2's commit as its last committed LSN."""
    first = event("u", pg_source(300, 100, ts_ms=1700000000000), after={**ANNE, "email": "t2"})
    second = event("u", pg_source(200, 310, ts_ms=1700000000000), after={**ANNE, "email": "t1"})
    changes = parse(body(second, first)).changes
    assert changes[0].ts_ms == changes[1].ts_ms
    ordered = sorted(changes, key=lambda c: c.position)
    assert [c.document["email"] for c in ordered if c.document] == ["t2", "t1"]
    assert [c.index for c in ordered] == [2, 1]


# --- MySQL ---------------------------------------------------------------------------------


def test_mysql_create_event_of_the_docs_names_db_dot_table() -> None:
    source = mysql_source("mysql-bin.000003", 154, ts_ms=0, snapshot=False, server_id=0)
    value = {"op": "c", "ts_ms": 1465491411815, "before": None, "after": ANNE, "source": source}
    (change,) = parse(body(envelope(value, "mysql-server-1"))).changes
    assert (change.table, change.key, change.position) == (
        "inventory.customers",
        "1",
        (3, 154, 0, 1),
    )
    assert change.ts_ms == 1465491411815  # source.ts_ms 0: the payload's time stands in
    assert change.source_name == "mysql-server-1"


def test_mysql_binlog_rollover_orders_by_the_file_number() -> None:
    """mysql-bin.000009 < mysql-bin.000010, and past 999999 the name grows a digit, where the
    names as text would sort the wrong way."""
    files = [("mysql-bin.1000000", 4), ("mysql-bin.000010", 4), ("mysql-bin.999999", 500)]
    files.append(("mysql-bin.000009", 98765))
    events = [event("u", mysql_source(f, pos, 2), after={"id": 1, "f": f}) for f, pos in files]
    changes = parse(body(*events)).changes
    assert [c.position for c in changes] == [
        (1000000, 4, 2, 1),
        (10, 4, 2, 1),
        (999999, 500, 2, 1),
        (9, 98765, 2, 1),
    ]
    ordered = [c.document["f"] for c in sorted(changes, key=lambda c: c.position) if c.document]
    assert ordered == [
        "mysql-bin.000009",
        "mysql-bin.000010",
        "mysql-bin.999999",
        "mysql-bin.1000000",
    ]
    assert sorted(ordered) != ordered  # as text


def test_rows_of_one_binlog_event_are_ordered_by_row() -> None:
    rows = [event("c", mysql_source("mysql-bin.000003", 484, r), after={"id": r}) for r in range(3)]
    changes = parse(body(*reversed(rows))).changes
    assert [c.key for c in sorted(changes, key=lambda c: c.position)] == ["0", "1", "2"]


def test_mariadb_reads_like_mysql() -> None:
    source = mysql_source("mariadb-bin.000002", 330, connector="mariadb")
    (change,) = parse(body(event("c", source, after=ANNE))).changes
    assert (change.connector, change.table, change.position) == (
        "mariadb",
        "inventory.customers",
        (2, 330, 0, 1),
    )


# --- snapshot reads against streamed changes -------------------------------------------------


def test_a_snapshot_read_orders_before_a_later_streamed_change_of_the_same_row() -> None:
    read = event("r", pg_source(24023128, None, snapshot="last"), after={**ANNE, "email": "old"})
    streamed = event("u", pg_source(24023200, None), after={**ANNE, "email": "new"})
    changes = parse(body(streamed, read)).changes
    ordered = sorted(changes, key=lambda c: c.position)
    assert [(c.snapshot, c.document["email"] if c.document else None) for c in ordered] == [
        (True, "old"),
        (False, "new"),
    ]


def test_at_an_equal_binlog_position_the_snapshot_read_goes_first() -> None:
    """The snapshot records the binlog position it began at; the first streamed row can carry
    the same file, pos and row."""
    read = event("r", mysql_source("mysql-bin.000003", 154, snapshot="true"), after=ANNE)
    streamed = event("d", mysql_source("mysql-bin.000003", 154), before={"id": 1})
    changes = parse(body(streamed, read)).changes
    assert changes[0].position[:-1] == changes[1].position[:-1]
    assert [c.op for c in sorted(changes, key=lambda c: c.position)] == ["PUT", "DELETE"]
    assert dedupe_key(changes[0]) != dedupe_key(changes[1])


def test_an_incremental_read_after_a_streamed_change_orders_after_it() -> None:
    streamed = event("u", mysql_source("mysql-bin.000003", 200), after={**ANNE, "email": "a"})
    read = event("r", mysql_source("mysql-bin.000003", 900, snapshot="incremental"), after={**ANNE})
    changes = parse(body(read, streamed)).changes
    assert [c.index for c in sorted(changes, key=lambda c: c.position)] == [2, 1]


# --- SQL Server ----------------------------------------------------------------------------


def test_sqlserver_events_of_the_docs_order_by_commit_change_and_serial() -> None:
    snapshot = event(
        "r",
        sqlserver_source("00000025:00000d98:00a2", None, None, snapshot="true"),
        after={**ANNE, "id": 1005},
    )
    create = event(
        "c", sqlserver_source("00000027:00000758:0005", "00000027:00000758:0003"), after=ANNE
    )
    # a primary key update: a delete and a create with the same LSNs, serial numbers 1 and 2
    delete = event(
        "d",
        sqlserver_source("00000027:00000ac0:0007", "00000027:00000ac0:0002", 1),
        before={"id": 1},
    )
    recreate = event(
        "c",
        sqlserver_source("00000027:00000ac0:0007", "00000027:00000ac0:0002", "2"),
        after={**ANNE, "id": 2},
    )
    changes = parse(body(envelope(recreate, "server1"), delete, create, snapshot)).changes
    assert changes[3].position == (int("0000002500000d9800a2", 16), 0, 0, 0)
    assert changes[2].position == (
        int("00000027000007580005", 16),
        int("00000027000007580003", 16),
        1,
        1,
    )
    assert [(c.op, c.key) for c in sorted(changes, key=lambda c: c.position)] == [
        ("PUT", "1005"),
        ("PUT", "1"),
        ("DELETE", "1"),
        ("PUT", "2"),
    ]
    assert {c.table for c in changes} == {"dbo.customers"}


def test_sqlserver_lsns_compare_as_numbers_of_their_bytes() -> None:
    lsns = ["00000026:00000000:0001", "00000025:00000d98:00a2", "00000025:00000d98:0002"]
    places = [position(sqlserver_source(lsn, None), snapshot=False) for lsn in lsns]
    assert sorted(places) == [places[2], places[1], places[0]]


# --- MongoDB -------------------------------------------------------------------------------

MONGO_AFTER = (
    '{"_id" : {"$numberLong" : "1004"},"first_name" : "Anne","last_name" : "Kretchmar",'
    '"email" : "annek@noanswer.org"}'
)


def test_mongodb_create_event_of_the_docs_with_an_extended_json_string() -> None:
    value = event("c", mongo_source(1558965508000, 31), after=MONGO_AFTER)
    del value["before"]
    (change,) = parse(body(envelope(value, "fulfillment"))).changes
    assert (change.table, change.key, change.position) == (
        "inventory.customers",
        "1004",
        (1558965508, 31, 1),
    )
    assert change.document == json.loads(MONGO_AFTER)


def test_mongodb_document_as_an_object_gives_the_same_key() -> None:
    relaxed = event("c", mongo_source(1558965508000, 31), after={"_id": 1004, "a": 1})
    oid = event("u", mongo_source(1558965508000, 32), after={"_id": {"$oid": "5f3a9b"}, "a": 2})
    changes = parse(body(relaxed, oid)).changes
    assert [c.key for c in changes] == ["1004", "5f3a9b"]


def test_mongodb_orders_by_ord_within_the_second_of_ts_ms() -> None:
    """MongoDB 6.0+ puts the wall time in ts_ms: later milliseconds in the same second must not
    outrank a higher ord."""
    a = event("u", mongo_source(1700000000900, 1), after={"_id": 1, "v": "a"})
    b = event("u", mongo_source(1700000000100, 2), after={"_id": 1, "v": "b"})
    c = event("u", mongo_source(1700000001000, 1), after={"_id": 1, "v": "c"})
    changes = parse(body(c, b, a)).changes
    ordered = sorted(changes, key=lambda change: change.position)
    assert [x.document["v"] for x in ordered if x.document] == ["a", "b", "c"]


def test_mongodb_delete_keys_on_the_pre_image_or_the_legacy_filter() -> None:
    with_pre_image = event("d", mongo_source(1558965508000, 6), before=MONGO_AFTER)
    legacy = {
        "op": "d",
        "filter": '{"_id" : {"$numberLong" : "1005"}}',
        "source": mongo_source(1558965509000, 1),
    }
    changes = parse(body(with_pre_image, legacy)).changes
    assert [(c.op, c.key, c.document) for c in changes] == [
        ("DELETE", "1004", None),
        ("DELETE", "1005", None),
    ]


def test_mongodb_update_without_full_document_and_delete_without_pre_image_are_refused() -> None:
    update = {
        "op": "u",
        "updateDescription": {"updatedFields": '{"first_name": "Anne Marie"}'},
        "source": mongo_source(1558965508000, 1),
    }
    delete = {"op": "d", "source": mongo_source(1558965508000, 2)}
    with pytest.raises(InvalidInput) as caught:
        parse(body(update, envelope(delete)))
    errors = caught.value.extra["errors"]
    assert [(e["element"], e["field"]) for e in errors] == [(1, "after"), (2, "payload.before")]
    assert "change_streams_update_full" in errors[0]["message"]
    assert "with_pre_image" in errors[1]["message"]


# --- keys ----------------------------------------------------------------------------------


def test_a_composite_key_is_the_json_array_of_its_values() -> None:
    keys = {"public.order_lines": ["order_id", "line"]}
    lines = [
        event("c", pg_source(10, table="order_lines"), after={"order_id": "a,b", "line": "c"}),
        event("c", pg_source(11, table="order_lines"), after={"order_id": "a", "line": "b,c"}),
        event("d", pg_source(12, table="order_lines"), before={"order_id": "ü", "line": 7}),
    ]
    changes = parse(body(*lines), keys=keys).changes
    assert [c.key for c in changes] == ['["a,b","c"]', '["a","b,c"]', '["ü",7]']
    assert [json.loads(c.key) for c in changes][2] == ["ü", 7]


def test_a_single_key_is_its_plain_value() -> None:
    assert entity_key({"id": "u-1"}, ["id"]) == "u-1"
    assert entity_key({"id": 12345678901234567890}, ["id"]) == "12345678901234567890"
    assert entity_key({"id": {"b": 1, "a": [True]}}, ["id"]) == '{"a":[true],"b":1}'
    assert entity_key({"_id": {"$numberLong": "7"}}, ["_id"], extended_json=True) == "7"
    assert entity_key({"_id": {"$numberLong": "7"}}, ["_id"]) == '{"$numberLong":"7"}'


def test_table_names_per_connector() -> None:
    assert table_name(pg_source(1)) == "public.customers"
    assert table_name(mysql_source("mysql-bin.000001", 4)) == "inventory.customers"
    assert table_name(sqlserver_source("00000025:00000d98:00a2", None)) == "dbo.customers"
    assert table_name(mongo_source(1000, 1)) == "inventory.customers"
    with pytest.raises(FieldError) as caught:
        table_name(mongo_source(1000, 1, collection=""))
    assert caught.value.field == "source.collection"


# --- CloudEvents ---------------------------------------------------------------------------


def debezium_cloudevent(op: str, lsn: str, after: Any, **data: Any) -> dict[str, Any]:
    """The CloudEvents converter's own shape: source fields as iodebezium* attributes."""
    return {
        "id": f"name:test_server;lsn:{lsn};txId:565",
        "source": "/debezium/postgresql/test_server",
        "specversion": "1.0",
        "type": "io.debezium.connector.postgresql.DataChangeEvent",
        "time": "2020-01-13T13:55:39.738Z",
        "datacontenttype": "application/json",
        "iodebeziumop": op,
        "iodebeziumversion": "3.2.0.Final",
        "iodebeziumconnector": "postgresql",
        "iodebeziumname": "test_server",
        "iodebeziumtsms": "1578923739738",
        "iodebeziumsnapshot": "true" if op == "r" else "false",
        "iodebeziumdb": "postgres",
        "iodebeziumsequence": f'["29274000","{lsn}"]',
        "iodebeziumschema": "s1",
        "iodebeziumtable": "a",
        "iodebeziumlsn": lsn,
        "iodebeziumxmin": None,
        "iodebeziumtxId": "565",
        "iodebeziumtxid": "565",
        "iodebeziumtxtotalorder": "1",
        "iodebeziumtxdatacollectionorder": "1",
        "data": data or {"before": None, "after": after},
    }


def test_cloudevents_of_debezium_read_source_from_extension_attributes() -> None:
    read = debezium_cloudevent("r", "29274832", {"pk": 1, "name": "Bob"})
    update = debezium_cloudevent(
        "u",
        "29274900",
        None,
        schema={"type": "struct", "fields": []},
        payload={"before": None, "after": {"pk": 1, "name": "Rob"}},
    )
    parsed = parse(body(update, read), content_type=f"{CE}; charset=utf-8", keys={"s1.a": ["pk"]})
    assert [
        (c.op, c.source_name, c.table, c.key, c.position, c.ts_ms, c.document, c.snapshot)
        for c in parsed.changes
    ] == [
        ("PUT", "test_server", "s1.a", "1", (29274000, 29274900, 1), 1578923739738,
         {"pk": 1, "name": "Rob"}, False),
        ("PUT", "test_server", "s1.a", "1", (29274000, 29274832, 0), 1578923739738,
         {"pk": 1, "name": "Bob"}, True),
    ]  # fmt: skip


def test_cloudevents_whose_data_is_the_change_event_value() -> None:
    wrap = {"id": "x-1", "source": "/debezium", "type": "debezium.change", "specversion": "1.0"}
    with_schema = {**wrap, "data": envelope(event("c", pg_source(500, 400), after=ANNE))}
    without = {**wrap, "id": "x-2", "data": event("d", pg_source(600, 550), before={"id": 1})}
    tombstone = {**wrap, "id": "x-3", "data": None}
    parsed = parse(body(with_schema, without, tombstone), content_type=CE)
    assert [(c.index, c.op, c.key, c.position) for c in parsed.changes] == [
        (1, "PUT", "1", (400, 500, 1)),
        (2, "DELETE", "1", (550, 600, 1)),
    ]
    assert parsed.tombstones == 1


def test_cloudevents_errors_name_the_attribute_or_the_data_path() -> None:
    bad_lsn = debezium_cloudevent("u", "not-a-number", {"id": 1})
    bad_lsn["iodebeziumsequence"] = '["29274000","29274832"]'
    no_op = debezium_cloudevent("u", "29274900", {"id": 1})
    del no_op["iodebeziumop"]
    avro = {**debezium_cloudevent("u", "1", None), "data": "AAAAAAEAAgICAg=="}
    no_key = debezium_cloudevent("c", "29275000", {"name": "Bob"})
    plain = event("c", pg_source(1), after=ANNE)
    wrapped = {"specversion": "1.0", "data": {"payload": event("c", pg_source(2), after={})}}
    assert refused(body(bad_lsn, no_op, avro, no_key, plain, wrapped), content_type=CE) == [
        (1, "iodebeziumlsn"),
        (2, "iodebeziumop"),
        (3, "data"),
        (4, "data.after.id"),
        (5, "specversion"),
        (6, "data.payload.after.id"),
    ]


def test_a_cloudevent_posted_as_plain_json_is_read_too() -> None:
    cloudevent = debezium_cloudevent("c", "29275000", {"id": 9})
    (change,) = parse(body(cloudevent), content_type="application/json").changes
    assert (change.key, change.position) == ("9", (29274000, 29275000, 1))


def test_an_unread_content_type_is_refused_before_the_body() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(b"\x00avro", content_type="avro/bytes")
    assert "avro/bytes" in caught.value.detail
    assert caught.value.extra == {"errors": []}


# --- what changes no row -------------------------------------------------------------------


def test_tombstones_messages_and_control_values_are_counted_not_returned() -> None:
    message = {
        "source": pg_source(46523128, ts_ms=1559033904863, schema="", table=""),
        "op": "m",
        "ts_ms": 1559033904961,
        "message": {"prefix": "foo", "content": "Ymfy"},
    }
    schema_change = {
        "source": mysql_source("mysql-bin.000003", 154),
        "databaseName": "inventory",
        "ddl": "ALTER TABLE customers ADD COLUMN middle_name VARCHAR(255)",
        "tableChanges": [],
    }
    begin = {"status": "BEGIN", "id": "571:53195829", "event_count": None}
    heartbeat = {"ts_ms": 1588252618953}
    create = event("c", pg_source(46523300), after=ANNE)
    parsed = parse(
        body(
            None,
            envelope(None),
            {"payload": None},
            envelope(message),
            schema_change,
            envelope(begin),
            heartbeat,
            create,
            None,
        )
    )
    assert (parsed.tombstones, parsed.messages, parsed.control) == (4, 1, 3)
    assert [(c.index, c.key) for c in parsed.changes] == [(8, "1")]


def test_a_body_that_is_null_is_one_tombstone() -> None:
    assert parse(b"null") == DebeziumChanges((), tombstones=1, messages=0, control=0)


# --- refusals ------------------------------------------------------------------------------


def test_every_bad_element_is_named_with_its_field_and_nothing_is_returned() -> None:
    good = event("c", pg_source(100), after=ANNE)
    raw = body(
        good,
        event("x", pg_source(101), after=ANNE),
        {"op": "c", "after": ANNE},
        event("c", {**pg_source(102), "connector": "oracle"}, after=ANNE),
        event("c", {**pg_source(103), "name": ""}, after=ANNE),
        event("c", {**pg_source(None), "sequence": None}, after=ANNE),
        event("c", {**pg_source(104), "sequence": "[1]"}, after=ANNE),
        event("c", mysql_source("mysql-bin", 4), after=ANNE),
        event("c", mysql_source("mysql-bin.000001", -4), after=ANNE),
        event("c", {**mysql_source("mysql-bin.000001", 4), "row": None}, after=ANNE),
        event("c", sqlserver_source("25:d98:2", None), after=ANNE),
        event("c", sqlserver_source("00000025:00000d98:0002", "zz"), after=ANNE),
        event("c", {**mongo_source(1000, 1), "ord": None}, after={"_id": 1}),
        event("c", pg_source(105), after={"email": "no id"}),
        event("d", pg_source(106)),
        event("u", pg_source(107), after={"id": None}),
        envelope(event("c", {**pg_source(108), "ts_ms": "soon"}, after=ANNE)),
        event("c", {**pg_source(109), "snapshot": 1}, after=ANNE),
        event("c", {**pg_source(110), "table": None}, after=ANNE),
        event("c", pg_source(111), after=[1]),
        [good],
        "text",
        event("c", pg_source(112), after={"id": "x" * 256}),
        good,
    )
    with pytest.raises(InvalidInput) as caught:
        parse(raw)
    problem = caught.value
    assert [(e["element"], e["field"]) for e in problem.extra["errors"]] == [
        (2, "op"),
        (3, "source"),
        (4, "source.connector"),
        (5, "source.name"),
        (6, "source.lsn"),
        (7, "source.sequence"),
        (8, "source.file"),
        (9, "source.pos"),
        (10, "source.row"),
        (11, "source.commit_lsn"),
        (12, "source.change_lsn"),
        (13, "source.ord"),
        (14, "after.id"),
        (15, "before"),
        (16, "after.id"),
        (17, "payload.source.ts_ms"),
        (18, "source.snapshot"),
        (19, "source.table"),
        (20, "after"),
        (21, ""),
        (22, ""),
        (23, "after.id"),
    ]
    assert problem.status == 422
    assert problem.detail.startswith("22 bad change event value(s), nothing accepted; first at ")
    assert "element 2, field op: one of c, r, u, d, t, m, not 'x'" in problem.detail
    assert problem.extra["errors"][0]["location"] == "element 2: op"
    assert "oracle" in problem.extra["errors"][2]["message"]


def test_one_element_with_several_bad_fields_gets_an_error_for_each() -> None:
    source = {**pg_source(None), "sequence": None, "name": None, "ts_ms": None}
    assert refused(body(event("q", source, after=ANNE))) == [
        (1, "op"),
        (1, "source.name"),
        (1, "source.ts_ms"),
        (1, "source.lsn"),
    ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "the body is empty"),
        (b"  \n", "the body is empty"),
        (b"[]", "an empty array holds no change events"),
        (b'{"op": "c",', "not valid JSON (line 1, column 12)"),
        (b'{"op": NaN}', "NaN is not a JSON value"),
        (b"\xff\xfe", "not UTF-8 (byte 0)"),
    ],
)
def test_a_body_that_is_no_json_value_is_refused_as_a_whole(raw: bytes, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(raw)
    (error,) = caught.value.extra["errors"]
    assert (error["element"], error["field"], error["location"]) == (0, "", "body")
    assert message in error["message"]
    assert "first at the body: " in caught.value.detail


def test_a_lone_surrogate_in_a_document_is_refused() -> None:
    raw = b'{"op":"c","source":' + json.dumps(pg_source(1)).encode() + b',"after":{"id":1,'
    raw += b'"name":"\\ud800"}}'
    assert refused(raw) == [(1, "after")]


def test_errors_stop_at_fifty_and_still_count_from_the_first() -> None:
    raw = body(*[event("x", pg_source(i), after=ANNE) for i in range(1, 80)])
    with pytest.raises(InvalidInput) as caught:
        parse(raw)
    errors = caught.value.extra["errors"]
    assert len(errors) == 50
    assert [e["element"] for e in errors] == list(range(1, 51))


def test_key_lists_must_be_lists_of_column_names() -> None:
    with pytest.raises(ValueError, match="keys"):
        parse(body(event("c", pg_source(1), after=ANNE)), keys={"public.customers": "id"})


# --- redeliveries --------------------------------------------------------------------------


def test_a_redelivered_change_has_the_same_dedupe_key_and_another_change_does_not() -> None:
    create = event("c", pg_source(100, 90), after=ANNE)
    again = parse(body(create)).changes[0]
    batch = parse(body(event("u", pg_source(120, 90), after=ANNE), create)).changes
    assert (
        dedupe_key(again)
        == dedupe_key(batch[1])
        == (
            "PostgreSQL_server",
            "public.customers",
            "1",
            (90, 100, 1),
        )
    )
    assert dedupe_key(batch[0]) != dedupe_key(batch[1])
    other_server = parse(body(event("c", pg_source(100, 90, name="other"), after=ANNE)))
    assert dedupe_key(other_server.changes[0]) != dedupe_key(again)


# --- the property: shuffled batches --------------------------------------------------------


def _lsn_text(value: int) -> str:
    text = f"{value:020x}"
    return f"{text[:8]}:{text[8:16]}:{text[16:]}"


@st.composite
def histories(draw: st.DrawFn) -> tuple[str, list[tuple[Any, str, tuple[int, ...]]]]:
    """A connector's stream: snapshot reads of distinct rows at the position the snapshot began
    at, then streamed changes at strictly rising positions → (connector, [(value, entity key,
    expected position)] in stream order)."""
    connector = draw(st.sampled_from(["postgresql", "mysql", "sqlserver", "mongodb"]))
    ids = draw(st.lists(st.integers(1, 6), unique=True, max_size=4).map(sorted))
    steps = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 500)), max_size=25))
    ops = draw(st.lists(st.sampled_from("cudt"), min_size=len(steps), max_size=len(steps)))
    rows = draw(st.lists(st.integers(1, 6), min_size=len(steps), max_size=len(steps)))
    # a cursor in the connector's own terms, moved by each step: (kind of move, distance)
    cursor = {
        "postgresql": [draw(st.integers(0, 10**6)), draw(st.integers(1, 10**9))],
        "mysql": [draw(st.integers(1, 999_998)), draw(st.integers(4, 10**6)), 0],
        "sqlserver": [draw(st.integers(1, 2**70)), 0, 0],
        "mongodb": [draw(st.integers(1_600_000_000, 1_800_000_000)), 1],
    }[connector]
    history: list[tuple[Any, str, tuple[int, ...]]] = []

    def value(op: str, row: int, snapshot: bool) -> tuple[Any, str, tuple[int, ...]]:
        image: dict[str, Any] = {"id": row, "v": len(history)}
        place: tuple[int, ...]
        if connector == "postgresql":
            committed, lsn = cursor
            source = pg_source(lsn, committed or None)
            place = (committed, lsn)
        elif connector == "mysql":
            source = mysql_source(f"mysql-bin.{cursor[0]:06d}", cursor[1], cursor[2])
            place = tuple(cursor)
        elif connector == "sqlserver":
            change = _lsn_text(cursor[1]) if cursor[1] else None
            source = sqlserver_source(_lsn_text(cursor[0]), change, cursor[2] or None)
            place = tuple(cursor)
        else:
            image = {"_id": {"$numberLong": str(row)}, "v": len(history)}
            ms = draw(st.integers(0, 999))
            source = mongo_source(cursor[0] * 1000 + ms, cursor[1])
            place = tuple(cursor)
        source["snapshot"] = "true" if snapshot else "false"
        if op == "t":
            payload: Any = {"source": source, "op": "t", "ts_ms": 1}
        elif op == "d":
            payload = event("d", source, before=image)
        else:
            after = json.dumps(image) if connector == "mongodb" else image
            payload = event(op, source, after=after)
        key = "" if op == "t" else str(row)
        return payload, key, (*place, 0 if snapshot else 1)

    for row in ids:
        history.append(value("r", row, True))
    for (kind, distance), op, row in zip(steps, ops, rows, strict=True):
        if connector == "postgresql":  # a new transaction: the commit rises, the lsn is any
            if kind == 0:
                cursor[1] += distance
            else:
                cursor[0] += distance
                cursor[1] = draw(st.integers(1, 10**9))
        elif connector == "mysql":  # next row, next event, next binlog file
            cursor[:] = [
                [cursor[0], cursor[1], cursor[2] + 1],
                [cursor[0], cursor[1] + distance, 0],
                [cursor[0] + 1, 4, 0],
            ][kind]
        elif connector == "sqlserver":  # next serial, next change in the commit, next commit
            cursor[:] = [
                [cursor[0], cursor[1], cursor[2] + 1],
                [cursor[0], cursor[1] + distance, 0],
                [cursor[0] + distance, 0, 0],
            ][kind]
        else:  # next ord in the second, next second
            cursor[:] = [cursor[0], cursor[1] + 1] if kind == 0 else [cursor[0] + distance, 1]
        streamed_op = "u" if op == "t" and connector in ("sqlserver", "mongodb") else op
        history.append(value(streamed_op, row, False))
    return connector, history


@budget(60)
@given(history=histories(), data=st.data())
def test_a_shuffled_batch_gives_the_same_changes_and_positions_recover_the_order(
    history: tuple[str, list[tuple[Any, str, tuple[int, ...]]]], data: st.DataObject
) -> None:
    connector, stream = history
    posted = data.draw(st.permutations([*stream, (None, "", ())]))
    parsed = parse(body(*(value for value, _, _ in posted)))
    source_name = {
        "postgresql": "PostgreSQL_server",
        "mysql": "mysql-server-1",
        "sqlserver": "server1",
        "mongodb": "fulfillment",
    }[connector]
    table = "inventory.customers" if connector in ("mysql", "mongodb") else "public.customers"
    table = "dbo.customers" if connector == "sqlserver" else table
    expected = {(source_name, table, key, place) for _, key, place in stream}
    assert {dedupe_key(c) for c in parsed.changes} == expected
    assert parsed.tombstones == 1
    assert [c.index for c in parsed.changes] == [
        i for i, (value, _, _) in enumerate(posted, start=1) if value is not None
    ]
    # snapshot reads of distinct rows share a position: the key orders them, as generated
    ordered = sorted(parsed.changes, key=lambda c: (c.position, c.key))
    assert [(c.key, c.position) for c in ordered] == [(key, place) for _, key, place in stream]
