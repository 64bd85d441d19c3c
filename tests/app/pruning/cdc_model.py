"""The pruning tests' CDC chunks: a tenant's chunks of every age and state (`build`), those the
rule keeps in plain Python (`kept`), and those left in the store (`present`)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

Chunks = dict[int, dict[str, Any]]  # by first sequence number: last one, age since staged


def _ago(now: datetime, days: float) -> datetime:
    return now - timedelta(days=days)


def build(
    rng: random.Random, org: str, now: datetime, ages_days: tuple[float, ...], rows: list[Any]
) -> tuple[Chunks, int]:
    """The org's chunks and CDC tenant, appended to `rows`; (the chunks, its processed_seq)."""
    from app.models import CdcChunk, CdcTenant

    chunks: Chunks = {}
    # the org's CDC chunks: dense ranges, the first ones staged (oldest first, the last three
    # within the retention), the processor past the first of those three, inside a chunk as
    # often as not: of the chunks it applied, the old ones go and the young ones stay
    sizes = [rng.randint(1, 4) for _ in range(30)]
    staged_count = rng.randint(20, 27)
    ages = sorted((rng.choice(ages_days) for _ in range(staged_count - 3)), reverse=True)
    ages += [ages_days[0]] * 3
    last = 0
    for i, size in enumerate(sizes):
        staged_age = ages[i] if i < staged_count else None
        chunks[last + 1] = {"last": last + size, "staged_age": staged_age}
        rows.append(
            CdcChunk(
                org=org,
                first_seq=last + 1,
                last_seq=last + size,
                count=size,
                min_ts=_ago(now, 500),
                max_ts=_ago(now, 500),
                accepted_at=_ago(now, (staged_age or 0) + 0.001),
                staged_at=None if staged_age is None else _ago(now, staged_age),
                body=b"events" if staged_age is None else None,
            )
        )
        last += size
    staged_seq = sum(sizes[:staged_count])
    processed_seq = rng.randint(sum(sizes[: staged_count - 2]), staged_seq)
    rows.append(
        CdcTenant(
            org=org,
            config={},
            accepted_seq=last,
            staged_seq=staged_seq,
            processed_seq=processed_seq,
        )
    )
    return chunks, processed_seq


def kept(chunks: Chunks, processed_seq: int, days: float) -> set[int]:
    """The chunks the rule keeps: all but those staged over `days` ago and wholly applied."""
    return {
        first
        for first, c in chunks.items()
        if not (
            c["staged_age"] is not None and c["staged_age"] > days and c["last"] <= processed_seq
        )
    }


def present(session: Session, org: str) -> set[int]:
    from app.models import CdcChunk

    return set(session.scalars(select(CdcChunk.first_seq).where(CdcChunk.org == org)))
