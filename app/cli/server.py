"""`icebatch up|api|worker|migrate`: run the product's processes and migrate the metadata store."""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.base import cli

if TYPE_CHECKING:  # the server stack is imported by the server commands only (fast client CLI)
    from alembic.config import Config
    from sqlalchemy import Connection

Port = Annotated[int, typer.Option(help="Port of the HTTP API.")]
Host = Annotated[str, typer.Option(help="Address the HTTP API binds.")]
log = logging.getLogger("icebatch")


def alembic_config(url: str | None = None) -> Config:
    from alembic.config import Config

    from app.config import PROJECT_ROOT, get_settings

    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    config.set_main_option(
        "sqlalchemy.url", (url or get_settings().sqlalchemy_url).replace("%", "%%")
    )
    return config


def new_store() -> bool:
    """Whether the embedded store (a SQLite metadata store) is still to be created."""
    from sqlalchemy.engine import make_url

    from app.config import get_settings

    url = make_url(get_settings().database_url)
    return (
        url.get_backend_name() == "sqlite"
        and bool(url.database)
        and not (Path(url.database or "").exists())
    )


@cli.command()
def migrate() -> None:
    """Bring the metadata store to the newest schema and create the Iceberg catalog tables."""
    from alembic import command

    from app.config import get_settings
    from app.jobs.broker import declare_queue

    with _one_at_a_time():  # commands started together on a new home: one creates, the rest see
        creating = new_store()
        _upgrade(command)
        if not _catalog_made():
            from app.lake.catalog import get_catalog

            get_catalog()  # PyIceberg's SqlCatalog creates its tables if they are missing
        declare_queue(get_settings())  # the embedded broker's queue, before its users race on it
    if creating:  # once per store, by whichever command made it (`up`, `keys create`, ...); a
        # log line like the service's others (JSON when stderr is not a terminal)
        log.info("created store at %s", get_settings().home)


# the tables PyIceberg's SqlCatalog makes on the store (checked against it by a test)
CATALOG_TABLES = ("iceberg_tables", "iceberg_namespace_properties")


@contextmanager
def _store_connection() -> Iterator[Connection]:
    """A connection of its own to the metadata store, closed with the block (no pool kept)."""
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    from app.config import get_settings

    engine = create_engine(get_settings().sqlalchemy_url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            yield connection
    finally:
        engine.dispose()


def _catalog_made() -> bool:
    """Whether the Iceberg catalog's tables are on the store already: a command on a current
    store (`keys create`, each `api` and `worker` start) then skips loading PyIceberg for it."""
    from sqlalchemy import inspect

    with _store_connection() as connection:
        present = set(inspect(connection).get_table_names())
    return present.issuperset(CATALOG_TABLES)


def _upgrade(command: ModuleType) -> None:
    """Alembic's upgrade to head. A store that cannot be reached fails as such (its connection
    is tried first); any failure after that is the migration's, and says so: a half-made or
    foreign schema is not an outage."""
    from sqlalchemy.exc import SQLAlchemyError

    from app.cli.errors import MigrationFailed

    with _store_connection():
        pass  # reachable, or the connection's own error ("cannot reach the metadata store")
    try:
        command.upgrade(alembic_config(), "head")
    except SQLAlchemyError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MigrationFailed(
            f"migrating the metadata store to the newest schema failed ({first}); it was "
            "reached, so check its schema against `alembic_version` (ICEBATCH_DATABASE_URL)"
        ) from exc


@contextmanager
def _one_at_a_time() -> Iterator[None]:
    """Migrations one at a time, for the length of the block: `icebatch api`, `icebatch worker`
    and `keys create` started together on a new home, or several API and worker replicas
    started together on a new (or older) PostgreSQL store, would otherwise run the migrations
    side by side, and all but one fail on a half-made schema (on PostgreSQL: `duplicate key
    value violates unique constraint "pg_type_typname_nsp_index"`). An embedded (SQLite) store:
    an exclusive lock on a file beside it. PostgreSQL: a session advisory lock, held by a
    connection of its own and released when it closes (a killed command's with it)."""
    from sqlalchemy.engine import make_url

    from app.config import get_settings

    url = make_url(get_settings().sqlalchemy_url)
    backend = url.get_backend_name()
    if backend == "postgresql":
        with _advisory_lock():
            yield
        return
    if backend != "sqlite" or not url.database:
        yield
        return
    path = Path(f"{url.database}.migrate-lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield


# the advisory lock's key: any 64-bit number no other user of the database takes ("icebatch")
MIGRATE_LOCK_KEY = int.from_bytes(b"icebatch", "big") >> 1


@contextmanager
def _advisory_lock() -> Iterator[None]:
    from sqlalchemy import text

    with _store_connection() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATE_LOCK_KEY})
        connection.commit()  # the lock is the session's, not the transaction's
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATE_LOCK_KEY})
            connection.commit()


def _worker_argv(concurrency: int, beat: bool = False) -> list[str]:
    """A worker as a process of its own (`icebatch up`'s child)."""
    return [sys.executable, "-m", "celery", *_celery_args(concurrency, beat)]


