from enum import StrEnum


class CompactStrategy(StrEnum):
    BINPACK = "binpack"
    SORT = "sort"

    def __str__(self) -> str:
        return str(self.value)
