"""Stuck work, as the API and the UI show it: what is wrong and the action that resolves it."""

from __future__ import annotations

from pydantic import BaseModel, Field


class StuckOut(BaseModel):
    reason: str = Field(description="Why this is stuck (in plain words)")
    action: str = Field(description="What resolves it")
