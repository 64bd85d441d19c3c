"""`icebatch keys create|list|revoke`: API keys, straight in the metadata store (an operator's
commands: the first key of an org is made here)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from app.cli.server import migrate

keys = typer.Typer(
    help="API keys (operator commands: they use the metadata store directly).", no_args_is_help=True
)


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
