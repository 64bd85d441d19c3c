"""Batches left `loading`: no file and no COMPLETE for `ICEBATCH_BATCH_LOADING_TTL_SECONDS`
(a client gone, an upload refused). The API flags one past its TTL (`stuck`), the scheduler
aborts it (audited, its staged files removed) and `icebatch doctor` reports any it finds.

A batch's last activity is its `updated_at`: every upload and every action moves it."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app import clock
from app.audit import repository as audit
from app.audit.service import event_row
from app.config import get_settings
from app.db import session_scope
from app.models import Batch, BatchStatus
from app.stuck import StuckOut

log = logging.getLogger(__name__)
ACTION = "batches.act.ABORT"  # the action of a client's own ABORT in the audit trail


def ttl() -> timedelta:
    return timedelta(seconds=get_settings().batch_loading_ttl_seconds)


def stuck_at(updated_at: datetime) -> datetime:
    """When a `loading` batch last changed at `updated_at` turns stuck (past its TTL)."""
    return _aware(updated_at) + ttl()


def stuck(batch: Batch, now: datetime | None = None) -> StuckOut | None:
    """Why a `loading` batch past its TTL is stuck and what resolves it; else None."""
    now = now or clock.now()
    if batch.status != BatchStatus.LOADING or now < stuck_at(batch.updated_at):
        return None
    idle = now - _aware(batch.updated_at)
    return StuckOut(
        reason=f"'loading' with no upload and no COMPLETE for {idle.total_seconds():.0f} s "
        f"(ICEBATCH_BATCH_LOADING_TTL_SECONDS is {ttl().total_seconds():g})",
        action=f"send COMPLETE if its files are all there (POST /v1/batches/{batch.id}"
        "?action=COMPLETE), else ABORT it (?action=ABORT); the scheduler aborts it on its "
        "next pass",
    )


def expired(session: Session, now: datetime) -> Sequence[Batch]:
    """The `loading` batches idle since before `now - TTL`, oldest first."""
    query = select(Batch).where(Batch.status == BatchStatus.LOADING, Batch.updated_at < now - ttl())
    return session.scalars(query.order_by(Batch.updated_at).limit(500)).all()


def abort_expired() -> list[str]:
    """Abort every `loading` batch past its TTL, audited, its staged files removed; the ids
    aborted (the scheduler's pass). Each abort is one conditional UPDATE: a batch that got an
    upload or a COMPLETE since it was listed is no longer expired and is left alone."""
    with session_scope() as session:
        now = clock.db_now(session)
        candidates = [(b.id, b.org, _aware(b.updated_at)) for b in expired(session, now)]
    aborted = []
    for batch_id, org, last in candidates:
        why = (
            f"no upload and no COMPLETE since {last.isoformat()} "
            f"(ICEBATCH_BATCH_LOADING_TTL_SECONDS={ttl().total_seconds():g})"
        )
        with session_scope() as session:
            now = clock.db_now(session)
            moved = session.execute(
                update(Batch)
                .where(
                    Batch.id == batch_id,
                    Batch.status == BatchStatus.LOADING,
                    Batch.updated_at < now - ttl(),
                )
                .values(status=BatchStatus.ABORTED, completed_at=now, updated_at=now)
            ).rowcount
            if not moved:
                continue
            audit.append(session, [_event(org, batch_id, why)])
        shutil.rmtree(get_settings().staging_dir / batch_id, ignore_errors=True)
        log.info("scheduler: aborted batch %s of %s: %s", batch_id, org, why)
        aborted.append(batch_id)
    return aborted


def _event(org: str, batch_id: str, why: str) -> dict[str, Any]:
    """The audit row: the ABORT a client would send, made by the scheduler (no key)."""
    return event_row(
        org=org,
        key_id=None,
        action=ACTION,
        method="POST",
        path=f"/v1/batches/{batch_id}",
        target={"batch_id": batch_id, "by": "scheduler", "reason": why},
        request_id=None,
        status_code=200,
    )


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)
