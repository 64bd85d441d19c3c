from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.batch_restatement_kind import BatchRestatementKind

T = TypeVar("T", bound="BatchRestatement")


@_attrs_define
class BatchRestatement:
    """The revert or replay that restated (or is restating) a batch.

    Attributes:
        batch_id (None | str): A replay's new batch (the batch whose rows replace this one's); null for a revert
        id (str): The restatement's id
        job_id (None | str): The job that commits it
        kind (BatchRestatementKind):
        state (str): pending, ready, committing, committed (or failed)
    """

    batch_id: None | str
    id: str
    job_id: None | str
    kind: BatchRestatementKind
    state: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        batch_id: None | str
        batch_id = self.batch_id

        id = self.id

        job_id: None | str
        job_id = self.job_id

        kind = self.kind.value

        state = self.state

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "batch_id": batch_id,
                "id": id,
                "job_id": job_id,
                "kind": kind,
                "state": state,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_batch_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        batch_id = _parse_batch_id(d.pop("batch_id"))

        id = d.pop("id")

        def _parse_job_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        job_id = _parse_job_id(d.pop("job_id"))

        kind = BatchRestatementKind(d.pop("kind"))

        state = d.pop("state")

        batch_restatement = cls(
            batch_id=batch_id,
            id=id,
            job_id=job_id,
            kind=kind,
            state=state,
        )

        batch_restatement.additional_properties = d
        return batch_restatement

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
