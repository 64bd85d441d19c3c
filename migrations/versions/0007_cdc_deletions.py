"""CDC replication: deleted entities (their last event and links), so the processor needs no
staged-history scan to tell a late event of a deleted entity from a re-creation

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 07:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cdc_deletions",
        sa.Column("org", sa.String(length=63), nullable=False),
        sa.Column("entity_id", sa.String(length=255), nullable=False),
        sa.Column("timestamp_us", sa.BigInteger(), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("related_ids", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("org", "entity_id", name=op.f("pk_cdc_deletions")),
    )


def downgrade() -> None:
    op.drop_table("cdc_deletions")
