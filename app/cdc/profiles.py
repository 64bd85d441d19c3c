"""Merged profiles: the cluster of an identity, its members' records, one merged document."""

from __future__ import annotations

import json
from typing import Any

from pyiceberg.catalog import Catalog
from pyiceberg.expressions import EqualTo, In, Or
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cdc.documents import deep_merge
from app.cdc.schemas import Profile, ProfileRecord
from app.errors import NotFound
from app.models import CdcIdentity, CdcTenant, Dataset

COLUMNS = ("entity_id", "record_type", "timestamp", "related_ids", "cluster_id", "document")


def cluster_of(session: Session, org: str, entity_id: str) -> tuple[str, list[str]]:
    """(cluster id, members): an identity that was never linked is its own cluster."""
    cluster = session.scalar(
        select(CdcIdentity.cluster_id).where(
            CdcIdentity.org == org, CdcIdentity.entity_id == entity_id
        )
    )
    if cluster is None:
        return entity_id, [entity_id]
    members = session.scalars(
        select(CdcIdentity.entity_id).where(
            CdcIdentity.org == org, CdcIdentity.cluster_id == cluster
        )
    ).all()
    return cluster, sorted(members)


def merged(records: list[ProfileRecord]) -> dict[str, Any]:
    """Oldest first, each newer document merged over the result (ties: by entity id)."""
    result: dict[str, Any] = {}
    for record in sorted(records, key=lambda r: (r.timestamp is None, r.timestamp, r.entity_id)):
        result = deep_merge(result, record.document)
    return result


def profile(session: Session, catalog: Catalog, org: str, entity_id: str) -> Profile:
    tenant = session.get(CdcTenant, org)
    dataset = (
        session.get(Dataset, tenant.raw_dataset_id) if tenant and tenant.raw_dataset_id else None
    )
    if dataset is None:
        raise NotFound(f"no CDC record or link of {entity_id!r} in your organization")
    cluster, members = cluster_of(session, org, entity_id)
    table = catalog.load_table(dataset.table_identifier)
    rows = (
        table.scan(
            row_filter=Or(
                EqualTo(term="cluster_id", value=cluster),
                In(term="entity_id", literals=members),
            ),
            selected_fields=COLUMNS,
        )
        .to_arrow()
        .to_pylist()
    )
    member_set = set(members)
    records = [
        ProfileRecord(
            entity_id=row["entity_id"],
            record_type=row["record_type"],
            timestamp=row["timestamp"],
            related_ids=list(row["related_ids"] or []),
            document=json.loads(row["document"]),
        )
        for row in rows
        if row["entity_id"] in member_set
    ]
    if not records and len(members) == 1:
        raise NotFound(f"no CDC record or link of {entity_id!r} in your organization")
    records.sort(key=lambda r: r.entity_id)
    return Profile(
        entity_id=entity_id,
        cluster_id=cluster,
        members=members,
        records=records,
        merged=merged(records),
    )
