"""The worker's one SparkSession serves every thread of the process: the warm-up builds it in a
thread of its own (`workers/spark/warmup.py`) and jobs run in another (the solo pool's main
thread, or the thread pool's). Spark resolves a catalog through the calling thread's active
session: a thread with none saw only `spark_catalog`, and every job whose first use of Spark was
the Java API (materialize, vacuum, compact) failed in a fresh `icebatch up`
("[REQUIRES_SINGLE_PART_NAMESPACE] spark_catalog requires a single-part namespace") once small
ingests no longer started Spark in the job's thread."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment

pytestmark = pytest.mark.spark


def test_a_new_thread_loads_a_table_through_the_java_api(
    spark: Any, stack: Environment, client: TestClient
) -> None:
    from app.config import get_settings
    from workers.spark import iceberg_java
    from workers.spark.session import get_spark

    identifier = client.post("/v1/datasets", json=EVENTS).json()["table"].split(".", 1)[1]
    seen: dict[str, str] = {}

    def job() -> None:  # a thread that has not touched Spark before, as a job's
        try:
            seen["name"] = str(iceberg_java.load_table(get_spark(), identifier).name())
        except Exception as exc:  # the assertion below shows it
            seen["error"] = str(exc)[:300]

    thread = threading.Thread(target=job)
    thread.start()
    thread.join(timeout=120)
    assert seen == {"name": f"{get_settings().catalog_name}.{identifier}"}


def test_a_store_away_when_the_catalog_first_loads_fails_as_an_outage(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker whose JVM starts while the metadata store is away (its first job during a
    PostgreSQL restart): the job's first use of the catalog fails as a store outage, which the
    worker waits out and resumes without spending an attempt — not as Spark's
    `REQUIRES_SINGLE_PART_NAMESPACE`, which it cannot know (a materializer spent an attempt so in
    tests/e2e/test_infra_faults.py)."""
    from py4j.protocol import Py4JJavaError

    from tests.fixtures.environments import reset_caches
    from tests.fixtures.service import free_port
    from workers.outage import is_outage
    from workers.spark import iceberg_java
    from workers.spark.session import get_spark

    away = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/away"
    monkeypatch.setenv("ICEBATCH_DATABASE_URL", away)
    monkeypatch.setenv("ICEBATCH_CATALOG_NAME", f"away_{uuid.uuid4().hex[:8]}")
    reset_caches()
    try:
        with pytest.raises(Py4JJavaError) as caught:
            iceberg_java.load_table(get_spark(), "org_x.t")
        assert is_outage(caught.value), str(caught.value)[:500]
    finally:
        monkeypatch.undo()
        reset_caches()
