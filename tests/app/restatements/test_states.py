"""The restatement state machine (app/restatements/states.py): exactly the moves of its diagram."""

from __future__ import annotations

import itertools

import pytest

from app.models import Restatement, RestatementKind, RestatementState
from app.restatements import states

ALLOWED = {
    ("pending", "ready"),
    ("pending", "failed"),
    ("ready", "committing"),
    ("ready", "failed"),
    ("committing", "committed"),
}


@pytest.mark.parametrize(("source", "target"), itertools.product(RestatementState, repeat=2))
def test_a_restatement_moves_only_as_the_diagram_says(
    source: RestatementState, target: RestatementState
) -> None:
    row = Restatement(id="r1", state=source)
    if (source.value, target.value) in ALLOWED:
        states.move(row, target)
        assert row.state == target
    else:
        with pytest.raises(states.IllegalTransition, match="cannot become"):
            states.move(row, target)
        assert row.state == source


def test_a_committing_restatement_never_fails_and_a_replay_starts_pending() -> None:
    # a committing group may have landed: only the snapshot log decides, never a failed job
    assert not states.may_fail(Restatement(id="r1", state=RestatementState.COMMITTING))
    assert states.may_fail(Restatement(id="r2", state=RestatementState.READY))
    assert states.sources(RestatementState.COMMITTING) == (RestatementState.READY,)
    assert states.initial(RestatementKind.REPLAY) == RestatementState.PENDING
    assert {states.initial(k) for k in RestatementKind if k != RestatementKind.REPLAY} == {
        RestatementState.READY
    }
