from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.batch_create_format import BatchCreateFormat
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.replay_spec import ReplaySpec


T = TypeVar("T", bound="BatchCreate")


@_attrs_define
class BatchCreate:
    """
    Attributes:
        dataset_id (str): The dataset the batch loads into: its id or its name
        format_ (BatchCreateFormat): csv (with a header line), json (JSON lines), parquet
        replay (None | ReplaySpec | Unset): Replace these batches: their tombstones and this batch's rows commit as one
            snapshot
    """

    dataset_id: str
    format_: BatchCreateFormat
    replay: None | ReplaySpec | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.replay_spec import ReplaySpec  # noqa: PLC0415

        dataset_id = self.dataset_id

        format_ = self.format_.value

        replay: dict[str, Any] | None | Unset
        if isinstance(self.replay, Unset):
            replay = UNSET
        elif isinstance(self.replay, ReplaySpec):
            replay = self.replay.to_dict()
        else:
            replay = self.replay

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "dataset_id": dataset_id,
                "format": format_,
            }
        )
        if replay is not UNSET:
            field_dict["replay"] = replay

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.replay_spec import ReplaySpec  # noqa: PLC0415

        d = dict(src_dict)
        dataset_id = d.pop("dataset_id")

        format_ = BatchCreateFormat(d.pop("format"))

        def _parse_replay(data: object) -> None | ReplaySpec | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                replay_type_0 = ReplaySpec.from_dict(data)

                return replay_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReplaySpec | Unset, data)

        replay = _parse_replay(d.pop("replay", UNSET))

        batch_create = cls(
            dataset_id=dataset_id,
            format_=format_,
            replay=replay,
        )

        return batch_create
