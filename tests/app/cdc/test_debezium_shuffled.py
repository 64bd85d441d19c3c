"""Debezium Server's HTTP sink bodies, the property: a batch of random changes of a few rows,
shuffled, gives the same changes, and their positions recover each row's order."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.cdc.debezium import dedupe_key, parse
from tests.app.cdc.debezium_values import (
    body,
    event,
    mongo_source,
    mysql_source,
    pg_source,
    sqlserver_source,
)
from tests.fixtures.profile import budget


def _lsn_text(value: int) -> str:
    text = f"{value:020x}"
    return f"{text[:8]}:{text[8:16]}:{text[16:]}"


@st.composite
def histories(draw: st.DrawFn) -> tuple[str, list[tuple[Any, str, tuple[int, ...]]]]:
    """A connector's stream: snapshot reads of distinct rows at the position the snapshot began
    at, then streamed changes at strictly rising positions → (connector, [(value, entity key,
    expected position)] in stream order)."""
    connector = draw(st.sampled_from(["postgresql", "mysql", "sqlserver", "mongodb"]))
    ids = draw(st.lists(st.integers(1, 6), unique=True, max_size=4).map(sorted))
    steps = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 500)), max_size=25))
    ops = draw(st.lists(st.sampled_from("cudt"), min_size=len(steps), max_size=len(steps)))
    rows = draw(st.lists(st.integers(1, 6), min_size=len(steps), max_size=len(steps)))
    # a cursor in the connector's own terms, moved by each step: (kind of move, distance)
    cursor = {
        "postgresql": [draw(st.integers(0, 10**6)), draw(st.integers(1, 10**9))],
        "mysql": [draw(st.integers(1, 999_998)), draw(st.integers(4, 10**6)), 0],
        "sqlserver": [draw(st.integers(1, 2**70)), 0, 0],
        "mongodb": [draw(st.integers(1_600_000_000, 1_800_000_000)), 1],
    }[connector]
    history: list[tuple[Any, str, tuple[int, ...]]] = []

    def value(op: str, row: int, snapshot: bool) -> tuple[Any, str, tuple[int, ...]]:
        image: dict[str, Any] = {"id": row, "v": len(history)}
        place: tuple[int, ...]
        if connector == "postgresql":
            committed, lsn = cursor
            source = pg_source(lsn, committed or None)
            place = (committed, lsn)
        elif connector == "mysql":
            source = mysql_source(f"mysql-bin.{cursor[0]:06d}", cursor[1], cursor[2])
            place = tuple(cursor)
        elif connector == "sqlserver":
            change = _lsn_text(cursor[1]) if cursor[1] else None
            source = sqlserver_source(_lsn_text(cursor[0]), change, cursor[2] or None)
            place = tuple(cursor)
        else:
            image = {"_id": {"$numberLong": str(row)}, "v": len(history)}
            ms = draw(st.integers(0, 999))
            source = mongo_source(cursor[0] * 1000 + ms, cursor[1])
            place = tuple(cursor)
        source["snapshot"] = "true" if snapshot else "false"
        if op == "t":
            payload: Any = {"source": source, "op": "t", "ts_ms": 1}
        elif op == "d":
            payload = event("d", source, before=image)
        else:
            after = json.dumps(image) if connector == "mongodb" else image
            payload = event(op, source, after=after)
        key = "" if op == "t" else str(row)
        return payload, key, (*place, 0 if snapshot else 1)

    for row in ids:
        history.append(value("r", row, True))
    for (kind, distance), op, row in zip(steps, ops, rows, strict=True):
        if connector == "postgresql":  # a new transaction: the commit rises, the lsn is any
            if kind == 0:
                cursor[1] += distance
            else:
                cursor[0] += distance
                cursor[1] = draw(st.integers(1, 10**9))
        elif connector == "mysql":  # next row, next event, next binlog file
            cursor[:] = [
                [cursor[0], cursor[1], cursor[2] + 1],
                [cursor[0], cursor[1] + distance, 0],
                [cursor[0] + 1, 4, 0],
            ][kind]
        elif connector == "sqlserver":  # next serial, next change in the commit, next commit
            cursor[:] = [
                [cursor[0], cursor[1], cursor[2] + 1],
                [cursor[0], cursor[1] + distance, 0],
                [cursor[0] + distance, 0, 0],
            ][kind]
        else:  # next ord in the second, next second
            cursor[:] = [cursor[0], cursor[1] + 1] if kind == 0 else [cursor[0] + distance, 1]
        streamed_op = "u" if op == "t" and connector in ("sqlserver", "mongodb") else op
        history.append(value(streamed_op, row, False))
    return connector, history


@budget(60)
@given(history=histories(), data=st.data())
def test_a_shuffled_batch_gives_the_same_changes_and_positions_recover_the_order(
    history: tuple[str, list[tuple[Any, str, tuple[int, ...]]]], data: st.DataObject
) -> None:
    connector, stream = history
    posted = data.draw(st.permutations([*stream, (None, "", ())]))
    parsed = parse(body(*(value for value, _, _ in posted)))
    source_name = {
        "postgresql": "PostgreSQL_server",
        "mysql": "mysql-server-1",
        "sqlserver": "server1",
        "mongodb": "fulfillment",
    }[connector]
    table = "inventory.customers" if connector in ("mysql", "mongodb") else "public.customers"
    table = "dbo.customers" if connector == "sqlserver" else table
    expected = {(source_name, table, key, place) for _, key, place in stream}
    assert {dedupe_key(c) for c in parsed.changes} == expected
    assert parsed.tombstones == 1
    assert [c.index for c in parsed.changes] == [
        i for i, (value, _, _) in enumerate(posted, start=1) if value is not None
    ]
    # snapshot reads of distinct rows share a position: the key orders them, as generated
    ordered = sorted(parsed.changes, key=lambda c: (c.position, c.key))
    assert [(c.key, c.position) for c in ordered] == [(key, place) for _, key, place in stream]
