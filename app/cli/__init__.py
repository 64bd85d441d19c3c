"""`icebatch`: run the product (up, api, worker, migrate), manage keys, check consistency
(doctor), and use it as a client (datasets,
batches, privacy, vacuum, compact, changes, jobs, cdc)."""

from __future__ import annotations

# each module registers its commands on `cli`
from app.cli import (  # noqa: F401
    batches,
    cdc,
    changes,
    datasets,
    doctor,
    jobs,
    keys,
    login,
    privacy,
    server,
)
from app.cli.base import cli
from app.cli.errors import guarded
from app.cli.server import alembic_config, migrate

cli.add_typer(keys.keys, name="keys")
cli.add_typer(datasets.datasets, name="datasets")
cli.add_typer(batches.batches, name="batches")
cli.add_typer(privacy.privacy, name="privacy")
cli.add_typer(jobs.jobs, name="jobs")
cli.add_typer(cdc.cdc, name="cdc")

__all__ = ["alembic_config", "cli", "main", "migrate"]


def main() -> None:
    """The `icebatch` console script: an error is one line and an exit code, never a
    traceback (app/cli/errors.py)."""
    guarded(cli)