def _celery_args(concurrency: int, beat: bool) -> list[str]:
    """Celery's command line of a worker, after `celery`."""
    from app.config import get_settings

    # `-B`: Celery's embedded beat sends `icebatch.schedule` (automatic maintenance) periodically
    extra = ["-B", "--schedule", str(get_settings().home / "celerybeat-schedule")] if beat else []
    return [
        "-A",
        "workers.celery_app",
        "--quiet",  # no banner on stdout: every line is a log line (workers/celery_app.py)
        "worker",
        "--pool",
        "solo" if concurrency == 1 else "threads",
        "--concurrency",
        str(concurrency),
        "--queues",
        "icebatch",
        "--loglevel",
        "INFO",
        "--without-gossip",
        "--without-mingle",
        *extra,
    ]


Workers = Annotated[
    int, typer.Option(help="API processes sharing the port (one per core is a good start).")
]


def _api_argv(host: str, port: int, workers: int = 1) -> list[str]:
    serve = ["serve", "--host", host, "--port", str(port), "--workers", str(workers)]
    return [sys.executable, "-m", "app.cli", *serve]


@cli.command(hidden=True)
def serve(host: Host = "127.0.0.1", port: Port = 8000, workers: Workers = 1) -> None:
    """Uvicorn in this process, logging through Icebatch's configuration (`api` runs this)."""
    import uvicorn

    from app.config import get_settings

    # no --limit-concurrency: it counts idle keep-alive connections too; requests in flight
    # are bounded by app.limits.admission instead
    uvicorn.run(
        "app.main:app",
        host=host,
        port=port,
        workers=workers,
        log_config=None,
        timeout_keep_alive=get_settings().api_keepalive_seconds,
    )


@cli.command()
def api(host: Host = "127.0.0.1", port: Port = 8000, workers: Workers = 1) -> None:
    """Run the HTTP API only (production: workers run apart)."""
    migrate()
    # uvicorn in this process: what the migration imported (SQLAlchemy, the settings, the
    # models) is not imported again by a second interpreter (2.2 -> 1.6 s of CPU a start)
    serve(host, port, workers)


@cli.command()
def worker(
    concurrency: Annotated[int, typer.Option(help="Jobs at once in this process.")] = 1,
    beat: Annotated[
        bool, typer.Option(help="Also run the maintenance scheduler (one worker per deployment).")
    ] = False,
) -> None:
    """Run one worker process: Celery consumer, long-lived SparkSession, reconciler (at the
    CPU priority ICEBATCH_WORKER_NICE, 10 by default: Spark yields the CPU to the API)."""
    migrate()
    worker_priority()
    # Celery in this process: what the migration imported is not imported again by a second
    # interpreter (2.0 -> 1.5 s of CPU a start)
    from celery.bin.celery import main

    sys.argv = ["celery", *_celery_args(concurrency, beat)]
    main()


def worker_priority() -> None:
    """Lower this process's CPU priority to ICEBATCH_WORKER_NICE (never raise it); what it
    starts (Spark's JVM) inherits it."""
    from app.config import get_settings

    wanted = get_settings().worker_nice
    current = os.nice(0)
    if wanted > current:
        os.nice(wanted - current)
    if os.getsid(0) == os.getpid():
        session_priority(wanted)


def session_priority(wanted: int) -> None:
    """Lower the CPU share of this process's session to `wanted` (never raise it). Linux shares
    the CPU between sessions first (autogroup, on by default) and by nice only within one, so a
    worker leading its own session (a supervisor's, systemd's, `setsid`) would otherwise get as
    much CPU as the API's session however nice it is. No-op where the kernel has no autogroup."""
    path = Path("/proc/self/autogroup")  # "/autogroup-42 nice 0"
    try:
        current = int(path.read_text().split()[-1])
        if wanted > current:
            path.write_text(f"{wanted}\n")
    except (OSError, ValueError, IndexError):
        return


@cli.command()
def up(host: Host = "127.0.0.1", port: Port = 8000) -> None:
    """Run API and one worker together (embedded mode needs no settings)."""
    from app.config import get_settings

    settings = get_settings()
    migrate()
    log.info("icebatch up: home %s, API on http://%s:%s", settings.home, host, port)
    children = [
        subprocess.Popen(_worker_argv(1, beat=True), preexec_fn=worker_priority),  # noqa: PLW1509
        subprocess.Popen(_api_argv(host, port)),
    ]

    # the children asked to stop, each once: a second SIGTERM that lands while a child's Python
    # finalizes (CPython puts SIGTERM's default action back then) kills it mid-exit
    stopped: set[int] = set()

    def stop(*_: object) -> None:
        for child in children:
            if child.poll() is None and child.pid not in stopped:
                stopped.add(child.pid)
                child.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        while all(child.poll() is None for child in children):
            time.sleep(0.5)
    finally:
        stop()
        for child in children:
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    worker, api_process = children
    log.info(
        "icebatch up: worker exited %s, API exited %s", worker.returncode, api_process.returncode
    )
    raise typer.Exit(max(_exit_code(child, child.pid in stopped) for child in children))


def _exit_code(child: subprocess.Popen[bytes], asked_to_stop: bool) -> int:
    """A child's exit as a shell reports it (128 + the signal that ended it). Ending on the
    SIGTERM `up` sent it is a clean stop: uvicorn re-raises the signal once it has shut down."""
    code = child.returncode or 0
    if code == -signal.SIGTERM and asked_to_stop:
        return 0
    return 128 - code if code < 0 else code
