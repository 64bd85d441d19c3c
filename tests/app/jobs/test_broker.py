"""The embedded broker's queue exists before any process uses it: kombu's SQLAlchemy transport
makes a queue with a SELECT then an INSERT, which a worker's consumer and its embedded beat,
starting together, raced on (`UNIQUE constraint failed: kombu_queue.name`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.config import Settings
from app.jobs.broker import QUEUE, declare_queue


def test_the_queue_is_declared_once_before_its_users(tmp_path: Path) -> None:
    broker = tmp_path / "broker.db"
    settings = Settings(home=tmp_path, broker_url=f"sqla+sqlite:///{broker}")
    declare_queue(settings)
    declare_queue(settings)  # every command runs it: again is nothing
    with sqlite3.connect(broker) as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM kombu_queue")]
    assert names == [QUEUE]


def test_redis_needs_nothing(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, broker_url="redis://127.0.0.1:1/0")  # never reached
    declare_queue(settings)
    assert not (tmp_path / "broker.db").exists()
