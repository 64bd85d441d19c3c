"""Request dependencies the domains share: the Iceberg catalog and the dataset a path names.

A dataset is looked up in the request's organization from the `{dataset_id}` path parameter, by
id or by name (an exact id first); one that does not exist there is a 404 before the endpoint
runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Path, Query
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table

from app.auth import Org
from app.datasets import service as dataset_service
from app.datasets import service as datasets
from app.db_session import DbSession
from app.lake.catalog import get_catalog
from app.models import Dataset
from app.pagination import MAX_OFFSET

Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Items to skip")]


def iceberg_catalog() -> Catalog:
    """The process's Iceberg catalog."""
    return get_catalog()


IcebergCatalog = Annotated[Catalog, Depends(iceberg_catalog)]


DatasetIdOrName = Annotated[
    str,
    Path(
        description="The dataset's id, or its name (names are unique in your organization; "
        "an exact id is tried first)",
        examples=["events"],
    ),
]


def org_dataset(dataset_id: DatasetIdOrName, org: Org, session: DbSession) -> Dataset:
    """The dataset of the path in the request's organization, by id or name (DatasetNotFound
    otherwise)."""
    return datasets.resolve(session, org, dataset_id)


OrgDataset = Annotated[Dataset, Depends(org_dataset)]


@dataclass(frozen=True)
class LoadedDataset:
    """A dataset row with its Iceberg table as the catalog has it now."""

    dataset: Dataset
    table: Table


def dataset_table(dataset: OrgDataset, catalog: IcebergCatalog) -> LoadedDataset:
    """The dataset of the path and its loaded table (404 when the table is missing)."""
    return LoadedDataset(dataset, dataset_service.load(catalog, dataset))


DatasetTable = Annotated[LoadedDataset, Depends(dataset_table)]
