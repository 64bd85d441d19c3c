"""The CDC store's lookups by many keys (`repository.source_keys`, `_rows_in`): the rows of
exactly the keys asked for, in both of PostgreSQL's forms (an index probe per key, a join of
the keys), and the probe form reads no more of the table than the keys it looks up when the
table has no planner statistics (autovacuum off, or a table growing faster than it analyzes)."""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import psycopg
import pytest
from sqlalchemy import text

from app.cdc import repository
from app.db import get_engine, session_scope
from tests.fixtures.environments import Environment

ROWS = 3_000


def _seed(org: str) -> dict[str, tuple[str, int]]:
    """ROWS keys of one source table (and as many of another), as the Debezium accept keeps
    them: {key: (position, timestamp)} of the first table, the model."""
    model = {f"k{i:06d}": (f"{i:025d}", i) for i in range(ROWS)}
    rows: list[dict[str, Any]] = [
        {
            "org": org,
            "source": "pg",
            "table_name": table,
            "key": key,
            "position": position,
            "timestamp_us": ts,
            "deleted": False,
            "recent": [],
        }
        for table in ("inventory.customers", "inventory.orders")
        for key, (position, ts) in model.items()
    ]
    with session_scope() as session:
        repository.save_source_keys(session, rows)
    return model


@pytest.fixture
def seeded(stack: Environment) -> tuple[str, dict[str, tuple[str, int]]]:
    org = f"lookup-{uuid.uuid4().hex[:8]}"
    return org, _seed(org)


@pytest.mark.parametrize("size", [1, 200, 1_999, 2_000, 2_001, 2_500])
def test_lookup_returns_exactly_the_keys_asked_for(
    seeded: tuple[str, dict[str, tuple[str, int]]], size: int
) -> None:
    org, model = seeded
    rng = random.Random(size)
    present = rng.sample(sorted(model), min(size, len(model)) - size // 10)
    missing = [f"absent{i}" for i in range(size - len(present))]
    asked = present + missing + present[:5]  # repeated keys are asked once
    with session_scope() as session:
        rows = repository.source_keys(session, org, "pg", "inventory.customers", asked)
    got = {key: (position, ts) for key, position, ts, _, _ in rows}
    assert len(rows) == len(got)  # no key twice
    assert got == {key: model[key] for key in present}


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """What the driver is given to run (the lookup goes to it past SQLAlchemy)."""
    seen: list[tuple[str, Any]] = []
    execute = psycopg.Cursor.execute

    def keep(cursor: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        seen.append((str(query), params))
        return execute(cursor, query, params, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", keep)
    return seen


def _rows_read(plan: dict[str, Any], table: str) -> int:
    """Rows the plan's scans of `table` returned, over all their loops."""
    own = plan.get("Relation Name") == table and "Scan" in plan["Node Type"]
    read = plan["Actual Rows"] * plan["Actual Loops"] if own else 0
    return read + sum(_rows_read(child, table) for child in plan.get("Plans", []))


@pytest.mark.parametrize("stack", ["postgres"], indirect=True)
def test_a_few_keys_are_probed_not_joined_with_the_table(
    seeded: tuple[str, dict[str, tuple[str, int]]], statements: list[tuple[str, Any]]
) -> None:
    """A Debezium request looks up its ~200 rows' keys. Joined as a table on a table without
    statistics, PostgreSQL hashed every row of the org's source table first (the planner took
    the org's part for one row): 100 ms a request at 100,000 keys, growing with the table."""
    org, model = seeded
    asked = random.Random(7).sample(sorted(model), 200)
    with session_scope() as session:
        analyzed = session.execute(
            text(
                "SELECT last_analyze, last_autoanalyze FROM pg_stat_user_tables "
                "WHERE relname = 'cdc_source_keys'"
            )
        ).one()
        rows = repository.source_keys(session, org, "pg", "inventory.customers", asked)
    assert len(rows) == len(asked)
    lookups = [(s, p) for s, p in statements if "FROM cdc_source_keys" in s]
    assert len(lookups) == 1
    statement, parameters = lookups[0]
    with get_engine().connect() as conn:
        raw: Any = conn.connection.dbapi_connection
        with raw.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters)
            plan = cursor.fetchone()[0][0]["Plan"]
    read = _rows_read(plan, "cdc_source_keys")
    assert read <= len(asked), (read, analyzed, json.dumps(plan)[:2000])


def test_probe_and_join_forms_agree(
    seeded: tuple[str, dict[str, tuple[str, int]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same lookup through both forms (the threshold moved), other tables' rows never in it."""
    org, model = seeded
    asked = random.Random(3).sample(sorted(model), 300) + ["absent"]
    answers = []
    for probe_keys in (0, 10_000):
        monkeypatch.setattr(repository, "PROBE_KEYS", probe_keys)
        with session_scope() as session:
            answers.append(
                sorted(repository.source_keys(session, org, "pg", "inventory.customers", asked))
            )
    assert answers[0] == answers[1]
    assert {r[0] for r in answers[0]} == set(asked) - {"absent"}
