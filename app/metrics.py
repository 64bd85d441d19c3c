"""Operator metrics for `/metrics`: what an alert needs beyond HTTP counters.

Gathered from the metadata store (its clock, ten small queries, two more per CDC tenant) and
the Iceberg metadata of the datasets (the current snapshot's tombstone list, the snapshot
count; only for tables whose metadata file changed since the last gathering), at most once per
`ICEBATCH_METRICS_CACHE_SECONDS`: scrapes in between are served from memory. A source that
fails (the database is down) leaves its last values in place and counts
`icebatch_metrics_collect_errors_total{source}`; `/metrics` itself never fails for it.

Label sets are bounded: job kinds and states are the enums' values (`other` for anything
else); per-dataset series are keyed by dataset id for the first `ICEBATCH_METRICS_MAX_DATASETS`
datasets by creation time (`icebatch_datasets` counts them all).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from pyiceberg.catalog.sql import IcebergTables
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app import clock
from app.cdc import service as cdc_service
from app.cdc.metrics import cdc_families
from app.cdc.schemas import CdcLag
from app.config import get_settings
from app.db import session_scope
from app.jobs.kinds import JobKind
from app.lake import tombstones
from app.lake.catalog import get_catalog
from app.models import CdcTenant, CommitLease, Dataset, Job, JobState, OutboxMessage, PrivacyJob
from app.models.restatement import PASS_LEASE_PREFIX

log = logging.getLogger(__name__)
KINDS = [k.value for k in JobKind]
STATES = [s.value for s in JobState]
SOURCES = ("store", "lake")


@dataclass(frozen=True)
class StoreSample:
    """Aggregates of the metadata store at one moment."""

    jobs: dict[tuple[str, str], int]
    oldest_queued_age: dict[str, float]
    stale_heartbeats: dict[str, int]
    outbox_unpublished: int
    outbox_oldest_age: float
    privacy_unerased: int
    privacy_oldest_unerased_age: float
    leases_held: int
    datasets: int
    # (dataset id, table identifier, metadata location), capped at ICEBATCH_METRICS_MAX_DATASETS
    sampled: list[tuple[str, str, str | None]]
    # each CDC tenant's progress and lag (capped like the datasets)
    cdc: list[CdcLag] = field(default_factory=list)


@dataclass(frozen=True)
class DatasetSample:
    location: str | None  # the table metadata file it was read from: unchanged, not re-read
    tombstones: int
    snapshots: int


@dataclass
class _Cache:
    store: StoreSample | None = None
    lake: dict[str, DatasetSample] = field(default_factory=dict)
    gathered_at: float = float("-inf")
    succeeded_at: float = 0.0  # wall-clock time of the last complete gathering
    duration: float = 0.0
    errors: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SOURCES, 0))


def _age(now: datetime, moment: datetime | None) -> float:
    if moment is None:
        return 0.0
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return max(0.0, (now - moment).total_seconds())


def _bounded(value: str, allowed: list[str]) -> str:
    return value if value in allowed else "other"


def gather_store(session: Session, now: datetime) -> StoreSample:
    """Ten small queries, and two per CDC tenant (capped like the datasets)."""
    settings = get_settings()
    jobs: dict[tuple[str, str], int] = {}
    for kind, state, count in session.execute(
        select(Job.kind, Job.state, func.count()).group_by(Job.kind, Job.state)
    ):
        key = (_bounded(kind, KINDS), _bounded(state, STATES))
        jobs[key] = jobs.get(key, 0) + count
    queued = {
        _bounded(kind, KINDS): _age(now, oldest)
        for kind, oldest in session.execute(
            select(Job.kind, func.min(Job.created_at))
            .where(Job.state == JobState.QUEUED)
            .group_by(Job.kind)
        )
    }
    stale_before = now - timedelta(seconds=settings.stale_after_seconds)
    stale = {
        _bounded(kind, KINDS): count
        for kind, count in session.execute(
            select(Job.kind, func.count())
            .where(Job.state == JobState.RUNNING, Job.heartbeat_at < stale_before)
            .group_by(Job.kind)
        )
    }
    outbox_count, outbox_oldest = session.execute(
        select(func.count(), func.min(OutboxMessage.created_at)).where(
            OutboxMessage.published_at.is_(None)
        )
    ).one()
    privacy_count, privacy_oldest = session.execute(
        select(func.count(), func.min(PrivacyJob.created_at)).where(PrivacyJob.erased_at.is_(None))
    ).one()
    leases = (
        session.scalar(
            select(func.count()).where(
                CommitLease.expires_at > now,
                CommitLease.dataset_id.not_like(f"{PASS_LEASE_PREFIX}%"),
            )
        )
        or 0
    )
    datasets = session.scalar(select(func.count()).select_from(Dataset)) or 0
    datasets_sampled = session.execute(
        select(Dataset.id, Dataset.table_identifier)
        .order_by(Dataset.created_at, Dataset.id)
        .limit(settings.metrics_max_datasets)
    ).all()
    # the Iceberg catalog shares this database: each table's current metadata file, so a table
    # that did not change since the last gathering is not read again
    namespaces = {identifier.rsplit(".", 1)[0] for _, identifier in datasets_sampled}
    locations = {
        f"{row.table_namespace}.{row.table_name}": row.metadata_location
        for row in session.execute(
            select(
                IcebergTables.table_namespace,
                IcebergTables.table_name,
                IcebergTables.metadata_location,
            ).where(
                IcebergTables.catalog_name == settings.catalog_name,
                IcebergTables.table_namespace.in_(namespaces),
            )
        )
    }
    sampled = [
        (dataset_id, identifier, locations.get(identifier))
        for dataset_id, identifier in datasets_sampled
    ]
    tenants = session.scalars(
        select(CdcTenant).order_by(CdcTenant.org).limit(settings.metrics_max_datasets)
    ).all()
    cdc = [cdc_service.lag_of(session, tenant, now) for tenant in tenants]
    return StoreSample(
        jobs=jobs,
        oldest_queued_age=queued,
        stale_heartbeats=stale,
        outbox_unpublished=outbox_count,
        outbox_oldest_age=_age(now, outbox_oldest),
        privacy_unerased=privacy_count,
        privacy_oldest_unerased_age=_age(now, privacy_oldest),
        leases_held=leases,
        datasets=datasets,
        sampled=sampled,
        cdc=cdc,
    )


def gather_lake(
    sampled: list[tuple[str, str, str | None]], previous: dict[str, DatasetSample]
) -> tuple[dict[str, DatasetSample], int]:
    """Per dataset: active tombstones at the current snapshot and retained snapshots, from
    metadata only; a table whose metadata file is the one read last time is not read again.
    Also how many tables could not be read (their last values are kept)."""
    out: dict[str, DatasetSample] = {}
    failed = 0
    for dataset_id, identifier, location in sampled:
        known = previous.get(dataset_id)
        if known is not None and known.location == location:
            out[dataset_id] = known
            continue
        try:
            table = get_catalog().load_table(identifier)
            total = tombstones.metrics(table, table.current_snapshot())["total"]
        except Exception:
            failed += 1
            log.warning("operator metrics: table %s unreadable", identifier, exc_info=True)
            if known is not None:
                out[dataset_id] = known
            continue
        out[dataset_id] = DatasetSample(
            location=table.metadata_location,
            tombstones=int(total),
            snapshots=len(table.snapshots()),
        )
    return out, failed


class OperatorMetrics(Collector):
    """A Prometheus collector that serves cached aggregates and refreshes them when stale."""

    def __init__(self) -> None:
        self._cache = _Cache()
        self._lock = threading.Lock()

    def expire(self) -> None:
        """Make the next scrape gather again (tests; a settings change)."""
        self._cache.gathered_at = float("-inf")

    def _refresh(self) -> None:
        cache = self._cache
        if time.monotonic() - cache.gathered_at < get_settings().metrics_cache_seconds:
            return
        if not self._lock.acquire(blocking=False):
            return  # another scrape is gathering: serve what there is
        try:
            started = time.monotonic()
            cache.gathered_at = started
            ok = True
            try:
                with session_scope() as session:
                    cache.store = gather_store(session, clock.db_now(session))
            except Exception:
                ok = False
                cache.errors["store"] += 1
                log.warning("operator metrics: the metadata store did not answer", exc_info=True)
            if cache.store is not None:
                cache.lake, failed = gather_lake(cache.store.sampled, cache.lake)
                if failed:
                    ok = False
                    cache.errors["lake"] += 1
            cache.duration = time.monotonic() - started
            if ok:
                cache.succeeded_at = time.time()
        finally:
            self._lock.release()

    def describe(self) -> Iterable[Metric]:
        return list(_families(_Cache(), 0))

    def collect(self) -> Iterable[Metric]:
        self._refresh()
        return list(_families(self._cache, get_settings().auto_vacuum_tombstones))


def _gauge(name: str, documentation: str, labels: list[str] | None = None) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, labels=labels)


def _families(cache: _Cache, vacuum_threshold: int) -> Iterator[Metric]:
    store = cache.store
    jobs = _gauge("icebatch_jobs", "Jobs by kind and state", ["kind", "state"])
    queued = _gauge(
        "icebatch_jobs_oldest_queued_age_seconds",
        "Age of the oldest queued job, by kind (0: none queued)",
        ["kind"],
    )
    stale = _gauge(
        "icebatch_jobs_stale_heartbeat",
        "Running jobs whose heartbeat is older than ICEBATCH_STALE_AFTER_SECONDS, by kind",
        ["kind"],
    )
    if store is not None:
        for kind in [*KINDS, "other"]:
            for state in [*STATES, "other"]:
                count = store.jobs.get((kind, state))
                if count is not None or (kind != "other" and state != "other"):
                    jobs.add_metric([kind, state], count or 0)
            if kind in store.oldest_queued_age or kind != "other":
                queued.add_metric([kind], store.oldest_queued_age.get(kind, 0.0))
            if kind in store.stale_heartbeats or kind != "other":
                stale.add_metric([kind], store.stale_heartbeats.get(kind, 0))
    yield jobs
    yield queued
    yield stale
    scalars = [
        ("icebatch_outbox_unpublished", "Outbox messages not yet published", "outbox_unpublished"),
        (
            "icebatch_outbox_oldest_unpublished_age_seconds",
            "Age of the oldest unpublished outbox message (0: none)",
            "outbox_oldest_age",
        ),
        (
            "icebatch_privacy_jobs_unerased",
            "GDPR privacy jobs not yet erased (physically removed)",
            "privacy_unerased",
        ),
        (
            "icebatch_privacy_job_oldest_unerased_age_seconds",
            "Age of the oldest privacy job not yet erased (0: none)",
            "privacy_oldest_unerased_age",
        ),
        ("icebatch_commit_leases_held", "Datasets whose commit lease is held now", "leases_held"),
        ("icebatch_datasets", "Datasets (all of them)", "datasets"),
    ]
    for name, documentation, attribute in scalars:
        gauge = _gauge(name, documentation)
        if store is not None:
            gauge.add_metric([], getattr(store, attribute))
        yield gauge
    tomb = _gauge(
        "icebatch_dataset_tombstones_active",
        "Active tombstones at the current snapshot, per dataset (capped)",
        ["dataset"],
    )
    snaps = _gauge(
        "icebatch_dataset_snapshots", "Retained snapshots, per dataset (capped)", ["dataset"]
    )
    for dataset_id, sample in sorted(cache.lake.items()):
        tomb.add_metric([dataset_id], sample.tombstones)
        snaps.add_metric([dataset_id], sample.snapshots)
    yield tomb
    yield snaps
    yield from cdc_families(store.cdc if store is not None else [])
    backlog = _gauge(
        "icebatch_vacuum_backlog_datasets",
        "Datasets with at least ICEBATCH_AUTO_VACUUM_TOMBSTONES active tombstones",
    )
    backlog_tombstones = _gauge(
        "icebatch_vacuum_backlog_tombstones", "Active tombstones over all sampled datasets"
    )
    if cache.lake or store is not None:
        over = [s for s in cache.lake.values() if s.tombstones >= vacuum_threshold]
        backlog.add_metric([], len(over))
        backlog_tombstones.add_metric([], sum(s.tombstones for s in cache.lake.values()))
    yield backlog
    yield backlog_tombstones
    sampled = _gauge(
        "icebatch_metrics_datasets_sampled",
        "Datasets the per-dataset series cover (ICEBATCH_METRICS_MAX_DATASETS caps them)",
    )
    success = _gauge(
        "icebatch_metrics_last_success_timestamp_seconds",
        "When the operator metrics were last gathered without error (Unix time)",
    )
    duration = _gauge(
        "icebatch_metrics_collect_seconds", "How long the last gathering of operator metrics took"
    )
    errors = CounterMetricFamily(
        "icebatch_metrics_collect_errors",
        "Failed gatherings of the operator metrics, by source (store, lake); stale values stay",
        labels=["source"],
    )
    for source in SOURCES:
        errors.add_metric([source], cache.errors[source])
    yield errors
    sampled.add_metric([], len(cache.lake))
    success.add_metric([], cache.succeeded_at)
    duration.add_metric([], cache.duration)
    yield sampled
    yield success
    yield duration


OPERATOR_METRICS = OperatorMetrics()
