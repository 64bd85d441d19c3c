"""The tenants of `bench.cdc`: each one's events generated before anything is timed (native JSON
lines, or Debezium's PostgreSQL change event values in arrays of 200), and its client's posts."""

from __future__ import annotations

import json
import random
import time
import uuid
from datetime import datetime, timedelta
from typing import Any

import httpx

NDJSON = {"Content-Type": "application/x-ndjson"}
JSON = {"Content-Type": "application/json"}
DEBEZIUM_BATCH = 200  # Debezium Server's HTTP sink: batch.max-size's default
CITIES = ["Lyon", "Oslo", "Porto", "Graz", "Turku", "Cork"]


class Tenant:
    def __init__(self, name: str, entities: int, seed: int, debezium: bool = False) -> None:
        self.name = name
        self.org = f"bench_cdc_{name}_{uuid.uuid4().hex[:6]}"
        self.entities = entities
        self.rng = random.Random(seed)
        self.key = ""
        self.client: httpx.Client | None = None
        self.accepted = 0
        self.debezium = debezium
        self.lsn = 1_000  # the source's log position (Debezium)
        self.documents: dict[int, dict[str, Any]] = {}  # a row's image (Debezium: full images)

    def value(self, op: str, entity: int, at: datetime, i: int) -> str:
        """The event as Debezium 2.7's PostgreSQL connector writes it (schemas off): a PATCH
        becomes an update with the row's whole new image."""
        self.lsn += 1
        ts_ms = int(at.timestamp() * 1000)
        source = {
            "version": "2.7.3.Final",
            "connector": "postgresql",
            "name": f"bench_{self.name}",
            "ts_ms": ts_ms,
            "snapshot": "false",
            "db": "crm",
            "sequence": f'["{self.lsn - 1}","{self.lsn}"]',
            "ts_us": ts_ms * 1000,
            "ts_ns": ts_ms * 1_000_000,
            "schema": "public",
            "table": "customers",
            "txId": self.lsn // 4,
            "lsn": self.lsn,
            "xmin": None,
        }
        row = {"id": f"{self.name}{entity:07d}"}
        sent_ms = ts_ms + 3  # Debezium 2.6 and later add the times in microseconds and nanoseconds
        value: dict[str, Any] = {
            "source": source,
            "transaction": None,
            "ts_ms": sent_ms,
            "ts_us": sent_ms * 1000,
            "ts_ns": sent_ms * 1_000_000,
        }
        if op == "DELETE":
            self.documents.pop(entity, None)
            value |= {"op": "d", "before": row, "after": None}
        else:
            patch = json.loads(self.event(op, entity, at, i))["payload"]
            old = self.documents.get(entity)
            image = {**(old or {}), **{k: v for k, v in patch.items() if v is not None}}
            self.documents[entity] = image
            value |= {"op": "u" if old else "c", "before": None, "after": {**row, **image}}
        return json.dumps(value, separators=(",", ":"))

    def bodies(self, ops: list[tuple[str, int, datetime, int]], chunk: int) -> list[bytes]:
        """Request bodies: JSON lines of `chunk` events, or (Debezium) JSON arrays of 200
        values, the HTTP sink's batch."""
        if self.debezium:
            values = [self.value(*op) for op in ops]
            return [
                ("[" + ",".join(values[i : i + DEBEZIUM_BATCH]) + "]").encode()
                for i in range(0, len(values), DEBEZIUM_BATCH)
            ]
        lines = [self.event(*op) for op in ops]
        return ["\n".join(lines[i : i + chunk]).encode() for i in range(0, len(lines), chunk)]

    def event(self, op: str, entity: int, at: datetime, i: int) -> str:
        e: dict[str, Any] = {
            "op": op,
            "entity_id": f"{self.name}{entity:07d}",
            "record_type": "customer",
            "timestamp": int(at.timestamp() * 1000),
            "source": "crm",
        }
        if self.rng.random() < 0.03:
            e["related_ids"] = [f"{self.name}{self.rng.randrange(self.entities):07d}"]
        if op == "PUT":
            e["payload"] = {
                "name": f"customer {entity}",
                "email": f"c{entity}@example.com",
                "tier": self.rng.randint(0, 4),
                "address": {"city": self.rng.choice(CITIES), "zip": f"{entity % 99999:05d}"},
                "tags": [i % 7, i % 11],
            }
        elif op == "PATCH":
            e["payload"] = {
                "tier": self.rng.randint(0, 4),
                "visits": i,
                "address": {"city": self.rng.choice(CITIES)},
                "tags": None if self.rng.random() < 0.1 else [i % 5],
            }
        return json.dumps(e, separators=(",", ":"))

    def creation(self, base: datetime, chunk: int) -> list[bytes]:
        ops = [("PUT", n, base + timedelta(microseconds=n), n) for n in range(self.entities)]
        return self.bodies(ops, chunk)

    def stream(self, start: datetime, seconds: int, per_second: int) -> list[list[bytes]]:
        """Each second's bodies: one of JSON lines, or (Debezium) arrays of 200."""
        out = []
        for s in range(seconds):
            ops = []
            for j in range(per_second):
                at = start + timedelta(seconds=s, microseconds=j)
                if self.rng.random() < 0.05 and not self.debezium:  # Debezium: the log's order
                    at -= timedelta(seconds=self.rng.uniform(1, 600))
                op = self.rng.choices(("PUT", "PATCH", "DELETE"), (30, 60, 10))[0]
                ops.append((op, self.rng.randrange(self.entities), at, s * 10_000 + j))
            out.append(self.bodies(ops, max(1, per_second)))
        return out

    def post(self, body: bytes) -> dict[str, Any]:
        assert self.client is not None
        path, headers = ("/v1/cdc/debezium", JSON) if self.debezium else ("/v1/cdc/events", NDJSON)
        for attempt in range(5):
            answer = self.client.post(path, content=body, headers=headers)
            if answer.status_code == 202:
                accepted: dict[str, Any] = answer.json()
                self.accepted = max(self.accepted, accepted["last_sequence"] or 0)
                return accepted
            if answer.status_code not in (429, 503) or attempt == 4:
                raise RuntimeError(f"{answer.status_code}: {answer.text[:500]}")
            time.sleep(float(answer.headers.get("Retry-After", "1")))
        raise AssertionError("unreachable")

    def lag(self) -> dict[str, Any]:
        assert self.client is not None
        figures: dict[str, Any] = self.client.get("/v1/cdc/lag").json()
        return figures
