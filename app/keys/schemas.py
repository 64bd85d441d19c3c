from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.models import Scope
from app.pages import Page

DURATION_PATTERN = r"^[1-9][0-9]{0,5}[smhdw]$"


class KeyCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"scope": "write", "name": "ingest-service", "expires_in": "90d"}]
        }
    )

    scope: Scope = Field(description="read < write < admin; each includes the ones before it")
    name: str | None = Field(default=None, max_length=128, description="What the key is for")
    expires_in: str | None = Field(
        default=None,
        pattern=DURATION_PATTERN,
        description="Lifetime: a number and s, m, h, d or w (`30d`, `12h`); none: never",
    )


class KeyOut(BaseModel):
    """A key as listed: never its secret."""

    id: str
    prefix: str = Field(description="The key's public part: `ib_<prefix>_…`")
    org: str
    scope: Scope
    name: str | None
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None


class KeyCreated(KeyOut):
    key: str = Field(description="The API key: shown this once, store it now")


class KeyList(Page):
    items: list[KeyOut]
