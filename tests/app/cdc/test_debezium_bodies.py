"""Debezium Server's HTTP sink bodies beyond one connector's events: CloudEvents (structured
mode), tombstones and messages that change no row, every refusal naming element and field,
and redeliveries. The property of shuffled batches: `test_debezium_shuffled.py`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.cdc.debezium import (
    DebeziumChanges,
    dedupe_key,
    parse,
)
from app.errors import InvalidInput
from tests.app.cdc.debezium_values import (
    ANNE,
    CE,
    body,
    envelope,
    event,
    mongo_source,
    mysql_source,
    pg_source,
    refused,
    sqlserver_source,
)

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
