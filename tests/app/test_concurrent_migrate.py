"""Commands started together on a new store — an embedded home (`icebatch api` and `icebatch
worker` from two terminals, a `keys create` beside them), or a new PostgreSQL database (API and
worker replicas of a deployment) — each bring it to the newest schema: the first migrates, the
others find it done, none fails on a half-made schema. And a migration that fails on a store it
reached says so, not that the store is down."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.environments import (
    PG_HOST,
    REDIS_URL,
    create_pg_database,
    drop_pg_database,
)

ICEBATCH = str(Path(sys.executable).with_name("icebatch"))
STORE_VARIABLES = ("ICEBATCH_DATABASE_URL", "ICEBATCH_BROKER_URL", "ICEBATCH_WAREHOUSE")


def _together(env: dict[str, str]) -> list[tuple[str, int]]:
    """Two `icebatch migrate` and two `keys create --org acme`, started at once: (stderr, exit)."""
    commands = [[ICEBATCH, "migrate"]] * 2 + [[ICEBATCH, "keys", "create", "--org", "acme"]] * 2
    procs = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for argv in commands
    ]
    return [(p.communicate(timeout=120)[1].decode(), p.returncode) for p in procs]


def _both_keys_listed(env: dict[str, str]) -> None:
    listed = subprocess.run(
        [ICEBATCH, "keys", "list", "--org", "acme"], env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("acme") >= 2, listed.stdout  # both keys were stored


def test_commands_started_together_on_a_new_home_all_migrate(tmp_path: Path) -> None:
    env = {**os.environ, "ICEBATCH_HOME": str(tmp_path / "home")}
    for key in STORE_VARIABLES:
        env.pop(key, None)
    outcomes = _together(env)
    assert [code for _, code in outcomes] == [0] * len(outcomes), outcomes
    created = [err for err, _ in outcomes if "created store at" in err]
    assert len(created) == 1, outcomes  # one command made the store; the others found it
    _both_keys_listed(env)


@pytest.fixture
def new_postgres_database() -> Iterator[str]:
    name = create_pg_database("icebatch_migrate")
    try:
        yield name
    finally:
        drop_pg_database(name)


def test_commands_started_together_on_a_new_postgres_store_all_migrate(
    tmp_path: Path, new_postgres_database: str
) -> None:
    """Without the advisory lock, three of four failed here: `duplicate key value violates
    unique constraint "pg_type_typname_nsp_index"` (each creating `alembic_version`)."""
    env = {
        **os.environ,
        "ICEBATCH_HOME": str(tmp_path / "home"),
        "ICEBATCH_DATABASE_URL": f"{PG_HOST}/{new_postgres_database}",
        "ICEBATCH_BROKER_URL": f"{REDIS_URL}/1",  # not used: a Redis broker needs no queue made
        "ICEBATCH_WAREHOUSE": (tmp_path / "warehouse").as_uri(),
    }
    outcomes = _together(env)
    assert [code for _, code in outcomes] == [0] * len(outcomes), outcomes
    _both_keys_listed(env)


def test_a_migration_that_fails_on_a_reached_store_says_so(tmp_path: Path) -> None:
    """A store whose schema is ahead of what `alembic_version` says (here: the newest migration
    applied, the version set back one): the upgrade fails on it, and the user is told that the
    migration failed, not that the store cannot be reached (exit 1, not 5)."""
    from alembic.script import ScriptDirectory

    from app.cli.server import alembic_config

    env = {**os.environ, "ICEBATCH_HOME": str(tmp_path / "home")}
    for key in STORE_VARIABLES:
        env.pop(key, None)
    made = subprocess.run([ICEBATCH, "migrate"], env=env, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    newest = script.get_current_head()
    assert newest is not None
    head = script.get_revision(newest)
    assert head is not None
    assert isinstance(head.down_revision, str)
    with sqlite3.connect(tmp_path / "home" / "icebatch.db") as store:
        store.execute("UPDATE alembic_version SET version_num = ?", (head.down_revision,))
    failed = subprocess.run([ICEBATCH, "migrate"], env=env, capture_output=True, text=True)
    assert failed.returncode == 1, failed.stderr
    lines = failed.stderr.strip().splitlines()
    assert "Traceback" not in failed.stderr, failed.stderr
    assert len(lines) == 1, failed.stderr
    assert lines[0].startswith(
        "error: migrating the metadata store to the newest schema failed ("
    ), lines[0]
    assert "cannot reach" not in lines[0]


def test_the_catalog_tables_migrate_looks_for_are_pyicebergs() -> None:
    """`icebatch migrate` skips loading the Iceberg catalog when its tables are on the store: the
    names it looks for are the ones PyIceberg's SqlCatalog makes."""
    from pyiceberg.catalog.sql import IcebergNamespaceProperties, IcebergTables

    from app.cli.server import CATALOG_TABLES

    made = {IcebergTables.__tablename__, IcebergNamespaceProperties.__tablename__}
    assert set(CATALOG_TABLES) == made
