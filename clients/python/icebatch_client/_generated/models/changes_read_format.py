from enum import StrEnum


class ChangesReadFormat(StrEnum):
    ARROW = "arrow"
    JSONL = "jsonl"

    def __str__(self) -> str:
        return str(self.value)
