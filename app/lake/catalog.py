"""The PyIceberg SQL catalog; Spark's JDBC catalog shares its name and database (DESIGN.md §2)."""

from __future__ import annotations

from functools import lru_cache

from pyiceberg.catalog.sql import SqlCatalog

from app.config import Settings, get_settings


def make_catalog(settings: Settings) -> SqlCatalog:
    """A catalog on the metadata store's database, so Spark and PyIceberg see the same tables."""
    return SqlCatalog(
        settings.catalog_name,
        uri=settings.sqlalchemy_url,
        warehouse=settings.warehouse,
    )


@lru_cache
def get_catalog() -> SqlCatalog:
    return make_catalog(get_settings())
