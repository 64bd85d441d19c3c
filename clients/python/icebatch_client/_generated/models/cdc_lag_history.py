from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.cdc_lag_point import CdcLagPoint


T = TypeVar("T", bound="CdcLagHistory")


@_attrs_define
class CdcLagHistory:
    """Your tenant's lag over time, oldest first: a sample per `sample_seconds` at most, kept
    `retention_seconds` (ICEBATCH_CDC_LAG_SAMPLE_SECONDS, ICEBATCH_CDC_LAG_RETENTION_SECONDS).

        Attributes:
            retention_seconds (float):
            sample_seconds (float):
            samples (list[CdcLagPoint]):
            tenant (str):
    """

    retention_seconds: float
    sample_seconds: float
    samples: list[CdcLagPoint]
    tenant: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        retention_seconds = self.retention_seconds

        sample_seconds = self.sample_seconds

        samples = []
        for samples_item_data in self.samples:
            samples_item = samples_item_data.to_dict()
            samples.append(samples_item)

        tenant = self.tenant

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "retention_seconds": retention_seconds,
                "sample_seconds": sample_seconds,
                "samples": samples,
                "tenant": tenant,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cdc_lag_point import CdcLagPoint  # noqa: PLC0415

        d = dict(src_dict)
        retention_seconds = d.pop("retention_seconds")

        sample_seconds = d.pop("sample_seconds")

        samples = []
        _samples = d.pop("samples")
        for samples_item_data in _samples:
            samples_item = CdcLagPoint.from_dict(samples_item_data)

            samples.append(samples_item)

        tenant = d.pop("tenant")

        cdc_lag_history = cls(
            retention_seconds=retention_seconds,
            sample_seconds=sample_seconds,
            samples=samples,
            tenant=tenant,
        )

        cdc_lag_history.additional_properties = d
        return cdc_lag_history

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
