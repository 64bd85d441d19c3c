"""key scopes, expiry and last use; the append-only audit trail

Existing keys become `admin` keys: before scopes every key could do everything its org can
(vacuum, retention, keys), so `write` would silently take rights away from deployed clients
and break their maintenance calls. Operators narrow them by creating scoped keys and revoking
the old ones (`icebatch keys list` shows them as admin).

`audit_events` is append-only in the store itself: a trigger refuses every UPDATE and DELETE
(and, on PostgreSQL, TRUNCATE), whoever the client.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 18:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MESSAGE = "audit_events is append-only"

PG_FUNCTION = f"""
CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'insufficient_privilege';
END
$$
"""
PG_TRIGGERS = [
    "CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events "
    "FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()",
    "CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events "
    "FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()",
]
SQLITE_TRIGGERS = [
    f"CREATE TRIGGER audit_events_no_{verb.lower()} BEFORE {verb} ON audit_events "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
    for verb in ("UPDATE", "DELETE")
]


def upgrade() -> None:
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("scope", sa.String(length=8), server_default="admin", nullable=False)
        )
        batch_op.add_column(sa.Column("name", sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))

    op.create_table(
        "audit_events",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("org", sa.String(length=63), nullable=False),
        sa.Column("key_id", sa.String(length=36), nullable=True),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("method", sa.String(length=8), nullable=False),
        sa.Column("path", sa.String(length=512), nullable=False),
        sa.Column("target", sa.JSON(), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=True),
        sa.Column("status_code", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=8), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_audit_events")),
    )
    op.create_index("ix_audit_events_org_seq", "audit_events", ["org", "seq"], unique=False)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_FUNCTION)
        for statement in PG_TRIGGERS:
            op.execute(statement)
    else:
        for statement in SQLITE_TRIGGERS:
            op.execute(statement)


def downgrade() -> None:
    # dropping the table drops its triggers (the audit trail goes with the schema version)
    op.drop_index("ix_audit_events_org_seq", table_name="audit_events")
    op.drop_table("audit_events")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION audit_events_append_only()")

    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_column("last_used_at")
        batch_op.drop_column("expires_at")
        batch_op.drop_column("name")
        batch_op.drop_column("scope")
