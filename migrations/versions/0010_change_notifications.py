"""Change notifications: triggers on api_keys, batches, jobs and restatements send
`<kind>:<id>` on the channel `icebatch_changed` at commit (PostgreSQL only; the API's caches,
`app.invalidation`)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 01:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = {"api_keys": "key", "batches": "batch", "jobs": "job", "restatements": "restatement"}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    # NOTIFY is transactional: sent at commit, dropped on rollback, and a payload repeated in
    # one transaction is sent once (a set-based UPDATE of a row twice costs one message)
    op.execute(
        """
        CREATE FUNCTION icebatch_notify_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'DELETE' THEN
            PERFORM pg_notify('icebatch_changed', TG_ARGV[0] || ':' || OLD.id);
          ELSE
            PERFORM pg_notify('icebatch_changed', TG_ARGV[0] || ':' || NEW.id);
          END IF;
          RETURN NULL;
        END $$
        """
    )
    for table, kind in TABLES.items():
        op.execute(
            f"CREATE TRIGGER {table}_changed AFTER UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION icebatch_notify_changed('{kind}')"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in TABLES:
        op.execute(f"DROP TRIGGER IF EXISTS {table}_changed ON {table}")
    op.execute("DROP FUNCTION IF EXISTS icebatch_notify_changed()")
