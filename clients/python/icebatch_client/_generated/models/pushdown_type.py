from enum import StrEnum


class PushdownType(StrEnum):
    BOOLEAN = "boolean"
    DOUBLE = "double"
    LONG = "long"
    STRING = "string"
    TIMESTAMPTZ = "timestamptz"

    def __str__(self) -> str:
        return str(self.value)
