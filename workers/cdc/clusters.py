"""Identity clusters: connected components of the links `related_ids` make, kept in SQL
(`cdc_identities`), labelled by their smallest identity. Links accumulate; they are never
removed. Applying the same links twice changes nothing (a retried run)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.models import CdcIdentity

CHUNK = 5000


def _chunks(items: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def lookup(session: Session, org: str, ids: Iterable[str]) -> dict[str, str]:
    """{identity: cluster} for those of `ids` that take part in a link."""
    found: dict[str, str] = {}
    for part in _chunks(sorted(set(ids))):
        rows = session.execute(
            select(CdcIdentity.entity_id, CdcIdentity.cluster_id).where(
                CdcIdentity.org == org, CdcIdentity.entity_id.in_(part)
            )
        ).all()
        found.update({str(e): str(c) for e, c in rows})
    return found


def members(session: Session, org: str, clusters: Iterable[str]) -> dict[str, str]:
    """{identity: cluster} of every member of `clusters`."""
    found: dict[str, str] = {}
    for part in _chunks(sorted(set(clusters))):
        rows = session.execute(
            select(CdcIdentity.entity_id, CdcIdentity.cluster_id).where(
                CdcIdentity.org == org, CdcIdentity.cluster_id.in_(part)
            )
        ).all()
        found.update({str(e): str(c) for e, c in rows})
    return found


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
    for old in existing:
        root = find(old)
        if root != old:
            session.execute(
                update(CdcIdentity)
                .where(CdcIdentity.org == org, CdcIdentity.cluster_id == old)
                .values(cluster_id=root)
            )
    for x in sorted(ids - set(labels)):
        session.add(CdcIdentity(org=org, entity_id=x, cluster_id=find(node(x))))
    session.flush()
    return final
