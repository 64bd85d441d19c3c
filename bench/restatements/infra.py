"""The run's own PostgreSQL databases and Redis database, created and dropped by the run."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg

from bench.restatements.shared import PG, REDIS


def create_database(prefix: str) -> str:
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def drop_database(name: str) -> None:
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def in_fresh_store(name: str, keep: bool, body: Callable[[Path], None]) -> None:
    """`body(work)` in a new work folder (`work/home` is ICEBATCH_HOME) on a new PostgreSQL
    database, with Spark local; the database is dropped after, the folder unless `keep`."""
    from bench.common import local_run, work_dir

    local_run()
    database = create_database(f"icebatch_bench_{name}")
    try:
        with work_dir(name, keep) as work:
            os.environ["ICEBATCH_HOME"] = str(work / "home")
            os.environ["ICEBATCH_DATABASE_URL"] = f"{PG}/{database}"
            body(work)
    finally:
        drop_database(database)


@contextlib.contextmanager
def redis_database() -> Iterator[int]:
    """A Redis database number nobody else uses now (the tests' lock protocol, same keys)."""
    import redis

    client = redis.Redis.from_url(REDIS)
    for number in range(15, 1, -1):
        lock = f"icebatch-test-lock-{number}"
        if client.set(lock, os.getpid(), nx=True, ex=3600):
            break
    else:
        raise RuntimeError("no free Redis database")
    redis.Redis.from_url(f"{REDIS}/{number}").flushdb()
    try:
        yield number
    finally:
        redis.Redis.from_url(f"{REDIS}/{number}").flushdb()
        client.delete(lock)
