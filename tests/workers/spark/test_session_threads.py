"""The worker's one SparkSession serves every thread of the process: the warm-up builds it in a
thread of its own (`workers/spark/warmup.py`) and jobs run in another (the solo pool's main
thread, or the thread pool's). Spark resolves a catalog through the calling thread's active
session: a thread with none saw only `spark_catalog`, and every job whose first use of Spark was
the Java API (materialize, vacuum, compact) failed in a fresh `icebatch up`
("[REQUIRES_SINGLE_PART_NAMESPACE] spark_catalog requires a single-part namespace") once small
ingests no longer started Spark in the job's thread."""

from __future__ import annotations

import threading
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
