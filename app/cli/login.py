"""`icebatch login`: check an API and key, and keep them in a profile."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from app.cli.base import Connection, cli
from app.cli.output import client_errors, stderr
from app.cli.profiles import profile_name, read_profiles, save_profile


@cli.command()
def login(
    ctx: typer.Context,
    url: Annotated[str | None, typer.Option(help="The Icebatch API.", show_default=False)] = None,
    api_key: Annotated[
        str | None,
        typer.Option(help="The API key (prompted, hidden, when not given).", show_default=False),
    ] = None,
) -> None:
    """Check an API url and key, then save them as a profile (--profile, default 'default')."""
    connection: Connection = ctx.obj
    name = profile_name(connection.profile)
    stored = read_profiles().get(name, {})
    url = (
        url
        or connection.url
        or os.environ.get("ICEBATCH_URL")
        or stored.get("url")
        or typer.prompt("API url", default="http://127.0.0.1:8000")
    )
    api_key = api_key or connection.api_key or typer.prompt("API key", hide_input=True)
    from icebatch_client import Icebatch

    with client_errors():
        datasets = sum(1 for _ in Icebatch(url, api_key, max_retries=1).iter_datasets())
    path = save_profile(name, url.rstrip("/"), api_key.strip())
    stderr.print(
        f"logged in to {url} ({datasets} dataset(s) visible); profile {name!r} saved in {path}",
        highlight=False,
    )
