from enum import StrEnum


class ChangesReadKind(StrEnum):
    APPENDED = "appended"
    DELETED = "deleted"

    def __str__(self) -> str:
        return str(self.value)
