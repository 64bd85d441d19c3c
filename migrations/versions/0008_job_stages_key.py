"""jobs remember each stage's start and end (stages) and the API key that created them (key_id)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 18:45:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("key_id", sa.String(length=36), nullable=True))
        batch.add_column(sa.Column("stages", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("stages")
        batch.drop_column("key_id")
