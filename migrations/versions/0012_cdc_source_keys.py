"""CDC from Debezium: each source row's latest accepted change (log position, event time,
deleted), so redeliveries and late changes are recognized at accept time

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 15:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cdc_source_keys",
        sa.Column("org", sa.String(length=63), nullable=False),
        sa.Column("source", sa.String(length=255), nullable=False),
        sa.Column("table_name", sa.String(length=255), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("position", sa.String(length=128), nullable=False),
        sa.Column("timestamp_us", sa.BigInteger(), nullable=False),
        sa.Column("deleted", sa.Boolean(), nullable=False),
        sa.Column("recent", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint(
            "org", "source", "table_name", "key", name=op.f("pk_cdc_source_keys")
        ),
    )


def downgrade() -> None:
    op.drop_table("cdc_source_keys")
