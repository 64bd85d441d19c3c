"""Datasets: validate the requested schema, create the Iceberg table, describe it back."""

from __future__ import annotations

import re
from dataclasses import asdict
from datetime import UTC, datetime

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import TableAlreadyExistsError
from pyiceberg.table import Table
from pyiceberg.types import PrimitiveType
from sqlalchemy.orm import Session

from app.config import get_settings
from app.datasets import repository
from app.datasets import rows as row_counts
from app.datasets.schemas import (
    DatasetCreate,
    DatasetList,
    DatasetOut,
    DatasetStats,
    SnapshotOut,
)
from app.errors import DatasetExists, InvalidInput, NotFound
from app.lake import retention, tables, tombstones
from app.lake.types import BATCH_COLUMN, field_to_spec, schema_from_specs
from app.models import BatchStatus, Dataset
from app.pages import next_cursor

DATASET_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,127}$")


def create(session: Session, catalog: Catalog, org: str, request: DatasetCreate) -> Dataset:
    if not DATASET_NAME_RE.match(request.name):
        raise InvalidInput(
            "dataset names are lowercase letters, digits and '_', starting with a letter"
        )
    if repository.by_name(session, org, request.name) is not None:
        raise DatasetExists(request.name)
    schema = schema_from_specs(request.schema_)
    top_level = {f.name: f for f in schema.fields}
    for column in request.identity_columns:
        field = top_level.get(column)
        if field is None or column == BATCH_COLUMN:
            raise InvalidInput(f"identity column {column!r} is not a column of the schema")
        if not isinstance(field.field_type, PrimitiveType):
            raise InvalidInput(f"identity column {column!r} must be a top-level primitive column")
    tables.partition_spec(schema, request.partition)  # validate before touching the catalog
    identifier = f"{org}.{request.name}"
    # The catalog commits on its own connection: create the table before this session writes,
    # or SQLite (one writer at a time) would make the two wait on each other.
    try:
        tables.create_table(catalog, identifier, schema, request.partition)
    except TableAlreadyExistsError:
        raise DatasetExists(request.name) from None
    dataset = Dataset(
        org=org,
        name=request.name,
        table_identifier=identifier,
        schema_fields=[field_to_spec(f) for f in schema.fields if f.name != BATCH_COLUMN],
        partition=[dict(p) for p in request.partition],
        identity_columns=list(request.identity_columns),
    )
    session.add(dataset)
    try:
        session.flush()
    except Exception:
        catalog.drop_table(identifier)
        raise
    return dataset


def load(catalog: Catalog, dataset: Dataset) -> Table:
    table = tables.load_table(catalog, dataset.table_identifier)
    if table is None:
        raise NotFound(f"the Iceberg table of dataset {dataset.id!r} is missing from the catalog")
    return table


def describe(dataset: Dataset, table: Table) -> DatasetOut:
    schema = table.schema()
    order = [
        f"{field.transform}({schema.find_column_name(field.source_id)})"
        for field in table.sort_order().fields
    ]
    snapshot = table.current_snapshot()
    return DatasetOut(
        id=dataset.id,
        name=dataset.name,
        table=f"{get_settings().catalog_name}.{dataset.table_identifier}",
        schema_=[field_to_spec(f) for f in schema.fields],
        partition=dataset.partition,
        identity_columns=dataset.identity_columns,
        sort_order=order,
        current_snapshot_id=snapshot.snapshot_id if snapshot else None,
        retention=asdict(retention.effective_policy(dataset.retention)),
        created_at=dataset.created_at,
    )


def list_datasets(
    session: Session, catalog: Catalog, org: str, offset: int, limit: int
) -> DatasetList:
    """A page of the organization's datasets, oldest first, each described from its table."""
    rows = repository.page(session, org, offset, limit + 1)
    items = [describe(d, load(catalog, d)) for d in rows[:limit]]
    return DatasetList(items=items, next=next_cursor(offset, limit, len(rows) > limit))


def snapshots(table: Table) -> list[SnapshotOut]:
    """The snapshot log, newest first, with Icebatch's and the tombstone summary keys apart."""
    items = []
    for snapshot in table.snapshots():
        summary = snapshot.summary
        props = dict(summary.additional_properties) if summary else {}
        items.append(
            SnapshotOut(
                snapshot_id=snapshot.snapshot_id,
                parent_id=snapshot.parent_snapshot_id,
                sequence_number=snapshot.sequence_number,
                committed_at=datetime.fromtimestamp(snapshot.timestamp_ms / 1000, UTC),
                operation=summary.operation.value if summary else "unknown",
                icebatch={k: v for k, v in props.items() if k.startswith("icebatch.")},
                tombstone={k: v for k, v in props.items() if k.startswith("tombstone.")},
                tombstones=tombstones.metrics(table, snapshot),
                summary=props,
            )
        )
    items.sort(key=lambda s: (s.sequence_number or 0, s.committed_at), reverse=True)
    return items


def stats(session: Session, dataset: Dataset, table: Table) -> DatasetStats:
    """Batch counts by status, the rows a read returns (from metadata), the rows live batches
    ingested, tombstones in force, the newest ingest."""
    counts = repository.batch_counts(session, dataset.id)
    current = table.current_snapshot()
    landed = [BatchStatus.SUCCESS, BatchStatus.REPLACED, BatchStatus.REVERTED]
    return DatasetStats(
        dataset_id=dataset.id,
        batches={status: n for status, n, _ in counts},
        rows=row_counts.readable(session, dataset.id, table),
        rows_ingested=sum(n for status, _, n in counts if status == BatchStatus.SUCCESS),
        active_tombstones=int(tombstones.metrics(table, current)["total"]) if current else 0,
        snapshots=len(table.snapshots()),
        current_snapshot_id=current.snapshot_id if current else None,
        last_ingest_at=repository.last_batch_landed(session, dataset.id, [s.value for s in landed]),
    )


def get(session: Session, org: str, dataset_id: str) -> Dataset:
    """One of the organization's datasets by its id (404 otherwise): how other domains find
    a dataset."""
    return repository.get(session, org, dataset_id)


def resolve(session: Session, org: str, id_or_name: str) -> Dataset:
    """One of the organization's datasets by its id or its name (404 otherwise)."""
    return repository.resolve(session, org, id_or_name)


def filter_id(session: Session, org: str, id_or_name: str | None) -> str | None:
    """A list's `dataset_id` filter as an id: a name of `org` becomes its dataset's id."""
    return repository.filter_id(session, org, id_or_name)


def lock(session: Session, dataset_id: str) -> None:
    """Hold the dataset's row until the transaction ends (one writer of its jobs at a time)."""
    repository.lock(session, dataset_id)
