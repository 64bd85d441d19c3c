"""Fixtures: the two metadata stores (embedded SQLite, the machine's PostgreSQL + Redis), one
SparkSession for the whole run, API clients with keys, and an in-process job runner."""

from __future__ import annotations

import importlib
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
import redis
from fastapi.testclient import TestClient

PG_HOST = os.environ.get("ICEBATCH_TEST_PG", "postgresql://postgres@127.0.0.1:5432")
REDIS_URL = os.environ.get("ICEBATCH_TEST_REDIS", "redis://127.0.0.1:6379")
MODES = ("embedded", "postgres")


def reset_caches() -> None:
    """Forget every cached settings-derived object so a new environment takes effect."""
    from app.config import get_settings
    from app.db import get_engine, get_sessionmaker
    from app.jobs.broker import get_celery
    from app.lake.catalog import get_catalog

    if get_catalog.cache_info().currsize:
        get_catalog().engine.dispose()  # PyIceberg's own pool: close before forgetting it
    for cached in (get_settings, get_sessionmaker, get_catalog, get_celery):
        cached.cache_clear()
    try:
        get_engine().dispose()
    finally:
        get_engine.cache_clear()
        get_sessionmaker.cache_clear()


@dataclass
class Environment:
    """One metadata store + broker + warehouse, as ICEBATCH_* variables."""

    mode: str
    env: dict[str, str]
    migrated: bool = False

    def activate(self) -> None:
        os.environ.update(self.env)
        reset_caches()
        if not self.migrated:
            from app.cli import migrate

            migrate()
            self.migrated = True


def create_pg_database(prefix: str) -> str:
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{PG_HOST}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def drop_pg_database(name: str) -> None:
    with psycopg.connect(f"{PG_HOST}/postgres", autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
        )
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def free_redis_db() -> int:
    """A Redis database number for this run (CI and developers may share the server)."""
    client = redis.Redis.from_url(REDIS_URL)
    for number in range(15, 1, -1):
        if client.set(f"icebatch-test-lock-{number}", os.getpid(), nx=True, ex=3600):
            redis.Redis.from_url(f"{REDIS_URL}/{number}").flushdb()
            return number
    raise RuntimeError("no free Redis database for the tests")


@pytest.fixture(scope="session")
def base_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    saved = dict(os.environ)
    os.environ["ICEBATCH_SPARK_MASTER"] = "local[2]"
    os.environ["ICEBATCH_SPARK_DRIVER_MEMORY"] = "2g"
    yield {"ICEBATCH_SPARK_MASTER": "local[2]", "ICEBATCH_SPARK_DRIVER_MEMORY": "2g"}
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="session")
def environments(
    base_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Environment]]:
    embedded_home = tmp_path_factory.mktemp("embedded")
    pg_home = tmp_path_factory.mktemp("postgres")
    database = create_pg_database("icebatch_test")
    redis_db = free_redis_db()
    envs = {
        "embedded": Environment(
            "embedded",
            {
                **base_env,
                "ICEBATCH_HOME": str(embedded_home),
                "ICEBATCH_DATABASE_URL": "",
                "ICEBATCH_BROKER_URL": "",
                "ICEBATCH_WAREHOUSE": "",
                "ICEBATCH_CATALOG_NAME": "ib_embedded",
            },
        ),
        "postgres": Environment(
            "postgres",
            {
                **base_env,
                "ICEBATCH_HOME": str(pg_home),
                "ICEBATCH_DATABASE_URL": f"{PG_HOST}/{database}",
                "ICEBATCH_BROKER_URL": f"{REDIS_URL}/{redis_db}",
                "ICEBATCH_WAREHOUSE": (pg_home / "warehouse").as_uri(),
                "ICEBATCH_CATALOG_NAME": "ib_pg",
            },
        ),
    }
    yield envs
    reset_caches()
    drop_pg_database(database)
    redis.Redis.from_url(f"{REDIS_URL}/{redis_db}").flushdb()
    redis.Redis.from_url(REDIS_URL).delete(f"icebatch-test-lock-{redis_db}")


@pytest.fixture(params=MODES)
def stack(request: pytest.FixtureRequest, environments: dict[str, Environment]) -> Environment:
    """Each test using it runs once on embedded SQLite and once on PostgreSQL + Redis."""
    environment = environments[request.param]
    environment.activate()
    return environment


def new_key(org: str) -> str:
    from app.auth import create_key
    from app.db import session_scope

    with session_scope() as session:
        return create_key(session, org)


ClientFactory = Callable[..., TestClient]


@pytest.fixture
def client_for(stack: Environment) -> Iterator[ClientFactory]:
    """`client_for(org=None)`: an API client with a fresh key of `org` (new org by default)."""
    from app.main import create_app

    app = create_app()
    clients: list[TestClient] = []

    def make(org: str | None = None) -> TestClient:
        org = org or f"org_{uuid.uuid4().hex[:8]}"
        client = TestClient(app, headers={"Authorization": f"Bearer {new_key(org)}"})
        client.org = org  # type: ignore[attr-defined]
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(client_for: ClientFactory) -> TestClient:
    return client_for()


@pytest.fixture(scope="session")
def spark(base_env: dict[str, str]) -> Any:
    """The one SparkSession of the test run (local[2]), as a worker process would hold it."""
    from workers.spark.session import get_spark

    return get_spark()


@pytest.fixture
def run_jobs(spark: Any, stack: Environment) -> Callable[[], list[str]]:
    """Run every queued job in this process, as a worker would; returns the job ids run."""
    from sqlalchemy import select

    from app.db import session_scope
    from app.models import Job, JobState
    from workers.celery_app import celery

    for module in celery.conf.include:  # registers every task a worker has
        importlib.import_module(module)

    def run() -> list[str]:
        ran: list[str] = []
        while True:
            with session_scope() as session:
                rows = session.execute(
                    select(Job.id, Job.task_name).where(Job.state == JobState.QUEUED)
                ).all()
            if not rows:
                return ran
            for job_id, task_name in rows:
                celery.tasks[task_name](job_id)
                ran.append(job_id)

    return run
