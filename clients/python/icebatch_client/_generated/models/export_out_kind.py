from enum import StrEnum


class ExportOutKind(StrEnum):
    APPENDED = "appended"
    DELETED = "deleted"

    def __str__(self) -> str:
        return str(self.value)
