"""Identity clusters: connected components of the links `related_ids` make, kept in SQL
(`cdc_identities`, through `app/cdc/repository.py`), labelled by their smallest identity. Links
accumulate; they are never removed. Applying the same links twice changes nothing (a retried
run)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.orm import Session

from app.cdc import repository


def link(session: Session, org: str, pairs: Iterable[tuple[str, str]]) -> set[str]:
    """Union the pairs' identities; returns the labels of every cluster they now belong to."""
    edges = [(a, b) for a, b in pairs if a != b]
    if not edges:
        return set()
    ids = {x for edge in edges for x in edge}
    labels = repository.clusters_of(session, org, ids)
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
    repository.relabel(session, org, merged)
    repository.add_identities(session, org, {x: find(node(x)) for x in sorted(ids - set(labels))})
    return final
