from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.pages import Page


class AuditEventOut(BaseModel):
    seq: int = Field(description="Position in the trail (larger is newer)")
    at: datetime
    org: str
    key_id: str | None = Field(description="The id of the key that called (never the key)")
    action: str = Field(description="A stable name, e.g. `datasets.create`, `batches.act.REVERT`")
    method: str
    path: str
    target: dict[str, Any] = Field(
        description="The ids of the path, and `result_id`: the id the response returned"
    )
    request_id: str | None
    status_code: int
    outcome: str = Field(description="ok | error | denied")


class AuditPage(Page):
    items: list[AuditEventOut]
