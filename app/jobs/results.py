"""The typed result of each job kind: what a job's `result` holds once it succeeded.

A model per operation; stored with `model_dump(mode="json", exclude_unset=True)`, so a result
holds exactly the fields its path set (a recovered commit's result is short, a dry run's has
no snapshot). The API serves them as the job's `result` object.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class JobResult(BaseModel):
    """The base of every job's result."""

    model_config = ConfigDict(extra="forbid")


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
