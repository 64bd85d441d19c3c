from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.base import IdMixin, TimestampMixin


class Dataset(IdMixin, TimestampMixin, Base):
    """One Iceberg table and what Icebatch knows of it."""

    __tablename__ = "datasets"
    __table_args__ = (UniqueConstraint("org", "name", name="uq_datasets_org_name"),)

    org: Mapped[str] = mapped_column(String(63), index=True)
    name: Mapped[str] = mapped_column(String(128))
    table_identifier: Mapped[str] = mapped_column(String(255), unique=True)
    schema_fields: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    partition: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    identity_columns: Mapped[list[str]] = mapped_column(JSON)
    # snapshot expiry and orphan cleanup policy (None: the settings' defaults)
    retention: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
