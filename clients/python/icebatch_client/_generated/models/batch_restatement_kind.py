from enum import StrEnum


class BatchRestatementKind(StrEnum):
    REPLAY = "replay"
    REVERT = "revert"

    def __str__(self) -> str:
        return str(self.value)
