"""What the doctor reports: one finding per problem, and the dataset it was found in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.table import Table

from app.lake.retention import Policy

Repair = Callable[[], str]


@dataclass(frozen=True)
class Subject:
    """One dataset as the checks see it: its metadata-store row and its loaded table."""

    dataset_id: str
    org: str
    name: str
    identifier: str
    table: Table
    policy: Policy

    @property
    def label(self) -> str:
        return f"{self.org}/{self.name}"


@dataclass
class Finding:
    """One problem: where, what is wrong, what to do, and the repair `--repair` may run.

    `repair` is set only when the fix is what the system itself would do (re-run its own code on
    its own records); it returns what it did, in plain words.
    """

    dataset_id: str
    dataset: str  # org/name
    check: str  # batches | restatements | tombstones | files | orphans | privacy | catalog
    problem: str
    action: str
    repair: Repair | None = field(default=None, repr=False, compare=False)
    repaired: str | None = None
    repair_error: str | None = None

    @property
    def repairable(self) -> bool:
        return self.repair is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset_id": self.dataset_id,
            "dataset": self.dataset,
            "check": self.check,
            "problem": self.problem,
            "action": self.action,
            "repairable": self.repairable,
            "repaired": self.repaired,
            "repair_error": self.repair_error,
        }


def finding(
    subject: Subject, check: str, problem: str, action: str, repair: Repair | None = None
) -> Finding:
    return Finding(subject.dataset_id, subject.label, check, problem, action, repair)


class RepairIncomplete(Exception):
    """A repair ran the system's own code, which left the problem in place (the message says
    why)."""
