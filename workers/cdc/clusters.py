"""Identity clusters: connected components of the links `related_ids` make, kept in SQL
(`cdc_identities`), labelled by their smallest identity. Links accumulate; they are never
removed. Applying the same links twice changes nothing (a retried run)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import insert, select, text, update
from sqlalchemy.orm import Session

from app.models import CdcIdentity
from workers.cdc.keyed import postgres, rows_in


def _select(session: Session, org: str, column: Any, values: Iterable[str]) -> dict[str, str]:
    query = select(CdcIdentity.entity_id, CdcIdentity.cluster_id).where(CdcIdentity.org == org)
    return {str(e): str(c) for e, c in rows_in(session, query, column, values)}


def lookup(session: Session, org: str, ids: Iterable[str]) -> dict[str, str]:
    """{identity: cluster} for those of `ids` that take part in a link."""
    return _select(session, org, CdcIdentity.entity_id, ids)


def members(session: Session, org: str, clusters: Iterable[str]) -> dict[str, str]:
    """{identity: cluster} of every member of `clusters`."""
    return _select(session, org, CdcIdentity.cluster_id, clusters)


def link(session: Session, org: str, pairs: Iterable[tuple[str, str]]) -> set[str]:
    """Union the pairs' identities; returns the labels of every cluster they now belong to."""
    edges = [(a, b) for a, b in pairs if a != b]
    if not edges:
        return set()
    ids = {x for edge in edges for x in edge}
    labels = lookup(session, org, ids)
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def node(x: str) -> str:  # an existing cluster is one node, named by its label
        return labels.get(x, x)

    for a, b in edges:
        ra, rb = find(node(a)), find(node(b))
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    existing = set(labels.values())
    final: set[str] = set()
    for x in ids | existing:
        root = find(node(x))
        final.add(root)
    merged = {old: find(old) for old in sorted(existing) if find(old) != old}
    _relabel(session, org, merged)
    fresh = [
        {"org": org, "entity_id": x, "cluster_id": find(node(x))} for x in sorted(ids - set(labels))
    ]
    if fresh:
        session.execute(insert(CdcIdentity), fresh)
    return final


def _relabel(session: Session, org: str, merged: dict[str, str]) -> None:
    """Every member of the clusters `merged` names moves to its new label: one statement on
    PostgreSQL (a statement per cluster costs a scan each while statistics are stale)."""
    if not merged:
        return
    if postgres(session):
        session.execute(
            text(
                "UPDATE cdc_identities SET cluster_id = m.root "
                "FROM unnest(CAST(:olds AS varchar[]), CAST(:roots AS varchar[])) AS m(old, root) "
                "WHERE cdc_identities.org = :org AND cdc_identities.cluster_id = m.old"
            ),
            {"org": org, "olds": list(merged), "roots": list(merged.values())},
        )
        return
    for old, root in merged.items():
        session.execute(
            update(CdcIdentity)
            .where(CdcIdentity.org == org, CdcIdentity.cluster_id == old)
            .values(cluster_id=root)
        )
