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
    "forgotten_snapshots",
    "audit_events",
    "audit_archives",
    "cdc_tenants",
    "cdc_chunks",
    "cdc_identities",
    "cdc_deletions",
    "cdc_lag_samples",
    "cdc_source_keys",
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


def test_0011_lets_an_event_go_only_at_or_below_its_orgs_mark(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "0010")
    engine = create_engine(database_url)
    insert = text(
        "INSERT INTO audit_events (at, org, key_id, action, method, path, target, request_id, "
        "status_code, outcome) VALUES ('2026-01-01 00:00:00+00:00', :org, 'k1', "
        "'datasets.create', 'POST', '/v1/datasets', '{}', 'r1', 201, 'ok')"
    )

    def seqs() -> list[tuple[int, str]]:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT seq, org FROM audit_events ORDER BY seq"))
            return [(row[0], row[1]) for row in rows]

    def refused(statement: str, message: str = "append-only") -> None:
        with pytest.raises(DBAPIError, match=message), engine.begin() as conn:
            conn.execute(text(statement))

    try:
        with engine.begin() as conn:
            for org in ("acme", "acme", "acme", "other"):
                conn.execute(insert, {"org": org})
        command.upgrade(config, "0011")
        assert seqs() == [(1, "acme"), (2, "acme"), (3, "acme"), (4, "other")]
        refused("DELETE FROM audit_events WHERE org = 'acme'")  # no mark yet
        with engine.begin() as conn:
            conn.execute(
                text("INSERT INTO audit_archives VALUES ('acme', 2, '2026-01-02 00:00:00+00:00')")
            )
        refused("DELETE FROM audit_events WHERE org = 'acme'")  # seq 3 is above the mark
        refused("DELETE FROM audit_events WHERE org = 'other'")  # another org's mark is not its
        refused("UPDATE audit_events SET outcome = 'error' WHERE seq = 1")
        refused("UPDATE audit_archives SET archived_through_seq = 1", "only moves forward")
        refused("DELETE FROM audit_archives", "only moves forward")
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM audit_events WHERE org = 'acme' AND seq <= 2"))
            conn.execute(text("UPDATE audit_archives SET archived_through_seq = 3"))
            conn.execute(text("DELETE FROM audit_events WHERE seq = 3"))
            conn.execute(
                text("INSERT INTO audit_archives VALUES ('other', 4, '2026-01-02 00:00:00+00:00')")
            )
            conn.execute(text("DELETE FROM audit_events WHERE seq = 4"))  # the largest
        assert seqs() == []
        with engine.begin() as conn:
            conn.execute(insert, {"org": "acme"})  # a deleted seq is never given again
        assert seqs() == [(5, "acme")]
        command.downgrade(config, "0010")
        refused("DELETE FROM audit_events WHERE seq = 5")
        assert "audit_archives" not in tables(database_url)
        assert seqs() == [(5, "acme")]
    finally:
        engine.dispose()
