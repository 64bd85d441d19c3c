"""The PyIceberg SQL catalog; Spark's JDBC catalog shares its name and database (DESIGN.md §2)."""

from __future__ import annotations

from functools import lru_cache

from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
from pyiceberg.table import CommitTableResponse, Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import TableRequirement, TableUpdate
from sqlalchemy.engine import make_url

from app.config import Settings, get_settings
from app.lake.file_cache import FileCache

# parsed metadata files, by location: a file is never rewritten (each commit writes a new one)
_METADATA: FileCache[TableMetadata] = FileCache(16)


class Catalog(SqlCatalog):
    """PyIceberg's SQL catalog, each metadata file parsed once per process.

    PyIceberg parses the table's metadata file on every load (and a refresh is a load). The
    file lists every retained snapshot: hundreds of KB on a table a burst of restatements
    commits to, a fifth of a committer's time (bench/RESULTS.md, seventh session). A load
    still reads the table's current location from the catalog, so it is as fresh as before;
    a commit through this catalog keeps the metadata it wrote, so the next load here of the
    table it committed parses nothing."""

    def commit_table(
        self,
        table: Table,
        requirements: tuple[TableRequirement, ...],
        updates: tuple[TableUpdate, ...],
    ) -> CommitTableResponse:
        response = super().commit_table(table, requirements, updates)
        _METADATA.put(response.metadata_location, response.metadata)
        return response

    def _convert_orm_to_iceberg(self, orm_table: IcebergTables) -> Table:
        location = orm_table.metadata_location or ""
        metadata = _METADATA.peek(location)
        if metadata is None or not orm_table.table_namespace or not orm_table.table_name:
            table = super()._convert_orm_to_iceberg(orm_table)
            _METADATA.put(table.metadata_location, table.metadata)
            return table
        return Table(
            identifier=(*self.identifier_to_tuple(orm_table.table_namespace), orm_table.table_name),
            metadata=metadata,
            metadata_location=location,
            io=self._load_file_io(metadata.properties, location),
            catalog=self,
        )


def make_catalog(settings: Settings) -> Catalog:
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
    return Catalog(
        settings.catalog_name,
        uri=uri,
        warehouse=settings.warehouse,
        pool_pre_ping="true",
    )


@lru_cache
def get_catalog() -> Catalog:
    return make_catalog(get_settings())
