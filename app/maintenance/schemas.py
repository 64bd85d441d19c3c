from __future__ import annotations

from enum import StrEnum
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class VacuumMode(StrEnum):
    FULL = "full"
    PARTIAL = "partial"


class VacuumRequest(BaseModel):
    """A vacuum: `full` purges every active tombstone; `partial` stays within its budgets."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"mode": "full"}, {"mode": "partial", "max_files": 50, "dry_run": True}]
        }
    )

    mode: VacuumMode = VacuumMode.FULL
    max_files: int | None = Field(default=None, ge=1, description="Partial: files per run.")
    max_bytes: int | None = Field(default=None, ge=1, description="Partial: bytes per run.")
    tombstones: int | None = Field(
        default=None, ge=1, description="Partial: the oldest N tombstones (by commit) only."
    )
    dry_run: bool = Field(default=False, description="Plan only: files, bytes, rows to purge.")

    @model_validator(mode="after")
    def _budgets(self) -> Self:
        budgets = (self.max_files, self.max_bytes, self.tombstones)
        if self.mode is VacuumMode.PARTIAL and all(b is None for b in budgets):
            raise ValueError("a partial vacuum needs max_files, max_bytes or tombstones")
        if self.mode is VacuumMode.FULL and any(b is not None for b in budgets):
            raise ValueError("budgets apply to mode 'partial' only")
        return self


class CompactStrategy(StrEnum):
    BINPACK = "binpack"
    SORT = "sort"


class CompactRequest(BaseModel):
    """Compaction: `binpack` merges a partition's small files; `sort` rewrites each partition's
    files sorted (by `sort_by`, default the table's sort order within the partition)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"strategy": "binpack", "target_file_bytes": 134217728},
                {"strategy": "sort", "sort_by": ["user_id"]},
            ]
        }
    )

    strategy: CompactStrategy = CompactStrategy.BINPACK
    target_file_bytes: int | None = Field(
        default=None, ge=1024, description="The size files are packed to (default: the table's)"
    )
    min_input_files: int = Field(
        default=2, ge=1, description="A partition with fewer small files is left alone"
    )
    sort_by: list[str] | None = Field(default=None, description="Sort: the columns to sort by")
    dry_run: bool = Field(default=False, description="Plan only: the files it would rewrite")
