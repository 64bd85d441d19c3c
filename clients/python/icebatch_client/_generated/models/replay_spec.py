from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ReplaySpec")


@_attrs_define
class ReplaySpec:
    """
    Attributes:
        predecessors (list[str]): The 'success' batches whose rows this batch replaces
        reason (None | str | Unset):
    """

    predecessors: list[str]
    reason: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        predecessors = self.predecessors

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "predecessors": predecessors,
            }
        )
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        predecessors = cast(list[str], d.pop("predecessors"))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        replay_spec = cls(
            predecessors=predecessors,
            reason=reason,
        )

        return replay_spec
