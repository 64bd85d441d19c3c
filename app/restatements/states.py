"""The restatement state machine, in one place: every state a restatement may move to, and from
where. Rows move through `move`; the committer's set-based moves (a group claimed, a group
recorded) go through `app/restatements/repository.py`, whose WHERE clauses are `sources`.

    pending ──► ready ──► committing ──► committed
       │          │
       └──────────┴──► failed

`pending`: a replay whose rows are not staged yet (every other kind starts `ready`). `ready`:
waiting for its dataset's group commit. `committing`: claimed into a group under the commit
lease, with the group's commit id; whether it landed is decided by the snapshot log alone, so a
committing restatement never fails: the next committer of the dataset records it.
"""

from __future__ import annotations

from app.models import Restatement, RestatementKind, RestatementState

PENDING, READY, COMMITTING, COMMITTED, FAILED = (
    RestatementState.PENDING,
    RestatementState.READY,
    RestatementState.COMMITTING,
    RestatementState.COMMITTED,
    RestatementState.FAILED,
)

TRANSITIONS: dict[RestatementState, frozenset[RestatementState]] = {
    PENDING: frozenset({READY, FAILED}),
    READY: frozenset({COMMITTING, FAILED}),
    COMMITTING: frozenset({COMMITTED}),
    COMMITTED: frozenset(),
    FAILED: frozenset(),
}
OPEN = (PENDING, READY, COMMITTING)  # not decided yet
FINISHED = (COMMITTED, FAILED)


class IllegalTransition(RuntimeError):
    """A move the machine does not allow: a bug, never a client's error."""


def initial(kind: RestatementKind) -> RestatementState:
    """A new restatement's state: a replay waits for its rows to be staged."""
    return PENDING if kind == RestatementKind.REPLAY else READY


def sources(to: RestatementState) -> tuple[RestatementState, ...]:
    """The states that may move to `to`."""
    return tuple(s for s, targets in TRANSITIONS.items() if to in targets)


def may_fail(row: Restatement) -> bool:
    """Whether a failed job may fail its restatement (a committing one may have landed)."""
    return FAILED in TRANSITIONS[RestatementState(row.state)]


def move(row: Restatement, to: RestatementState) -> None:
    """Move `row` to `to`, or raise IllegalTransition."""
    if to not in TRANSITIONS[RestatementState(row.state)]:
        raise IllegalTransition(f"restatement {row.id}: {row.state} cannot become {to}")
    row.state = to
