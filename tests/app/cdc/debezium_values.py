"""Debezium change event values as each connector's documentation shows them, and the bodies
Debezium Server's HTTP sink posts: the builders of the Debezium parsing tests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.cdc.debezium import (
    parse,
)
from app.errors import InvalidInput

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
