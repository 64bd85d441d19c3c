"""Alembic up and down on both metadata stores."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.exc import DBAPIError

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
    "audit_events",
    "audit_archives",
    "cdc_tenants",
    "cdc_chunks",
    "cdc_identities",
    "cdc_deletions",
    "cdc_lag_samples",
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
    assert {"key_id", "stages"} <= columns  # 0008
    command.downgrade(config, "base")
    assert tables(database_url) == set()
    command.upgrade(config, "head")
    assert tables(database_url) == OURS


def test_0005_keeps_existing_keys_as_admin_and_the_audit_trail_append_only(
    database_url: str,
) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "0004")
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO api_keys (id, org, prefix, secret_hash, created_at) "
                    "VALUES ('k1', 'acme', 'p1', :h, :t)"
                ),
                {"h": "0" * 64, "t": "2026-01-01 00:00:00+00:00"},
            )
        command.upgrade(config, "0005")
        with engine.begin() as conn:
            row = conn.execute(text("SELECT org, scope, expires_at FROM api_keys")).one()
            assert tuple(row) == ("acme", "admin", None)
            conn.execute(
                text(
                    "INSERT INTO audit_events (at, org, key_id, action, method, path, target, "
                    "request_id, status_code, outcome) VALUES (:t, 'acme', 'k1', "
                    "'datasets.create', 'POST', '/v1/datasets', '{}', 'r1', 201, 'ok')"
                ),
                {"t": "2026-01-01 00:00:00+00:00"},
            )
        for statement in (
            "UPDATE audit_events SET outcome = 'error'",
            "DELETE FROM audit_events",
        ):
            with pytest.raises(DBAPIError, match="append-only"), engine.begin() as conn:
                conn.execute(text(statement))
        if engine.dialect.name == "postgresql":
            with pytest.raises(DBAPIError, match="append-only"), engine.begin() as conn:
                conn.execute(text("TRUNCATE audit_events"))
        with engine.connect() as conn:
            assert conn.execute(text("SELECT outcome FROM audit_events")).scalars().all() == ["ok"]
        command.downgrade(config, "0004")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT org FROM api_keys")).scalars().all() == ["acme"]
        assert "audit_events" not in tables(database_url)
        assert "scope" not in {c["name"] for c in inspect(engine).get_columns("api_keys")}
    finally:
        engine.dispose()
