"""The accepted chunks against the tenant's watermarks: `GET /v1/cdc/lag`'s oldest unstaged and
oldest unprocessed chunk, and the dumper's `mark_staged`, equal a plain fold over the chunks on
random histories (both stores), before and after the pruning pass removed chunks staged and
applied, and on PostgreSQL they read the chunks past the watermark, not
the tenant's whole history: chunks are kept once staged, and the lag is polled by every UI tab,
Prometheus scrape and `bench.cdc` (4 times a second a tenant)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.cdc import repository, service
from app.db import session_scope
from app.models import CdcChunk, CdcTenant
from app.pruning import repository as pruning
from tests.fixtures.environments import Environment
from tests.fixtures.profile import EXAMPLES

T0 = datetime(2026, 12, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Chunk:
    first: int
    last: int
    accepted_at: datetime
    max_ts: datetime


def _chunks(sizes: list[int], accepted: list[int], newest: list[int]) -> list[Chunk]:
    """Dense, disjoint ranges as the accept hands them out; acceptance times as the API
    processes' clocks gave them (not in order: clocks of two hosts differ)."""
    out, seq = [], 0
    for size, at, ts in zip(sizes, accepted, newest, strict=False):
        out.append(Chunk(seq + 1, seq + size, T0 + timedelta(seconds=at), T0 + timedelta(hours=ts)))
        seq += size
    return out


def _seed(session: Session, org: str, chunks: list[Chunk], staged: int, processed: int) -> None:
    session.add(
        CdcTenant(
            org=org,
            config={},
            accepted_seq=chunks[-1].last if chunks else 0,
            staged_seq=staged,
            processed_seq=processed,
        )
    )
    session.add_all(
        CdcChunk(
            org=org,
            first_seq=c.first,
            last_seq=c.last,
            count=c.last - c.first + 1,
            min_ts=c.max_ts,
            max_ts=c.max_ts,
            accepted_at=c.accepted_at,
            staged_at=T0 + timedelta(minutes=i) if c.last <= staged else None,
            body=None if c.last <= staged else b"events",
        )
        for i, c in enumerate(chunks)
    )


HISTORY = st.lists(st.integers(1, 6), max_size=25).flatmap(
    lambda sizes: st.tuples(
        st.just(sizes),
        st.lists(st.integers(0, 600), min_size=len(sizes), max_size=len(sizes)),
        st.lists(st.integers(0, 48), min_size=len(sizes), max_size=len(sizes)),
        st.integers(0, len(sizes)),  # chunks staged
        st.floats(0, 1),  # how far through the staged events the processor is
        st.integers(0, len(sizes)),  # the pruning's cutoff, in minutes past T0
    )
)
History = tuple[list[int], list[int], list[int], int, float, int]


@settings(
    max_examples=40 * EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=HISTORY)
def test_lag_of_the_chunks_equals_a_fold_over_them(stack: Environment, history: History) -> None:
    """Before and after the pruning pass's rule for chunks (`app/pruning`) removed those staged
    before a cutoff and applied: the lag is the fold's over every chunk, and the chunks left
    are the others."""
    sizes, accepted, newest, staged_chunks, through, cutoff = history
    chunks = _chunks(sizes, accepted, newest)
    staged = chunks[staged_chunks - 1].last if staged_chunks else 0
    processed = int(staged * through)  # the processor stops inside a chunk as often as not
    org = f"wm-{uuid.uuid4().hex[:10]}"
    with session_scope() as session:
        _seed(session, org, chunks, staged, processed)
    unstaged = [c.accepted_at for c in chunks if c.last > staged]
    unprocessed = [c.accepted_at for c in chunks if c.last > processed]
    kept = {c.first for i, c in enumerate(chunks) if not (i < cutoff and c.last <= processed)}
    for pruned in (False, True):
        if pruned:
            with session_scope() as session:  # every tenant's, as the pass does
                pruning.applied_cdc_chunks(session, T0 + timedelta(minutes=cutoff), 10**6)
            with session_scope() as session:
                left = session.scalars(select(CdcChunk.first_seq).where(CdcChunk.org == org))
                assert set(left) == kept
        with session_scope() as session:
            tenant = session.get(CdcTenant, org)
            assert tenant is not None
            lag = service.lag_of(session, tenant, T0 + timedelta(hours=1))
            # what `POST /v1/cdc/process` asks before it queues the dumper, with the mirror
            # read now or before the dumper moved it
            waiting = {repository.any_unstaged(session, org, seen) for seen in (staged, 0)}
        assert waiting == {bool(unstaged)}
        assert lag.oldest_unstaged_age_seconds == (
            (T0 + timedelta(hours=1) - min(unstaged)).total_seconds() if unstaged else 0.0
        )
        assert lag.oldest_unprocessed_age_seconds == (
            (T0 + timedelta(hours=1) - unprocessed[0]).total_seconds() if unprocessed else 0.0
        )


