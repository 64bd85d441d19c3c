"""CDC on the API side: tenants and their config, accepting events, lag, forced runs.

Accepting is one short transaction: the tenant's row is locked, the request's events get the
next sequence numbers, and their Arrow table is written as one `cdc_chunks` row. The 202 goes
out after that commit, so an accepted event survives any crash that follows it; the dumper
appends the chunk to the staging table later. Sequence numbers are dense per tenant, and a
chunk commits only after every earlier one of its tenant did (the row lock), so the dumper
always finds a gap-free prefix.
"""

from __future__ import annotations

import hashlib
import io
from datetime import datetime
from typing import Any

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.transforms import IdentityTransform
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app import clock
from app.cdc import events as cdc_events
from app.cdc import repository
from app.cdc import streams as cdc_streams
from app.cdc.schemas import CdcConfig, CdcConfigOut, CdcLag, EventsAccepted, ProcessStarted
from app.datasets import service as datasets
from app.datasets.schemas import DatasetCreate
from app.db import session_scope
from app.errors import Conflict, InvalidInput
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.lake.cdc import RAW_DATASET, RAW_PARTITION, RESERVED_COLUMNS, raw_schema
from app.lake.transaction import begin
from app.lake.types import field_to_spec
from app.models import CdcChunk, CdcTenant, Dataset, Job, JobState

ACTIVE = (JobState.QUEUED, JobState.RUNNING)
RAW_RETENTION = {"min_snapshots": 10, "max_snapshot_age_seconds": 3600}


def config_of(tenant: CdcTenant | None) -> CdcConfig:
    return CdcConfig.model_validate(tenant.config if tenant is not None else {})


def lease_key(prefix: str, org: str) -> str:
    """A commit-lease key of at most 36 characters for one tenant's dumper or processor."""
    return f"{prefix}-{hashlib.sha256(org.encode()).hexdigest()[:30]}"[:36]


def ensure_tenant(catalog: Catalog, org: str, config: CdcConfig | None = None) -> CdcTenant:
    """The org's tenant row, created with its raw table on first use (committed here)."""
    with session_scope() as session:
        tenant = session.get(CdcTenant, org)
        if tenant is not None and tenant.raw_dataset_id is not None:
            session.expunge(tenant)
            return tenant
    wanted = config or CdcConfig()
    with session_scope() as session:
        dataset = datasets.repository.by_name(session, org, RAW_DATASET)
        dataset_id = dataset.id if dataset is not None else None
    if dataset_id is None:
        pushdown = [p.model_dump() for p in wanted.pushdown]
        with session_scope() as session:
            dataset = datasets.create(
                session,
                catalog,
                org,
                DatasetCreate.model_validate(
                    {
                        "name": RAW_DATASET,
                        "schema": raw_schema(pushdown),
                        "partition": RAW_PARTITION,
                        "identity_columns": ["entity_id"],
                    }
                ),
            )
            # a snapshot per processor run: an hour of time travel keeps the metadata small
            dataset.retention = dict(RAW_RETENTION)
            dataset_id = dataset.id
            identifier = dataset.table_identifier
        _raw_layout(catalog, identifier)
    try:
        with session_scope() as session:
            tenant = session.get(CdcTenant, org)
            if tenant is None:
                tenant = CdcTenant(
                    org=org,
                    config=wanted.model_dump(mode="json"),
                    raw_dataset_id=dataset_id,
                    accepted_seq=0,
                    staged_seq=0,
                    processed_seq=0,
                )
                session.add(tenant)
            else:
                tenant.raw_dataset_id = dataset_id
            session.flush()
            session.expunge(tenant)
            return tenant
    except IntegrityError:  # another request created it meanwhile
        with session_scope() as session:
            found = session.get(CdcTenant, org)
            assert found is not None
            session.expunge(found)
            return found


def _raw_layout(catalog: Catalog, identifier: str) -> None:
    """Sort by cluster then entity (the seed's group-by-cluster scans read neighbours), and
    copy-on-write merges (bench/cdc_merge_mode.py measured both; readers then see plain data
    files)."""
    table = catalog.load_table(identifier)
    with table.update_sort_order() as order:
        order.asc("cluster_id", IdentityTransform()).asc("entity_id", IdentityTransform())
    with begin(table) as transaction:
        transaction.set_properties(
            {
                "write.merge.mode": "copy-on-write",
                "write.update.mode": "copy-on-write",
                "write.delete.mode": "copy-on-write",
                "write.distribution-mode": "hash",
                "write.metadata.metrics.column.entity_id": "full",
                "write.metadata.metrics.column.cluster_id": "full",
                "icebatch.cdc.raw": "true",
                # the processor reads the whole table every run: files of a few MB each still
                # make a task apiece (Spark's 128 MB default packs them all into one)
                "read.split.target-size": str(8 * 1024**2),
            }
        )


