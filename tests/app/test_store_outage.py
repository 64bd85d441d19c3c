"""The API while its metadata store is down: 503 + Retry-After as problem+json, fast, never a 500;
/readyz names the database; /healthz stays up. (The store is a port nobody listens on; the
restart of a real PostgreSQL mid-workload is in tests/e2e/test_infra_faults.py.)"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from tests.fixtures.environments import Environment, reset_caches
from tests.fixtures.service import free_port


@pytest.fixture
def api_without_store(tmp_path: Path) -> Iterator[TestClient]:
    saved = dict(os.environ)
    os.environ.update(
        {
            "ICEBATCH_HOME": str(tmp_path),
            "ICEBATCH_DATABASE_URL": f"postgresql://postgres@127.0.0.1:{free_port()}/icebatch",
            "ICEBATCH_BROKER_URL": f"redis://127.0.0.1:{free_port()}/0",
            "ICEBATCH_WAREHOUSE": "",
            "ICEBATCH_STORE_RETRY_AFTER_SECONDS": "7",
        }
    )
    reset_caches()
    from app.main import create_app

    key = "ib_0123456789ab_secret"  # well-formed, so the key is looked up in the store
    try:
        with TestClient(create_app(), headers={"Authorization": f"Bearer {key}"}) as client:
            yield client
    finally:
        os.environ.clear()
        os.environ.update(saved)
        reset_caches()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v1/datasets", None),
        ("GET", "/v1/jobs/j1", None),
        ("POST", "/v1/batches", {"dataset_id": "d1", "format": "csv"}),
        ("POST", "/v1/privacy/jobs", {"dataset_ids": ["d1"], "column": "u", "values": ["x"]}),
    ],
)
def test_requests_answer_503_with_retry_after(
    api_without_store: TestClient, method: str, path: str, body: dict[str, object] | None
) -> None:
    started = time.monotonic()
    response = api_without_store.request(method, path, json=body)
    assert time.monotonic() - started < 10
    assert response.status_code == 503, response.text
    assert response.headers["Retry-After"] == "7"
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == "https://icebatch.dev/problems/store-unavailable"
    assert problem["status"] == 503
    assert problem["retry_after_seconds"] == 7
    assert "retry the request after 7 s" in problem["detail"]


def test_readiness_says_the_database_is_down(api_without_store: TestClient) -> None:
    assert api_without_store.get("/healthz").status_code == 200
    ready = api_without_store.get("/readyz")
    assert ready.status_code == 503
    checks = ready.json()["checks"]
    assert checks["database"].startswith("down: OperationalError")
    assert checks["catalog"].startswith("down")


def test_postgres_sessions_carry_the_statement_timeout(stack: Environment) -> None:
    """A statement stuck on a wedged store ends after db_statement_timeout_seconds (120 s by
    default); migrations are exempt."""
    from app.config import get_settings
    from app.db import get_engine, make_engine

    if stack.mode != "postgres":
        pytest.skip("SQLite has no statement timeout")
    with get_engine().connect() as conn:
        assert conn.execute(text("SHOW statement_timeout")).scalar() == "2min"
    migrations = make_engine(get_settings().sqlalchemy_url, statement_timeout=False)
    try:
        with migrations.connect() as conn:
            assert conn.execute(text("SHOW statement_timeout")).scalar() == "0"
    finally:
        migrations.dispose()
