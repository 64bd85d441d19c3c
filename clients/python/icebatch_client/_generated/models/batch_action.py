from enum import StrEnum


class BatchAction(StrEnum):
    ABORT = "ABORT"
    COMPLETE = "COMPLETE"
    REVERT = "REVERT"

    def __str__(self) -> str:
        return str(self.value)
