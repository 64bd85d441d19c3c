"""Alembic environment: the metadata store of Icebatch (Iceberg's catalog tables are not ours)."""

from __future__ import annotations

from typing import Any

from alembic import context
from sqlalchemy import Connection

import app.models  # noqa: F401  (registers every model on Base.metadata)
from app.config import get_settings
from app.db import Base, make_engine
from app.models.base import UTCDateTime

target_metadata = Base.metadata


def include_object(
    obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any
) -> bool:
    """Leave the Iceberg SQL catalog's tables (iceberg_tables, …) alone."""
    return not (type_ == "table" and name is not None and name.startswith("iceberg_"))


def render_item(type_: str, obj: Any, autogen_context: Any) -> str | bool:
    """Render app types as plain SQLAlchemy ones, so migrations never import the app."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def run_with(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        include_object=include_object,
        render_item=render_item,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        run_with(connection)
        return
    url = context.config.get_main_option("sqlalchemy.url") or get_settings().sqlalchemy_url
    engine = make_engine(url, statement_timeout=False)
    with engine.connect() as conn:
        run_with(conn)
    engine.dispose()


if context.is_offline_mode():
    context.configure(url=get_settings().sqlalchemy_url, target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
