from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import PG_HOST, REDIS_URL, create_pg_database, drop_pg_database, free_redis_db
from tests.fixtures.service import Service

FAST_RECOVERY = {
    "ICEBATCH_SPARK_MASTER": "local[2]",
    "ICEBATCH_SPARK_DRIVER_MEMORY": "2g",
    "ICEBATCH_HEARTBEAT_SECONDS": "1",
    "ICEBATCH_STALE_AFTER_SECONDS": "8",
    "ICEBATCH_RECONCILE_SECONDS": "1",
    "ICEBATCH_OUTBOX_GRACE_SECONDS": "2",
}


@pytest.fixture(params=["embedded", "postgres"])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    """Processes of one fresh Icebatch installation; the test starts what it needs."""
    env = dict(FAST_RECOVERY)
    for key in (
        "ICEBATCH_DATABASE_URL",
        "ICEBATCH_BROKER_URL",
        "ICEBATCH_WAREHOUSE",
    ):
        env[key] = ""
    env["ICEBATCH_CATALOG_NAME"] = "icebatch"
    database = redis_db = None
    if request.param == "postgres":
        database = create_pg_database("icebatch_e2e")
        redis_db = free_redis_db()
        env["ICEBATCH_DATABASE_URL"] = f"{PG_HOST}/{database}"
        env["ICEBATCH_BROKER_URL"] = f"{REDIS_URL}/{redis_db}"
    service = Service(env, tmp_path)
    service.mode = request.param  # type: ignore[attr-defined]
    try:
        yield service
    finally:
        service.stop()
        if database:
            drop_pg_database(database)
        if redis_db is not None:
            redis.Redis.from_url(f"{REDIS_URL}/{redis_db}").flushdb()
            redis.Redis.from_url(REDIS_URL).delete(f"icebatch-test-lock-{redis_db}")


def new_org() -> str:
    return f"org_{uuid.uuid4().hex[:8]}"
