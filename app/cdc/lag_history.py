"""The replication lag over time: samples of each tenant's lag, recorded by the beat's CDC pass
(at most one per tenant per `cdc_lag_sample_seconds`, forgotten after
`cdc_lag_retention_seconds`), read by `GET /v1/cdc/lag/history` (the web UI's chart)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.cdc.schemas import CdcLag, CdcLagHistory, CdcLagPoint
from app.config import get_settings
from app.models import CdcLagSample

MAX_POINTS = 2_880  # a day at the default interval: what one answer carries at most


def due(session: Session, org: str, now: datetime) -> bool:
    """Whether the tenant's last sample is older than the sample interval (one small query:
    the lag itself is computed only when it is)."""
    last = session.scalar(select(func.max(CdcLagSample.at)).where(CdcLagSample.org == org))
    return last is None or (now - last).total_seconds() >= get_settings().cdc_lag_sample_seconds


def record(session: Session, lag: CdcLag, now: datetime) -> None:
    """Keep `lag` as the tenant's sample at `now`; forget its samples past the retention."""
    settings = get_settings()
    session.add(
        CdcLagSample(
            org=lag.tenant,
            at=now,
            accepted=lag.accepted,
            staged=lag.staged,
            processed=lag.processed,
            staging_lag_seconds=lag.staging_lag_seconds,
            replication_lag_seconds=lag.replication_lag_seconds,
            oldest_unprocessed_age_seconds=lag.oldest_unprocessed_age_seconds,
        )
    )
    cutoff = now - timedelta(seconds=settings.cdc_lag_retention_seconds)
    session.execute(
        delete(CdcLagSample).where(CdcLagSample.org == lag.tenant, CdcLagSample.at < cutoff)
    )


def history(session: Session, org: str) -> CdcLagHistory:
    """The tenant's samples, oldest first (the newest MAX_POINTS)."""
    query = select(CdcLagSample).where(CdcLagSample.org == org)
    rows = session.scalars(query.order_by(CdcLagSample.at.desc()).limit(MAX_POINTS)).all()
    settings = get_settings()
    return CdcLagHistory(
        tenant=org,
        sample_seconds=settings.cdc_lag_sample_seconds,
        retention_seconds=settings.cdc_lag_retention_seconds,
        samples=[
            CdcLagPoint(
                at=r.at,
                accepted=r.accepted,
                staged=r.staged,
                processed=r.processed,
                staging_lag_seconds=r.staging_lag_seconds,
                replication_lag_seconds=r.replication_lag_seconds,
                oldest_unprocessed_age_seconds=r.oldest_unprocessed_age_seconds,
            )
            for r in reversed(rows)
        ],
    )
