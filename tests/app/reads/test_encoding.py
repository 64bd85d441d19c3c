from __future__ import annotations

import base64
import json
from datetime import UTC, date, datetime
from decimal import Decimal

import pyarrow as pa

from app.reads.encoding import arrow_stream, json_value, jsonl


def test_json_values() -> None:
    assert json_value(datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2024-01-02T03:04:05+00:00"
    assert json_value(date(2024, 1, 2)) == "2024-01-02"
    assert json_value(Decimal("1.50")) == "1.50"
    assert json_value(b"\x00\xff") == base64.b64encode(b"\x00\xff").decode()
    assert json_value({1: "x"}) == {"1": "x"}
    assert json_value({"s": [1, 2]}) == {"s": [1, 2]}


def test_jsonl_and_arrow_stream_round_trip() -> None:
    table = pa.table(
        {"a": [1, 2, 3], "m": pa.array([[("k", 1)], [], None], pa.map_(pa.string(), pa.int64()))}
    )
    batches = table.to_batches(max_chunksize=2)
    lines = b"".join(jsonl(batches)).decode().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"a": 1, "m": {"k": 1}},
        {"a": 2, "m": {}},
        {"a": 3, "m": None},
    ]
    streamed = b"".join(arrow_stream(table.schema, batches))
    assert pa.ipc.open_stream(streamed).read_all().equals(table)
