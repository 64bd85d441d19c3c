"""The catalog's reads of the metadata store and the lake: an org's tables, and a table's
served metadata (`app.catalog.served`), built once per ETag. An admin key also sees its org's
archived audit trail (`app.lake.audit`: `<org>._audit`, served as it is: no tombstones);
other keys are told it does not exist."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pyiceberg.catalog.sql import IcebergTables
from pyiceberg.table import StaticTable, Table
from sqlalchemy import select

from app.auth import find_key_by_id
from app.catalog import errors, served
from app.catalog.errors import CatalogError
from app.db import session_scope
from app.lake import audit
from app.lake.catalog import get_catalog
from app.lake.file_cache import FileCache
from app.models import Dataset
from app.privacy import service as privacy

RETRY_AFTER_SECONDS = "2"


@dataclass(frozen=True)
class Loaded:
    status: int  # 200, or 304 for an If-None-Match that matched
    etag: str
    body: bytes  # empty for a 304
    target: dict[str, str]  # for the audit trail: the table and the snapshot served


@dataclass(frozen=True)
class _Answer:
    body: bytes
    snapshot_id: int | None


_TABLES: FileCache[Table] = FileCache(64)  # by metadata file: immutable
_ANSWERS: FileCache[_Answer] = FileCache(256)  # by ETag


def names(org: str, admin: bool = False) -> list[str]:
    """The org's tables: its datasets, and for an admin its audit table once it exists."""
    with session_scope() as session:
        found = list(
            session.scalars(select(Dataset.name).where(Dataset.org == org).order_by(Dataset.name))
        )
    if admin and _metadata_location(audit.identifier(org)) is not None:
        found.insert(0, audit.TABLE)
    return found


def check(org: str, admin: bool, namespace: str, table: str) -> None:
    """NoSuchTable unless `namespace.table` is the caller's: a dataset, or (admin) the audit
    table."""
    if table == audit.TABLE and admin and namespace == org:
        if _metadata_location(audit.identifier(org)) is None:
            raise errors.no_such_table(namespace, table)
        return
    dataset_id(org, namespace, table)


def dataset_id(org: str, namespace: str, table: str) -> str:
    """The id of the caller's dataset `namespace.table`; NoSuchTable for anything else (another
    org's table, the CDC staging table, a table Icebatch does not know)."""
    if namespace != org:
        raise errors.no_such_table(namespace, table)
    with session_scope() as session:
        found = session.scalar(select(Dataset.id).where(Dataset.org == org, Dataset.name == table))
    if found is None:
        raise errors.no_such_table(namespace, table)
    return found


def secret_hash(key_id: str) -> str:
    found = find_key_by_id(key_id)
    assert found is not None  # the key was just found by its secret
    return found[1]


def _metadata_location(identifier: str) -> str | None:
    catalog = get_catalog()
    namespace, name = identifier.split(".", 1)
    query = select(IcebergTables.metadata_location).where(
        IcebergTables.catalog_name == catalog.name,
        IcebergTables.table_namespace == namespace,
        IcebergTables.table_name == name,
    )
    with catalog.engine.connect() as conn:
        return conn.scalar(query)


def _at(location: str) -> Table:
    """The table as its metadata file `location` has it (a load by name could be newer)."""
    return StaticTable.from_metadata(location, properties=get_catalog().properties)


def _load_audit(org: str, if_none_match: str | None) -> Loaded:
    """The org's audit table as it is (append-only, no tombstones: every snapshot is served)."""
    identifier = audit.identifier(org)
    location = _metadata_location(identifier)
    if location is None:
        raise errors.no_such_table(org, audit.TABLE)
    tag = served.etag(location, 0, "audit")

    def build() -> _Answer:
        lake = _TABLES.get(location, lambda: _at(location))
        body = (
            f'{{"metadata-location":{json.dumps(location)},'
            f'"metadata":{lake.metadata.model_dump_json()},"config":{{}}}}'
        )
        current = lake.metadata.current_snapshot_id
        return _Answer(body.encode(), current)

    answer = _ANSWERS.get(tag, build)
    target = {"table": identifier, "snapshot_id": str(answer.snapshot_id)}
    if if_none_match is not None and tag in (t.strip() for t in if_none_match.split(",")):
        return Loaded(304, tag, b"", target)
    return Loaded(200, tag, answer.body, target)


def load(
    org: str,
    namespace: str,
    table: str,
    mode: str,
    if_none_match: str | None,
    admin: bool = False,
) -> Loaded:
    """The served metadata of the caller's table, or 304 when `if_none_match` is its tag."""
    if table == audit.TABLE and admin and namespace == org:
        return _load_audit(org, if_none_match)
    found = dataset_id(org, namespace, table)
    identifier = f"{namespace}.{table}"
    with session_scope() as session:
        recorded = privacy.gdpr_in_force_through(session, found)
    location = _metadata_location(identifier)
    if location is None:
        raise errors.no_such_table(namespace, table)
    tag = served.etag(location, recorded, mode)

    def build() -> _Answer:
        lake = _TABLES.get(location, lambda: _at(location))
        erased = served.erased_through(lake, recorded)
        view = served.serve(lake, erased, mode)
        if view.snapshot_id is None and lake.metadata.snapshots:
            raise CatalogError(
                503,
                "ServiceUnavailableException",
                f"{identifier}: its newest changes are not yet Iceberg deletes (the materializer "
                f"runs after each restatement); {view.withheld} snapshots withheld, retry shortly",
                {"Retry-After": RETRY_AFTER_SECONDS},
            )
        body = (
            f'{{"metadata-location":{json.dumps(location)},'
            f'"metadata":{view.metadata.model_dump_json()},"config":{{}}}}'
        )
        return _Answer(body.encode(), view.snapshot_id)

    answer = _ANSWERS.get(tag, build)
    target = {"table": identifier, "snapshot_id": str(answer.snapshot_id)}
    if if_none_match is not None and tag in (t.strip() for t in if_none_match.split(",")):
        return Loaded(304, tag, b"", target)
    return Loaded(200, tag, answer.body, target)
