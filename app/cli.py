"""`icebatch`: run the product (up, api, worker), manage keys, migrate the metadata store, check
its consistency (doctor)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from typing import Annotated

import typer
from alembic import command
from alembic.config import Config

from app.config import PROJECT_ROOT, get_settings
from app.logs import configure_logging

cli = typer.Typer(help="Icebatch: a batch control plane for Apache Iceberg.", no_args_is_help=True)
keys = typer.Typer(help="API keys.", no_args_is_help=True)
cli.add_typer(keys, name="keys")

Port = Annotated[int, typer.Option(help="Port of the HTTP API.")]
Host = Annotated[str, typer.Option(help="Address the HTTP API binds.")]
log = logging.getLogger("icebatch")


@cli.callback()
def _logging() -> None:
    """Every command logs in the configured format (ICEBATCH_LOG_FORMAT)."""
    configure_logging()


def alembic_config(url: str | None = None) -> Config:
    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    config.set_main_option(
        "sqlalchemy.url", (url or get_settings().sqlalchemy_url).replace("%", "%%")
    )
    return config


@cli.command()
def migrate() -> None:
    """Bring the metadata store to the newest schema and create the Iceberg catalog tables."""
    from app.lake.catalog import get_catalog

    command.upgrade(alembic_config(), "head")
    get_catalog()  # PyIceberg's SqlCatalog creates iceberg_tables & co. if they are missing


def _worker_argv(concurrency: int, beat: bool = False) -> list[str]:
    # `-B`: Celery's embedded beat sends `icebatch.schedule` (automatic maintenance) periodically
    extra = ["-B", "--schedule", str(get_settings().home / "celerybeat-schedule")] if beat else []
    return [
        sys.executable,
        "-m",
        "celery",
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


def _api_argv(host: str, port: int) -> list[str]:
    return [sys.executable, "-m", "app.cli", "serve", "--host", host, "--port", str(port)]


@cli.command(hidden=True)
def serve(host: Host = "127.0.0.1", port: Port = 8000) -> None:
    """Uvicorn in this process, logging through Icebatch's configuration (`api` runs this)."""
    import uvicorn

    # in-flight requests never outnumber pooled connections: each holds at most one, so none
    # waits for a connection held by a request that waits for a thread (503 beyond the limit)
    settings = get_settings()
    limit = settings.db_pool_size + settings.db_max_overflow
    uvicorn.run("app.main:app", host=host, port=port, limit_concurrency=limit, log_config=None)


@cli.command()
def api(host: Host = "127.0.0.1", port: Port = 8000) -> None:
    """Run the HTTP API only (production: workers run apart)."""
    migrate()
    os.execv(sys.executable, _api_argv(host, port))


@cli.command()
def worker(
    concurrency: Annotated[int, typer.Option(help="Jobs at once in this process.")] = 1,
    beat: Annotated[
        bool, typer.Option(help="Also run the maintenance scheduler (one worker per deployment).")
    ] = False,
) -> None:
    """Run one worker process: Celery consumer, long-lived SparkSession, reconciler."""
    migrate()
    os.execv(sys.executable, _worker_argv(concurrency, beat))


@cli.command()
def up(host: Host = "127.0.0.1", port: Port = 8000) -> None:
    """Run API and one worker together (embedded mode needs no settings)."""
    settings = get_settings()
    migrate()
    log.info("icebatch up: home %s, API on http://%s:%s", settings.home, host, port)
    children = [
        subprocess.Popen(_worker_argv(1, beat=True)),
        subprocess.Popen(_api_argv(host, port)),
    ]

    def stop(*_: object) -> None:
        for child in children:
            if child.poll() is None:
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
    raise typer.Exit(max(child.returncode or 0 for child in children))


@keys.command("create")
def create_key(
    org: Annotated[str, typer.Option(help="The organization the key acts for.")],
    scope: Annotated[
        str, typer.Option(help="read, write or admin (each includes the ones before it).")
    ] = "admin",
    expires_in: Annotated[
        str | None, typer.Option(help="Lifetime, e.g. 30d, 12h (default: never expires).")
    ] = None,
    name: Annotated[str | None, typer.Option(help="What the key is for.")] = None,
) -> None:
    """Create an API key; it is printed once, as the last line."""
    from app.db import session_scope
    from app.errors import AppError
    from app.keys import service
    from app.models import Scope

    if scope not in {s.value for s in Scope}:
        typer.echo(f"error: --scope is read, write or admin, not {scope!r}", err=True)
        raise typer.Exit(2)
    migrate()
    try:
        with session_scope() as session:
            created = service.create(session, org, Scope(scope), name, expires_in)
    except AppError as exc:
        typer.echo(f"error: {exc.detail}", err=True)
        raise typer.Exit(2) from None
    until = f", expires {created.expires_at:%Y-%m-%d %H:%M} UTC" if created.expires_at else ""
    typer.echo(
        f"API key {created.id} ({scope}{until}) for org {org!r} "
        "(store it now, it is not shown again):",
        err=True,
    )
    typer.echo(created.key)


def _when(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d %H:%M}" if value is not None else "-"


@keys.command("list")
def list_keys(
    org: Annotated[str | None, typer.Option(help="Only this organization's keys.")] = None,
) -> None:
    """List keys (never their secrets): id, prefix, org, scope, dates, last use (UTC)."""
    from rich.console import Console
    from rich.table import Table

    from app.db import session_scope
    from app.keys import service

    migrate()
    with session_scope() as session:
        rows = service.list_keys(session, org)
    table = Table(
        "id",
        "prefix",
        "org",
        "scope",
        "name",
        "created",
        "expires",
        "revoked",
        "last used",
        box=None,
    )
    for key in rows:
        table.add_row(
            key.id,
            key.prefix,
            key.org,
            key.scope,
            key.name or "-",
            _when(key.created_at),
            _when(key.expires_at),
            _when(key.revoked_at),
            _when(key.last_used_at),
        )
    Console(width=200).print(table)


@keys.command("revoke")
def revoke_key(key_id: Annotated[str, typer.Argument(help="The key's id (keys list).")]) -> None:
    """Revoke a key: it answers 401 from the next request on."""
    from app.db import session_scope
    from app.errors import AppError
    from app.keys import service

    migrate()
    try:
        with session_scope() as session:
            key = service.revoke(session, None, key_id)
    except AppError as exc:
        typer.echo(f"error: {exc.detail.replace(' in your organization', '')}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"revoked {key.id} (org {key.org!r}, {key.scope}) at {_when(key.revoked_at)} UTC")


@cli.command()
def doctor(
    repair: Annotated[
        bool, typer.Option("--repair", help="Also repair what the system itself would repair.")
    ] = False,
    org: Annotated[str | None, typer.Option(help="Check only this org's datasets.")] = None,
    dataset: Annotated[
        str | None, typer.Option(help="Check one dataset: its id (or its name, with --org).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Check that the metadata store, the Iceberg catalog and the warehouse agree.

    Exits 0 when healthy, 1 when problems remain (after --repair: those that need a human), 2
    when --dataset names no dataset.
    """
    from app.doctor import report, service

    outcome = service.run(org=org, dataset=dataset, fix=repair)
    if dataset is not None and not outcome.datasets_checked:
        typer.echo(f"error: no dataset {dataset!r}" + (f" in org {org!r}" if org else ""), err=True)
        raise typer.Exit(2)
    typer.echo(report.as_json(outcome) if as_json else report.text(outcome))
    raise typer.Exit(0 if outcome.healthy else 1)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