@settings(
    max_examples=30 * EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=HISTORY, steps=st.lists(st.integers(0, 4), max_size=8))
def test_mark_staged_keeps_the_newest_event_time_of_every_staged_chunk(
    stack: Environment, history: History, steps: list[int]
) -> None:
    """The dumper's runs stage a few chunks each (or none: a run that repairs the mirror from
    the staging table's summary marks what it already marked); after each, the mirror holds the
    newest event time of every chunk up to it, those chunks' bodies are gone, the others kept."""
    sizes, accepted, newest, _, _, _ = history
    chunks = _chunks(sizes, accepted, newest)
    org = f"wm-{uuid.uuid4().hex[:10]}"
    with session_scope() as session:
        _seed(session, org, chunks, 0, 0)
    done = 0
    for step in steps:
        done = min(len(chunks), done + step)
        through = chunks[done - 1].last if done else 0
        with session_scope() as session:
            repository.mark_staged(session, org, through, T0)
        with session_scope() as session:
            tenant = session.get(CdcTenant, org)
            assert tenant is not None
            rows = session.execute(
                select(CdcChunk.first_seq, CdcChunk.body).where(CdcChunk.org == org)
            ).tuples()
            kept = dict(rows.all())
            assert tenant.staged_seq == through
            assert tenant.staged_max_ts == max(
                (c.max_ts for c in chunks if c.last <= through), default=None
            )
        assert kept == {c.first: (None if c.last <= through else b"events") for c in chunks}


def _chunk_rows_read(session: Session) -> int:
    """Rows of cdc_chunks this transaction has read so far (sequential and index scans)."""
    return int(
        session.execute(
            text(
                "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) "
                "FROM pg_stat_xact_user_tables WHERE relname = 'cdc_chunks'"
            )
        ).scalar_one()
    )


@pytest.mark.parametrize("stack", ["postgres"], indirect=True)
def test_the_lag_reads_the_chunks_past_the_watermarks_not_the_history(stack: Environment) -> None:
    """A tenant with 3,000 chunks staged and processed and 3 waiting: the lag's queries read a
    handful of rows, where filtering the tenant's chunks read all 3,000 (the table has no
    planner statistics here, as on a server with autovacuum off)."""
    history = 3_000
    chunks = _chunks([200] * (history + 3), list(range(history + 3)), [1] * (history + 3))
    staged = processed = chunks[history - 1].last
    org = f"wm-{uuid.uuid4().hex[:10]}"
    with session_scope() as session:
        _seed(session, org, chunks, staged, processed - 50)  # the processor inside a chunk
        _seed(session, f"{org}-other", chunks, 0, 0)  # another tenant's chunks, all waiting
    with session_scope() as session:
        tenant = session.get(CdcTenant, org)
        assert tenant is not None
        before = _chunk_rows_read(session)
        lag = service.lag_of(session, tenant, T0 + timedelta(hours=1))
        read = _chunk_rows_read(session) - before
    assert lag.oldest_unstaged_age_seconds == 3600 - history
    assert lag.oldest_unprocessed_age_seconds == 3600 - (history - 1)
    assert read <= 20, read
