"""What a finished job keeps as its `result`: one model per operation, stored by the job runtime
(`workers/runtime.py`) as `model_dump(mode="json", exclude_unset=True)`.

A field with a default is one a run may leave out (an early return): left unset, it is not
stored, so each stored result has exactly the keys its run set (API clients and tests read
them). A task's handler returns its model; handlers still returning a dict are being moved here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class JobResult(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExportResult(JobResult):
    """An export of a dataset's changes (`workers/changes/task.py`)."""

    path: str
    rows: int
    files: int
    kind: Literal["appended", "deleted"]
    from_snapshot_id: int | None
    to_snapshot_id: int | None
    data_files_read: int


class ExpireResult(JobResult):
    """Snapshot expiry, orphan cleanup and the erasure check (`workers/retention/task.py`)."""

    retained: list[int]
    expired: list[int]
    files_deleted: int
    bytes_deleted: int
    orphans_deleted: int
    pinned_by: dict[str, list[int]]
    ignored_pins: list[str]
    erased_restatements: list[str]


class CdcStageResult(JobResult):
    """A dumper run (`workers/cdc/stage.py`); only `staged` when the tenant is gone."""

    staged: int
    staged_through: int | None = None
    snapshots_expired: int | None = None


class CdcProcessResult(JobResult):
    """A processor run (`workers/cdc/process.py`); only `applied` and `watermark` when there
    was nothing to apply."""

    applied: int
    watermark: int
    entities: int | None = None
    upserted: int | None = None
    deleted: int | None = None
    relabelled: int | None = None
    refolded: int | None = None
    seconds: dict[str, float] | None = None


class IngestResult(JobResult):
    snapshot_id: int
    row_count: int


class RestatementResult(JobResult):
    restatement_id: str
    kind: str
    snapshot_id: int | None
    sequence_number: int | None
    commit_id: str | None
    tombstones_written: int | None
    rows_hidden: int | None
    batch_id: str | None
    predecessors: list[str] | None


class MaterializeResult(JobResult):
    snapshot_id: int | None
    recovered: bool = False
    nothing_to_do: bool = False
    materialized_seq: int | None = None
    previous_seq: int | None = None
    tombstones: int | None = None
    files_read: int | None = None
    delete_files_written: int | None = None
    delete_files_replaced: int | None = None
    positions: int | None = None
    timings: dict[str, float] | None = None


class RewriteResult(JobResult):
    """A vacuum's or a compaction's: its scan, then (unless a dry run or nothing to do) what
    its commit rewrote."""

    model_config = ConfigDict(extra="allow")  # the scan's figures differ by planner

    operation: str
    snapshot_id: int | None = None
    recovered: bool = False
    dry_run: bool = False
    nothing_to_do: bool = False
    rows_to_purge: int | None = None
    sequence_number: int | None = None
    iceberg_operation: str | None = None
    start_snapshot_id: int | None = None
    files_rewritten: int | None = None
    files_deleted: int | None = None
    files_unchanged: int | None = None
    files_written: int | None = None
    bytes_rewritten: int | None = None
    bytes_read: int | None = None
    bytes_written: int | None = None
    rows_read: int | None = None
    rows_written: int | None = None
    rows_purged: int | None = None
    tombstones_purged: int | None = None
    purged_request_ids: list[str] | None = None
    timings: dict[str, float] | None = None
