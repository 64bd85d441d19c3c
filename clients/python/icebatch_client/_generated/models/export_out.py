from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.export_out_kind import ExportOutKind

if TYPE_CHECKING:
    from ..models.job_out import JobOut


T = TypeVar("T", bound="ExportOut")


@_attrs_define
class ExportOut:
    """
    Attributes:
        from_snapshot_id (int | None): The resolved start, excluded
        job (JobOut):
        kind (ExportOutKind):
        to_snapshot_id (int | None): The resolved end, included
    """

    from_snapshot_id: int | None
    job: JobOut
    kind: ExportOutKind
    to_snapshot_id: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from_snapshot_id: int | None
        from_snapshot_id = self.from_snapshot_id

        job = self.job.to_dict()

        kind = self.kind.value

        to_snapshot_id: int | None
        to_snapshot_id = self.to_snapshot_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "from_snapshot_id": from_snapshot_id,
                "job": job,
                "kind": kind,
                "to_snapshot_id": to_snapshot_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_out import JobOut  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_from_snapshot_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        from_snapshot_id = _parse_from_snapshot_id(d.pop("from_snapshot_id"))

        job = JobOut.from_dict(d.pop("job"))

        kind = ExportOutKind(d.pop("kind"))

        def _parse_to_snapshot_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        to_snapshot_id = _parse_to_snapshot_id(d.pop("to_snapshot_id"))

        export_out = cls(
            from_snapshot_id=from_snapshot_id,
            job=job,
            kind=kind,
            to_snapshot_id=to_snapshot_id,
        )

        export_out.additional_properties = d
        return export_out

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
