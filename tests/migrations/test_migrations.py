"""Alembic up and down on both metadata stores."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect

from app.cli import alembic_config
from tests.fixtures.environments import PG_HOST, create_pg_database, drop_pg_database

OURS = {
    "api_keys",
    "datasets",
    "batches",
    "batch_files",
    "jobs",
    "outbox",
    "idempotency_keys",
    "restatements",
    "privacy_jobs",
    "commit_leases",
    "consumers",
    "expired_snapshots",
}


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> object:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'meta.db'}"
        return
    name = create_pg_database("icebatch_migrations")
    try:
        yield f"postgresql+psycopg://{PG_HOST.removeprefix('postgresql://')}/{name}"
    finally:
        drop_pg_database(name)


def tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "head")
    assert tables(database_url) == OURS
    engine = create_engine(database_url)
    columns = {c["name"] for c in inspect(engine).get_columns("jobs")}
    engine.dispose()
    assert {"state", "stage", "progress", "attempt", "heartbeat_at", "request_id"} <= columns
    command.downgrade(config, "base")
    assert tables(database_url) == set()
    command.upgrade(config, "head")
    assert tables(database_url) == OURS
