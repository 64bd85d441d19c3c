"""CDC replication: tenants, accepted chunks, identity clusters

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 14:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cdc_tenants",
        sa.Column("org", sa.String(length=63), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("raw_dataset_id", sa.String(length=36), nullable=True),
        sa.Column("accepted_seq", sa.BigInteger(), nullable=False),
        sa.Column("accepted_max_ts", sa.DateTime(timezone=True), nullable=True),
        sa.Column("staged_seq", sa.BigInteger(), nullable=False),
        sa.Column("staged_max_ts", sa.DateTime(timezone=True), nullable=True),
        sa.Column("processed_seq", sa.BigInteger(), nullable=False),
        sa.Column("processed_max_ts", sa.DateTime(timezone=True), nullable=True),
        sa.Column("processed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("org", name=op.f("pk_cdc_tenants")),
    )
    op.create_table(
        "cdc_chunks",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("org", sa.String(length=63), nullable=False),
        sa.Column("first_seq", sa.BigInteger(), nullable=False),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("min_ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("max_ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("accepted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("staged_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cdc_chunks")),
    )
    op.create_index("ix_cdc_chunks_org_first_seq", "cdc_chunks", ["org", "first_seq"], unique=True)
    op.create_index("ix_cdc_chunks_staged_at", "cdc_chunks", ["staged_at"])
    op.create_table(
        "cdc_identities",
        sa.Column("org", sa.String(length=63), nullable=False),
        sa.Column("entity_id", sa.String(length=255), nullable=False),
        sa.Column("cluster_id", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("org", "entity_id", name=op.f("pk_cdc_identities")),
    )
    op.create_index("ix_cdc_identities_org_cluster", "cdc_identities", ["org", "cluster_id"])


def downgrade() -> None:
    op.drop_index("ix_cdc_identities_org_cluster", table_name="cdc_identities")
    op.drop_table("cdc_identities")
    op.drop_index("ix_cdc_chunks_staged_at", table_name="cdc_chunks")
    op.drop_index("ix_cdc_chunks_org_first_seq", table_name="cdc_chunks")
    op.drop_table("cdc_chunks")
    op.drop_table("cdc_tenants")
