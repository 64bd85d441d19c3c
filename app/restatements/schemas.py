from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.pages import Page


class TombstoneOut(BaseModel):
    namespace: str = Field(description="The column the tombstone matches")
    namespace_field_id: int
    id: str
    added_on: datetime
    added_snapshot_id: int
    added_sequence_number: int
    evict_by: datetime | None
    meta: dict[str, Any]


class TombstonePage(Page):
    snapshot_id: int | None
    total: int
    items: list[TombstoneOut]
