"""The PyIceberg SQL catalog; Spark's JDBC catalog shares its name and database (DESIGN.md §2)."""

from __future__ import annotations

from functools import lru_cache

from pyiceberg.catalog.sql import SqlCatalog
from sqlalchemy.engine import make_url

from app.config import Settings, get_settings


def make_catalog(settings: Settings) -> SqlCatalog:
    """A catalog on the metadata store's database, so Spark and PyIceberg see the same tables.

    Its pool pings a connection before use (a restarted PostgreSQL leaves every pooled one
    dead) and a connection attempt gives up after `db_connect_timeout_seconds`."""
    uri = settings.sqlalchemy_url
    if not settings.is_sqlite:
        timeout = str(settings.db_connect_timeout_seconds)
        uri = (
            make_url(uri)
            .update_query_dict({"connect_timeout": timeout})
            .render_as_string(hide_password=False)
        )
    return SqlCatalog(
        settings.catalog_name,
        uri=uri,
        warehouse=settings.warehouse,
        pool_pre_ping="true",
    )


@lru_cache
def get_catalog() -> SqlCatalog:
    return make_catalog(get_settings())
