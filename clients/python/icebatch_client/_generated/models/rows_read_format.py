from enum import StrEnum


class RowsReadFormat(StrEnum):
    ARROW = "arrow"
    JSONL = "jsonl"

    def __str__(self) -> str:
        return str(self.value)
