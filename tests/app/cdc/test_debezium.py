"""Debezium Server's HTTP sink bodies as normalized changes, per connector: each one's change
events as its documentation shows them (with and without schema, array batches), their log
positions and order against snapshot reads, and the entity keys and table names they give.
The other bodies (CloudEvents, tombstones and messages, refusals, redeliveries, shuffled
batches): `test_debezium_bodies.py`."""

from __future__ import annotations

import json

import pytest

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
from tests.app.cdc.debezium_values import (
    ANNE,
    body,
    envelope,
    event,
    mongo_source,
    mysql_source,
    pg_source,
    sqlserver_source,
)

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
