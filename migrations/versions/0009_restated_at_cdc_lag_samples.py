"""batches.restated_at, when a revert or replay restated a batch (its completed_at stays
when it landed); cdc_lag_samples, the replication lag history

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 18:45:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("batches") as batch:
        batch.add_column(sa.Column("restated_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "cdc_lag_samples",
        sa.Column("org", sa.String(length=63), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("accepted", sa.BigInteger(), nullable=False),
        sa.Column("staged", sa.BigInteger(), nullable=False),
        sa.Column("processed", sa.BigInteger(), nullable=False),
        sa.Column("staging_lag_seconds", sa.Float(), nullable=False),
        sa.Column("replication_lag_seconds", sa.Float(), nullable=False),
        sa.Column("oldest_unprocessed_age_seconds", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("org", "at", name=op.f("pk_cdc_lag_samples")),
    )


def downgrade() -> None:
    op.drop_table("cdc_lag_samples")
    with op.batch_alter_table("batches") as batch:
        batch.drop_column("restated_at")
