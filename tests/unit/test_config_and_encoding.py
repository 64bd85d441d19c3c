from __future__ import annotations

import base64
import json
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa

from app.config import Settings
from app.reads.encoding import arrow_stream, json_value, jsonl


def test_embedded_defaults_live_under_home(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, database_url="", broker_url="", warehouse="")
    assert settings.database_url == f"sqlite:///{tmp_path / 'icebatch.db'}"
    assert settings.broker_url.startswith("sqla+sqlite:///")
    assert settings.warehouse == (tmp_path / "warehouse").as_uri()
    assert settings.jdbc_url == f"jdbc:sqlite:{tmp_path / 'icebatch.db'}"
    assert settings.is_sqlite


def test_postgres_urls_for_sqlalchemy_and_jdbc(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, database_url="postgresql://ice:s3cr%40t@db.local:6543/meta")
    assert settings.sqlalchemy_url == "postgresql+psycopg://ice:s3cr%40t@db.local:6543/meta"
    assert settings.jdbc_url == "jdbc:postgresql://db.local:6543/meta"
    assert settings.jdbc_properties == {"user": "ice", "password": "s3cr@t"}
    assert not settings.is_sqlite


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
