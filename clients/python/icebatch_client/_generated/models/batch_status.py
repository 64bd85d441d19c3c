from enum import StrEnum


class BatchStatus(StrEnum):
    ABORTED = "aborted"
    FAILED = "failed"
    LOADING = "loading"
    PROCESSING = "processing"
    REPLACED = "replaced"
    REVERTED = "reverted"
    STAGED = "staged"
    SUCCESS = "success"

    def __str__(self) -> str:
        return str(self.value)