def get_config(session: Session, org: str) -> CdcConfigOut:
    tenant = session.get(CdcTenant, org)
    return _config_out(session, tenant, config_of(tenant))


def _config_out(session: Session, tenant: CdcTenant | None, config: CdcConfig) -> CdcConfigOut:
    dataset = (
        session.get(Dataset, tenant.raw_dataset_id) if tenant and tenant.raw_dataset_id else None
    )
    return CdcConfigOut(
        **config.model_dump(),
        raw_dataset_id=dataset.id if dataset else None,
        raw_table=f"{_catalog_name()}.{dataset.table_identifier}" if dataset else None,
    )


def _catalog_name() -> str:
    from app.config import get_settings

    return get_settings().catalog_name


def put_config(catalog: Catalog, org: str, config: CdcConfig) -> CdcConfig:
    """Replace the tenant's config. Pushdown columns may be added, never changed or dropped:
    the raw table holds their values."""
    names = [p.name for p in config.pushdown]
    if len(set(names)) != len(names):
        raise InvalidInput("pushdown: each column name once")
    clash = sorted(set(names) & RESERVED_COLUMNS)
    if clash:
        raise InvalidInput(f"pushdown: {', '.join(clash)} is a column of every raw table")
    tables = [s.table for s in config.sources]
    twice = sorted({t for t in tables if tables.count(t) > 1})
    if twice:
        raise InvalidInput(f"sources: each table once ({', '.join(twice)} is listed twice)")
    tenant = ensure_tenant(catalog, org, config)
    old = {p.name: p for p in config_of(tenant).pushdown}
    new = {p.name: p for p in config.pushdown}
    changed = [n for n in old if n not in new or new[n] != old[n]]
    if changed:
        raise Conflict(
            f"pushdown column(s) {', '.join(changed)} already hold values in the raw table: "
            "columns can be added, not changed or removed"
        )
    added = [p for n, p in new.items() if n not in old]
    with session_scope() as session:
        row = session.get(CdcTenant, org)
        assert row is not None
        assert row.raw_dataset_id is not None
        dataset = session.get(Dataset, row.raw_dataset_id)
        assert dataset is not None
        table = catalog.load_table(dataset.table_identifier)
        present = {f.name for f in table.schema().fields}
        if any(p.name not in present for p in added):
            _align_columns(table, config, dataset)
        row.config = config.model_dump(mode="json")
    return config


def _align_columns(table: Any, config: CdcConfig, dataset: Dataset) -> None:
    from app.lake.types import schema_from_specs

    wanted = schema_from_specs(raw_schema([p.model_dump() for p in config.pushdown]))
    current = {f.name for f in table.schema().fields}
    with table.update_schema() as update:
        for field in wanted.fields:
            if field.name not in current:
                update.add_column(field.name, field.field_type, doc=field.doc)
    dataset.schema_fields = [
        field_to_spec(f) for f in table.refresh().schema().fields if f.name != "_batch_id"
    ]


def tenant_of(catalog: Catalog, session: Session, org: str) -> CdcTenant:
    """The org's tenant row as `session` reads it (not locked), created with its raw table on
    first use. An accept reads it in its own transaction: a session of its own cost a request
    three more round trips to the store (12-17 % of a Debezium request under load)."""
    tenant = session.get(CdcTenant, org)
    if tenant is None or tenant.raw_dataset_id is None:
        tenant = ensure_tenant(catalog, org)  # committed apart; `locked` reads it afresh
    return tenant


def accept(catalog: Catalog, session: Session, org: str, body: bytes) -> EventsAccepted:
    """Give the request's events their sequence numbers and keep them (in `session`; durable
    when it commits). InvalidInput names every bad line; nothing is kept then."""
    tenant = tenant_of(catalog, session, org)
    config = config_of(tenant)
    now = clock.now()
    parsed = cdc_events.parse(
        body,
        oldest=cdc_events.window_start(now, config.retention_days),
        retention_days=config.retention_days,
    )
    row = locked(session, org)
    first, last = append_chunk(session, row, config, parsed, now)
    return EventsAccepted(accepted=len(parsed), first_sequence=first, last_sequence=last)


def locked(session: Session, org: str) -> CdcTenant:
    """The tenant's row, locked until `session` commits: its accepts go one at a time."""
    row = session.scalar(
        select(CdcTenant)
        .where(CdcTenant.org == org)
        .with_for_update()
        .execution_options(populate_existing=True)  # what the session read before the lock
    )
    assert row is not None
    return row


