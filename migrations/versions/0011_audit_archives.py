"""audit archives: the mark below which an org's audit events live in its Iceberg table

Audit events older than `ICEBATCH_AUDIT_RETENTION_DAYS` move to the org's Iceberg table
`<org>._audit` (app/audit/archive.py). `audit_archives` holds, per org, the highest `seq` the
table holds (`archived_through_seq`); the store now lets a DELETE of `audit_events` through
for rows at or below their org's mark only. UPDATE (and, on PostgreSQL, TRUNCATE) is still
refused, and the mark itself can only go up: `audit_archives` refuses DELETE and an UPDATE
that lowers it.

On SQLite `audit_events.seq` becomes AUTOINCREMENT: a plain INTEGER PRIMARY KEY re-uses the
largest `seq` once its row is deleted, and a moved event's `seq` must never name another event.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 05:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MESSAGE = "audit_events is append-only"
MARK_MESSAGE = "audit_archives only moves forward"
ABOVE_MARK = (
    "OLD.seq > COALESCE((SELECT archived_through_seq FROM audit_archives "
    "WHERE audit_archives.org = OLD.org), 0)"
)

PG_DELETE_GUARD = f"""
CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND NOT ({ABOVE_MARK}) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'insufficient_privilege';
END
$$
"""
PG_MARK_GUARD = [
    f"""
    CREATE FUNCTION audit_archives_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND NEW.org = OLD.org
           AND NEW.archived_through_seq >= OLD.archived_through_seq THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION '{MARK_MESSAGE}' USING ERRCODE = 'insufficient_privilege';
    END
    $$
    """,
    "CREATE TRIGGER audit_archives_no_going_back BEFORE UPDATE OR DELETE ON audit_archives "
    "FOR EACH ROW EXECUTE FUNCTION audit_archives_forward_only()",
    "CREATE TRIGGER audit_archives_no_truncate BEFORE TRUNCATE ON audit_archives "
    "FOR EACH STATEMENT EXECUTE FUNCTION audit_archives_forward_only()",
]
PG_ALL_REFUSED = f"""
CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'insufficient_privilege';
END
$$
"""

SQLITE_EVENT_GUARD = [
    "CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END",
    f"CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events WHEN {ABOVE_MARK} "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END",
]
SQLITE_MARK_GUARD = [
    "CREATE TRIGGER audit_archives_no_going_back BEFORE UPDATE ON audit_archives "
    "WHEN NEW.org != OLD.org OR NEW.archived_through_seq < OLD.archived_through_seq "
    f"BEGIN SELECT RAISE(ABORT, '{MARK_MESSAGE}'); END",
    "CREATE TRIGGER audit_archives_no_delete BEFORE DELETE ON audit_archives "
    f"BEGIN SELECT RAISE(ABORT, '{MARK_MESSAGE}'); END",
]
SQLITE_OLD_GUARD = [
    f"CREATE TRIGGER audit_events_no_{verb.lower()} BEFORE {verb} ON audit_events "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
    for verb in ("UPDATE", "DELETE")
]


def _sqlite_autoincrement(on: bool) -> None:
    """Rebuild audit_events with (or without) AUTOINCREMENT; the rebuild drops its triggers."""
    op.execute("DROP TRIGGER IF EXISTS audit_events_no_update")
    op.execute("DROP TRIGGER IF EXISTS audit_events_no_delete")
    with op.batch_alter_table(
        "audit_events", recreate="always", table_kwargs={"sqlite_autoincrement": on}
    ):
        pass


def upgrade() -> None:
    op.create_table(
        "audit_archives",
        sa.Column("org", sa.String(length=63), nullable=False),
        sa.Column("archived_through_seq", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("org", name=op.f("pk_audit_archives")),
    )
    # the pass finds the orgs with events past the retention without reading the whole trail
    op.create_index("ix_audit_events_at", "audit_events", ["at"], unique=False)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_DELETE_GUARD)
        for statement in PG_MARK_GUARD:
            op.execute(statement)
        return
    _sqlite_autoincrement(True)
    for statement in SQLITE_EVENT_GUARD + SQLITE_MARK_GUARD:
        op.execute(statement)


def downgrade() -> None:
    # the events already moved stay in the org's Iceberg table; the SQL rows left are kept
    op.drop_index("ix_audit_events_at", table_name="audit_events")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TABLE audit_archives")  # drops its triggers
        op.execute("DROP FUNCTION audit_archives_forward_only()")
        op.execute(PG_ALL_REFUSED)
        return
    op.drop_table("audit_archives")
    _sqlite_autoincrement(False)
    for statement in SQLITE_OLD_GUARD:
        op.execute(statement)
