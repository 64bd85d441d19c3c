"""Contains all the data models used in inputs/outputs"""

from .audit_event_out import AuditEventOut
from .audit_event_out_target import AuditEventOutTarget
from .audit_page import AuditPage
from .batch_action import BatchAction
from .batch_action_out import BatchActionOut
from .batch_bucket import BatchBucket
from .batch_bucket_counts import BatchBucketCounts
from .batch_create import BatchCreate
from .batch_create_format import BatchCreateFormat
from .batch_file_out import BatchFileOut
from .batch_list import BatchList
from .batch_out import BatchOut
from .batch_out_errors_type_0_item import BatchOutErrorsType0Item
from .batch_out_replay_type_0 import BatchOutReplayType0
from .batch_restatement import BatchRestatement
from .batch_restatement_kind import BatchRestatementKind
from .batch_status import BatchStatus
from .batch_timeline import BatchTimeline
from .cdc_config import CdcConfig
from .cdc_config_out import CdcConfigOut
from .cdc_debezium_post_json_body import CdcDebeziumPostJsonBody
from .cdc_debezium_post_json_body_type_0 import CdcDebeziumPostJsonBodyType0
from .cdc_events_post_json_body_item import CdcEventsPostJsonBodyItem
from .cdc_lag import CdcLag
from .cdc_lag_history import CdcLagHistory
from .cdc_lag_point import CdcLagPoint
from .changes_read_format import ChangesReadFormat
from .changes_read_kind import ChangesReadKind
from .compact_request import CompactRequest
from .compact_strategy import CompactStrategy
from .consumer_create import ConsumerCreate
from .consumer_lag import ConsumerLag
from .consumer_lag_list import ConsumerLagList
from .consumer_list import ConsumerList
from .consumer_out import ConsumerOut
from .dataset_create import DatasetCreate
from .dataset_create_partition_item import DatasetCreatePartitionItem
from .dataset_create_schema_item import DatasetCreateSchemaItem
from .dataset_list import DatasetList
from .dataset_out import DatasetOut
from .dataset_out_partition_item import DatasetOutPartitionItem
from .dataset_out_retention import DatasetOutRetention
from .dataset_out_schema_item import DatasetOutSchemaItem
from .dataset_stats import DatasetStats
from .dataset_stats_batches import DatasetStatsBatches
from .debezium_accepted import DebeziumAccepted
from .error_group import ErrorGroup
from .error_groups import ErrorGroups
from .events_accepted import EventsAccepted
from .export_create import ExportCreate
from .export_create_kind import ExportCreateKind
from .export_out import ExportOut
from .export_out_kind import ExportOutKind
from .job_list import JobList
from .job_out import JobOut
from .job_out_result_type_0 import JobOutResultType0
from .job_stage_out import JobStageOut
from .job_state import JobState
from .key_create import KeyCreate
from .key_created import KeyCreated
from .key_list import KeyList
from .key_out import KeyOut
from .liveness import Liveness
from .privacy_dataset_status import PrivacyDatasetStatus
from .privacy_job_create import PrivacyJobCreate
from .privacy_job_list import PrivacyJobList
from .privacy_job_out import PrivacyJobOut
from .privacy_job_out_receipt_type_0 import PrivacyJobOutReceiptType0
from .problem import Problem
from .problem_error import ProblemError
from .process_started import ProcessStarted
from .profile import Profile
from .profile_merged import ProfileMerged
from .profile_record import ProfileRecord
from .profile_record_document import ProfileRecordDocument
from .pushdown import Pushdown
from .pushdown_type import PushdownType
from .readiness import Readiness
from .readiness_checks import ReadinessChecks
from .replay_spec import ReplaySpec
from .retention_out import RetentionOut
from .retention_update import RetentionUpdate
from .rows_read_format import RowsReadFormat
from .scope import Scope
from .snapshot_list import SnapshotList
from .snapshot_out import SnapshotOut
from .snapshot_out_icebatch import SnapshotOutIcebatch
from .snapshot_out_summary import SnapshotOutSummary
from .snapshot_out_tombstone import SnapshotOutTombstone
from .snapshot_out_tombstones import SnapshotOutTombstones
from .source import Source
from .stream_lag import StreamLag
from .stuck_out import StuckOut
from .timeline_bucket import TimelineBucket
from .tombstone_out import TombstoneOut
from .tombstone_out_meta import TombstoneOutMeta
from .tombstone_page import TombstonePage
from .vacuum_mode import VacuumMode
from .vacuum_request import VacuumRequest

__all__ = (
    "AuditEventOut",
    "AuditEventOutTarget",
    "AuditPage",
    "BatchAction",
    "BatchActionOut",
    "BatchBucket",
    "BatchBucketCounts",
    "BatchCreate",
    "BatchCreateFormat",
    "BatchFileOut",
    "BatchList",
    "BatchOut",
    "BatchOutErrorsType0Item",
    "BatchOutReplayType0",
    "BatchRestatement",
    "BatchRestatementKind",
    "BatchStatus",
    "BatchTimeline",
    "CdcConfig",
    "CdcConfigOut",
    "CdcDebeziumPostJsonBody",
    "CdcDebeziumPostJsonBodyType0",
    "CdcEventsPostJsonBodyItem",
    "CdcLag",
    "CdcLagHistory",
    "CdcLagPoint",
    "ChangesReadFormat",
    "ChangesReadKind",
    "CompactRequest",
    "CompactStrategy",
    "ConsumerCreate",
    "ConsumerLag",
    "ConsumerLagList",
    "ConsumerList",
    "ConsumerOut",
    "DatasetCreate",
    "DatasetCreatePartitionItem",
    "DatasetCreateSchemaItem",
    "DatasetList",
    "DatasetOut",
    "DatasetOutPartitionItem",
    "DatasetOutRetention",
    "DatasetOutSchemaItem",
    "DatasetStats",
    "DatasetStatsBatches",
    "DebeziumAccepted",
    "ErrorGroup",
    "ErrorGroups",
    "EventsAccepted",
    "ExportCreate",
    "ExportCreateKind",
    "ExportOut",
    "ExportOutKind",
    "JobList",
    "JobOut",
    "JobOutResultType0",
    "JobStageOut",
    "JobState",
    "KeyCreate",
    "KeyCreated",
    "KeyList",
    "KeyOut",
    "Liveness",
    "PrivacyDatasetStatus",
    "PrivacyJobCreate",
    "PrivacyJobList",
    "PrivacyJobOut",
    "PrivacyJobOutReceiptType0",
    "Problem",
    "ProblemError",
    "ProcessStarted",
    "Profile",
    "ProfileMerged",
    "ProfileRecord",
    "ProfileRecordDocument",
    "Pushdown",
    "PushdownType",
    "Readiness",
    "ReadinessChecks",
    "ReplaySpec",
    "RetentionOut",
    "RetentionUpdate",
    "RowsReadFormat",
    "Scope",
    "SnapshotList",
    "SnapshotOut",
    "SnapshotOutIcebatch",
    "SnapshotOutSummary",
    "SnapshotOutTombstone",
    "SnapshotOutTombstones",
    "Source",
    "StreamLag",
    "StuckOut",
    "TimelineBucket",
    "TombstoneOut",
    "TombstoneOutMeta",
    "TombstonePage",
    "VacuumMode",
    "VacuumRequest",
)
