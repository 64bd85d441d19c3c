"""An API process on PostgreSQL opens its pool's connections when it starts
(ICEBATCH_DB_POOL_PREFILL, on by default; the tests' environments turn it off): the first burst of
requests then does not wait for PostgreSQL to start backends (bench/RESULTS.md, API polling)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlalchemy.pool import QueuePool

ON_POSTGRES = pytest.mark.parametrize("stack", ["postgres"], indirect=True)


@pytest.fixture
def pool_of_three(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from tests.fixtures.environments import reset_caches

    monkeypatch.setenv("ICEBATCH_DB_POOL_SIZE", "3")
    reset_caches()
    yield
    monkeypatch.undo()
    reset_caches()


def pool(engine: Engine) -> QueuePool:
    assert isinstance(engine.pool, QueuePool)
    return engine.pool


def backends() -> int:
    """Connections to the metadata store's database open on the server now."""
    from app.config import get_settings

    url = get_settings().database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    return int(row[0])


@ON_POSTGRES
def test_an_api_process_opens_its_pool_as_it_starts(
    stack: object, pool_of_three: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.db import get_engine
    from app.main import create_app

    monkeypatch.setenv("ICEBATCH_DB_POOL_PREFILL", "true")
    from tests.fixtures.environments import reset_caches

    reset_caches()
    before = backends()
    with TestClient(create_app()):
        deadline = time.monotonic() + 10
        while pool(get_engine()).checkedin() < 3:
            assert time.monotonic() < deadline, "the pool was not filled"
            time.sleep(0.05)
        assert backends() >= before + 3  # open on the server, kept in the pool
        assert pool(get_engine()).checkedout() == 0  # given back


@ON_POSTGRES
def test_with_the_prefill_off_the_pool_fills_on_demand(stack: object, pool_of_three: None) -> None:
    from app.db import get_engine
    from app.main import create_app

    with TestClient(create_app()):
        time.sleep(0.5)
        assert pool(get_engine()).checkedin() == 0


def test_a_store_that_is_away_leaves_the_pool_to_fill_on_demand(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from app.db import make_engine, prefill

    engine = make_engine("postgresql+psycopg://postgres@127.0.0.1:1/none")
    prefill(engine, 3)  # does not raise: the API starts, its readiness says the store is away
    assert pool(engine).checkedin() == 0
    assert "metadata store away" in caplog.text
