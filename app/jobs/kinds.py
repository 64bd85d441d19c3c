"""The typed job registry: each kind of background work, the Celery task that runs it and the
payload it carries. `jobs.enqueue` and the workers' task definitions both read it, so a task
name is written once and a payload is validated on both sides."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict


class TaskName(StrEnum):
    """Celery task names (stored on job and outbox rows: never rename one)."""

    INGEST = "icebatch.ingest"
    RESTATE = "icebatch.restate"
    REWRITE = "icebatch.rewrite"
    EXPIRE = "icebatch.expire"
    EXPORT = "icebatch.export"
    CDC_STAGE = "icebatch.cdc.stage"
    CDC_PROCESS = "icebatch.cdc.process"
    MATERIALIZE = "icebatch.materialize"
    CDC_SCHEDULE = "icebatch.cdc.schedule"  # the beat's CDC pass: no job row
    CDC_STREAMS = "icebatch.cdc.streams"  # a tenant's Debezium Redis streams read: no job row
    SCHEDULE = "icebatch.schedule"  # the beat's maintenance pass: no job row
    PRUNE = "icebatch.prune"  # the beat's pruning of the metadata store: no job row


class Payload(BaseModel):
    """A job's arguments beyond its subject; kinds without any use this one."""

    model_config = ConfigDict(frozen=True)


class VacuumPayload(Payload):
    mode: Literal["full", "partial"] = "full"
    max_files: int | None = None
    max_bytes: int | None = None
    tombstones: int | None = None
    dry_run: bool = False
    trigger: str | None = None  # why the scheduler started it; None when a caller did


class CompactPayload(Payload):
    strategy: Literal["binpack", "sort"] = "binpack"
    target_file_bytes: int
    min_input_files: int = 2
    sort_by: list[str] | None = None
    dry_run: bool = False


class ExportPayload(Payload):
    kind: Literal["appended", "deleted"]
    from_snapshot_id: int | None = None
    to_snapshot_id: int | None = None


@dataclass(frozen=True)
class KindSpec:
    task: TaskName
    payload: type[Payload]


class JobKind(StrEnum):
    """What a job does; its subject is a batch, a restatement or a dataset."""

    INGEST = "ingest"  # subject: batch
    REVERT = "revert"  # subject: restatement
    REPLAY = "replay"  # subject: restatement
    GDPR = "gdpr"  # subject: restatement
    VACUUM = "vacuum"  # subject: dataset
    COMPACT = "compact"  # subject: dataset
    EXPIRE = "expire"  # subject: dataset
    EXPORT = "export"  # subject: dataset
    CDC_STAGE = "cdc_stage"  # subject: none (the job's org is the tenant)
    CDC_PROCESS = "cdc_process"  # subject: the tenant's raw dataset
    MATERIALIZE = "materialize"  # subject: dataset (tombstones → Iceberg position deletes)

    @property
    def spec(self) -> KindSpec:
        return REGISTRY[self]

    @property
    def task(self) -> TaskName:
        return REGISTRY[self].task

    def parse(self, payload: dict[str, object]) -> Payload:
        """The stored payload as this kind's model (a ValidationError when it does not fit)."""
        return REGISTRY[self].payload.model_validate(payload)


REGISTRY: dict[JobKind, KindSpec] = {
    JobKind.INGEST: KindSpec(TaskName.INGEST, Payload),
    JobKind.REVERT: KindSpec(TaskName.RESTATE, Payload),
    JobKind.REPLAY: KindSpec(TaskName.RESTATE, Payload),
    JobKind.GDPR: KindSpec(TaskName.RESTATE, Payload),
    JobKind.VACUUM: KindSpec(TaskName.REWRITE, VacuumPayload),
    JobKind.COMPACT: KindSpec(TaskName.REWRITE, CompactPayload),
    JobKind.EXPIRE: KindSpec(TaskName.EXPIRE, Payload),
    JobKind.EXPORT: KindSpec(TaskName.EXPORT, ExportPayload),
    JobKind.CDC_STAGE: KindSpec(TaskName.CDC_STAGE, Payload),
    JobKind.CDC_PROCESS: KindSpec(TaskName.CDC_PROCESS, Payload),
    JobKind.MATERIALIZE: KindSpec(TaskName.MATERIALIZE, Payload),
}
RESTATEMENT_KINDS = (JobKind.REVERT, JobKind.REPLAY, JobKind.GDPR)
REWRITE_KINDS = (JobKind.VACUUM, JobKind.COMPACT)
