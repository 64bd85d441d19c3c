"""Where the client commands connect: flags, then ICEBATCH_URL / ICEBATCH_API_KEY, then the
profile file `icebatch login` writes (`$ICEBATCH_CONFIG`, else
`$XDG_CONFIG_HOME/icebatch/config.toml`, else `~/.config/icebatch/config.toml`; mode 0600)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from icebatch_client import Icebatch

DEFAULT_PROFILE = "default"
POLL_SECONDS = 0.4  # between two reads of a batch or job the CLI waits for


def config_path() -> Path:
    """The profile file (it may not exist yet)."""
    explicit = os.environ.get("ICEBATCH_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "icebatch" / "config.toml"


def profile_name(profile: str | None) -> str:
    """The profile asked for: the flag, else ICEBATCH_PROFILE, else 'default'."""
    return profile or os.environ.get("ICEBATCH_PROFILE") or DEFAULT_PROFILE


def read_profiles() -> dict[str, dict[str, str]]:
    """Every profile of the file, by name ({} when there is no file)."""
    path = config_path()
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        typer.echo(f"error: {path} is not valid TOML ({exc}): fix or delete it", err=True)
        raise typer.Exit(2) from None
    return {name: {k: str(v) for k, v in table.items()} for name, table in data.items()}


def save_profile(name: str, url: str, api_key: str) -> Path:
    """Write (or replace) one profile, keeping the others; the file is readable by you only."""
    profiles = read_profiles()
    profiles[name] = {"url": url, "api_key": api_key}
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # TOML basic strings are JSON strings for the characters URLs and keys hold
    text = "".join(
        f"[{json.dumps(n)}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in p.items()) + "\n"
        for n, p in sorted(profiles.items())
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    path.chmod(0o600)
    return path


def settings(url: str | None, api_key: str | None, profile: str | None) -> tuple[str, str]:
    """The API and key to use; saying how to set them, exits 4 when the key is missing, 2
    when only the url is."""
    name = profile_name(profile)
    stored = read_profiles().get(name, {})
    if profile is not None and not stored:
        typer.echo(f"error: no profile {name!r} in {config_path()} (icebatch login)", err=True)
        raise typer.Exit(2)
    url = url or os.environ.get("ICEBATCH_URL") or stored.get("url")
    api_key = api_key or os.environ.get("ICEBATCH_API_KEY") or stored.get("api_key")
    if not url or not api_key:
        missing = " and ".join(
            what for what, value in (("API url", url), ("API key", api_key)) if not value
        )
        typer.echo(
            f"error: no {missing}: run `icebatch login`, or set ICEBATCH_URL and "
            "ICEBATCH_API_KEY (or pass --url and --api-key)",
            err=True,
        )
        raise typer.Exit(4 if not api_key else 2)  # Exit.DENIED: no key; Exit.INVALID: no url
    return url.rstrip("/"), api_key


def resolve(url: str | None, api_key: str | None, profile: str | None) -> Icebatch:
    """An SDK client for the resolved API and key, polling every POLL_SECONDS."""
    from icebatch_client import Icebatch

    base_url, key = settings(url, api_key, profile)
    # a short fixed poll: the CLI sees a finished batch or job within POLL_SECONDS (each
    # unchanged read is a conditional GET the API answers 304, cheaply)
    return Icebatch(base_url, key, poll_interval=POLL_SECONDS, max_poll_interval=POLL_SECONDS)