def append_chunk(
    session: Session, row: CdcTenant, config: CdcConfig, parsed: cdc_events.Parsed, now: datetime
) -> tuple[int, int]:
    """Keep `parsed` (not empty) as the tenant's next chunk, under its locked `row`: the first
    and last sequence numbers it got."""
    org = row.org
    first = row.accepted_seq + 1
    last = row.accepted_seq + len(parsed)
    newest = max(parsed.timestamp)
    row.accepted_seq = last
    if row.accepted_max_ts is None or newest > row.accepted_max_ts:
        row.accepted_max_ts = newest
    table = parsed.table(org, first, now)
    session.add(
        CdcChunk(
            org=org,
            first_seq=first,
            last_seq=last,
            count=len(parsed),
            min_ts=min(parsed.timestamp),
            max_ts=newest,
            accepted_at=now,
            body=to_ipc(table),
        )
    )
    if last - row.staged_seq >= config.backlog_threshold:
        ensure_job(session, org, JobKind.CDC_STAGE, None)
    session.flush()
    return first, last


def to_ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue()


def from_ipc(body: bytes) -> pa.Table:
    return pa.ipc.open_stream(io.BytesIO(body)).read_all()


def active_job(session: Session, org: str, kind: JobKind) -> Job | None:
    return session.scalar(
        select(Job).where(Job.org == org, Job.kind == kind.value, Job.state.in_(ACTIVE)).limit(1)
    )


def ensure_job(session: Session, org: str, kind: JobKind, subject_id: str | None) -> Job:
    """The tenant's queued or running job of `kind`, or a new one."""
    return active_job(session, org, kind) or jobs.enqueue(
        session, kind, org=org, subject_id=subject_id
    )


def force_process(catalog: Catalog, session: Session, org: str) -> ProcessStarted:
    """Stage what is waiting and process: the tenant's dumper (when events wait for it) and
    its processor (which waits for nothing: it applies what is staged when it runs)."""
    tenant = ensure_tenant(catalog, org)
    stage = None
    if repository.any_unstaged(session, org, tenant.staged_seq):
        stage = ensure_job(session, org, JobKind.CDC_STAGE, None)
    process = ensure_job(session, org, JobKind.CDC_PROCESS, tenant.raw_dataset_id)
    return ProcessStarted(stage_job_id=stage.id if stage else None, process_job_id=process.id)


def _seconds(later: datetime | None, earlier: datetime | None) -> float:
    if later is None or earlier is None:
        return 0.0
    return max(0.0, (later - earlier).total_seconds())


def lag(session: Session, org: str) -> CdcLag:
    tenant = session.get(CdcTenant, org)
    if tenant is None:
        return CdcLag(
            tenant=org,
            accepted=0,
            staged=0,
            processed=0,
            newest_accepted_timestamp=None,
            newest_staged_timestamp=None,
            newest_processed_timestamp=None,
            staging_lag_seconds=0.0,
            oldest_unstaged_age_seconds=0.0,
            replication_lag_seconds=0.0,
            oldest_unprocessed_age_seconds=0.0,
            processed_at=None,
        )
    return lag_of(session, tenant, clock.now())


def lag_of(session: Session, tenant: CdcTenant, now: datetime) -> CdcLag:
    oldest_unstaged = repository.oldest_unstaged_at(session, tenant.org, tenant.staged_seq)
    oldest_unprocessed = None
    if tenant.processed_seq < tenant.accepted_seq:
        oldest_unprocessed = repository.oldest_unprocessed_at(
            session, tenant.org, tenant.processed_seq
        )
    return CdcLag(
        tenant=tenant.org,
        accepted=tenant.accepted_seq,
        staged=tenant.staged_seq,
        processed=tenant.processed_seq,
        newest_accepted_timestamp=tenant.accepted_max_ts,
        newest_staged_timestamp=tenant.staged_max_ts,
        newest_processed_timestamp=tenant.processed_max_ts,
        staging_lag_seconds=_seconds(tenant.accepted_max_ts, tenant.staged_max_ts)
        if tenant.accepted_seq > tenant.staged_seq
        else 0.0,
        oldest_unstaged_age_seconds=_seconds(now, oldest_unstaged),
        replication_lag_seconds=_seconds(tenant.staged_max_ts, tenant.processed_max_ts)
        if tenant.staged_seq > tenant.processed_seq
        else 0.0,
        oldest_unprocessed_age_seconds=_seconds(now, oldest_unprocessed),
        processed_at=tenant.processed_at,
        streams=cdc_streams.lags(tenant.org, config_of(tenant).streams),
    )
