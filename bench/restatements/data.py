"""The generated batches (Parquet files without `_batch_id`), the identity universe the GDPR
tombstones are drawn from, and the twins' files with the hidden users' rows left out."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench.common import events
from bench.restatements.shared import DAYS, UNIVERSE, USERS


@dataclass
class Data:
    """The generated batches (Parquet files without `_batch_id`) and the identity universe."""

    folder: Path
    files: list[Path]
    batch_ids: list[str]
    identities: list[str]  # the org's identities; the first USERS of them have rows here
    order: np.ndarray  # the order in which tombstones are added (a permutation of identities)

    def tombstoned(self, count: int) -> list[str]:
        return [self.identities[i] for i in self.order[:count]]

    def hidden_users(self, count: int) -> list[str]:
        """The users with rows among the first `count` tombstoned identities."""
        return [self.identities[i] for i in self.order[:count] if i < USERS]


def make_identities(seed: int) -> list[str]:
    """UNIVERSE distinct ids like `u0f3a…`, random so that any subset spans the whole range."""
    rng = np.random.default_rng(seed)
    raw = np.unique(rng.integers(0, 2**60, int(UNIVERSE * 1.01), dtype=np.int64))
    rng.shuffle(raw)
    return [f"u{x:015x}" for x in raw[:UNIVERSE].tolist()]


def generate(folder: Path, batches: int, rows: int, seed: int) -> Data:
    """`batches` files of `rows` events of the first USERS identities, `DAYS` days of
    event_time; random batch ids and tombstone order."""
    folder.mkdir(parents=True)
    identities = make_identities(seed)
    users = pa.array(identities[:USERS])
    rng = np.random.default_rng(seed + 1)
    files = []
    for i in range(batches):
        path = folder / f"batch-{i:03d}.parquet"
        pq.write_table(events(rows, i * rows, users, DAYS, rng), path)
        files.append(path)
    batch_ids = [str(uuid.UUID(bytes=rng.bytes(16), version=4)) for _ in range(batches)]
    order = rng.permutation(UNIVERSE)
    return Data(folder, files, batch_ids, identities, order)


def without_users(data: Data, hidden: list[str], folder: Path) -> list[Path]:
    """The batch files minus the rows of `hidden` users (the twin with rows physically absent)."""
    folder.mkdir(parents=True)
    drop = pa.array(hidden, pa.string())
    out = []
    for path in data.files:
        table = pq.read_table(path)
        kept = table.filter(pc.invert(pc.is_in(table["user_id"], value_set=drop)))
        pq.write_table(kept, folder / path.name)
        out.append(folder / path.name)
    return out
