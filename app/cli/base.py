"""The `icebatch` command: its root, global options and the connection the client commands use.

Client commands (datasets, batches, privacy, vacuum, compact, changes, jobs) talk HTTP through
the SDK (`icebatch_client`), never to the database. Their API and key come from, in order:
`--url`/`--api-key`, `ICEBATCH_URL`/`ICEBATCH_API_KEY`, the profile file `icebatch login` wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from icebatch_client import Icebatch

# the commands that talk to the API through the SDK only
CLIENT_COMMANDS = frozenset(
    {"datasets", "batches", "privacy", "jobs", "cdc", "changes", "vacuum", "compact", "login"}
)
cli = typer.Typer(
    help="Icebatch: a batch control plane for Apache Iceberg.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@dataclass
class Connection:
    """Where the client commands connect, as the global options said (None: not given)."""

    url: str | None = None
    api_key: str | None = None
    profile: str | None = None

    def client(self) -> Icebatch:
        """An SDK client for the resolved API and key (exits 2 with how to set them when
        neither is known)."""
        from app.cli.profiles import resolve

        return resolve(self.url, self.api_key, self.profile)


@cli.callback()
def root(
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option(
            help="The Icebatch API (else ICEBATCH_URL, else the profile).", show_default=False
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            help="An API key (else ICEBATCH_API_KEY, else the profile).", show_default=False
        ),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            help="The profile of `icebatch login` to use (else ICEBATCH_PROFILE, else 'default')."
        ),
    ] = None,
) -> None:
    """The server commands log in the configured format (ICEBATCH_LOG_FORMAT); the client
    commands never import the server stack (structlog, SQLAlchemy, Spark...): they start fast."""
    if ctx.invoked_subcommand not in CLIENT_COMMANDS:
        from app.logs import configure_logging

        configure_logging()
    ctx.obj = Connection(url, api_key, profile)
