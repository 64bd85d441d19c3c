"""forgotten snapshots: how many expired-snapshot records of a dataset the pruning pass forgot

`expired_snapshots` held one row per snapshot retention ever expired, for good. The pruning pass
now forgets a record `ICEBATCH_EXPIRED_SNAPSHOT_RETENTION_DAYS` after its expiry unless a batch,
a restatement or a consumer names its snapshot or it is the dataset's oldest (app/pruning);
`forgotten_snapshots` keeps their count per dataset, which an erasure's receipt includes.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 18:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "forgotten_snapshots",
        sa.Column("dataset_id", sa.String(length=36), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("dataset_id", name=op.f("pk_forgotten_snapshots")),
    )


def downgrade() -> None:
    op.drop_table("forgotten_snapshots")
