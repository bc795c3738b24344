import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Symptoms(_message.Message):
    __slots__ = ("bottleneck_classes", "profile_signals", "ir_signatures", "code_features")
    BOTTLENECK_CLASSES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_SIGNALS_FIELD_NUMBER: _ClassVar[int]
    IR_SIGNATURES_FIELD_NUMBER: _ClassVar[int]
    CODE_FEATURES_FIELD_NUMBER: _ClassVar[int]
    bottleneck_classes: _containers.RepeatedScalarFieldContainer[str]
    profile_signals: _containers.RepeatedScalarFieldContainer[str]
    ir_signatures: _containers.RepeatedScalarFieldContainer[str]
    code_features: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, bottleneck_classes: _Optional[_Iterable[str]] = ..., profile_signals: _Optional[_Iterable[str]] = ..., ir_signatures: _Optional[_Iterable[str]] = ..., code_features: _Optional[_Iterable[str]] = ...) -> None: ...

class Recipe(_message.Message):
    __slots__ = ("kind", "params", "requires", "forbids")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_FIELD_NUMBER: _ClassVar[int]
    FORBIDS_FIELD_NUMBER: _ClassVar[int]
    kind: str
    params: _struct_pb2.Struct
    requires: _containers.RepeatedScalarFieldContainer[str]
    forbids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, kind: _Optional[str] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., requires: _Optional[_Iterable[str]] = ..., forbids: _Optional[_Iterable[str]] = ...) -> None: ...

class Rewrite(_message.Message):
    __slots__ = ("description", "recipe")
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    RECIPE_FIELD_NUMBER: _ClassVar[int]
    description: str
    recipe: Recipe
    def __init__(self, description: _Optional[str] = ..., recipe: _Optional[_Union[Recipe, _Mapping]] = ...) -> None: ...

class Evidence(_message.Message):
    __slots__ = ("kind", "text", "source", "metric")
    class MetricEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    KIND_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    METRIC_FIELD_NUMBER: _ClassVar[int]
    kind: str
    text: str
    source: str
    metric: _containers.ScalarMap[str, float]
    def __init__(self, kind: _Optional[str] = ..., text: _Optional[str] = ..., source: _Optional[str] = ..., metric: _Optional[_Mapping[str, float]] = ...) -> None: ...

class Verification(_message.Message):
    __slots__ = ("what", "tool", "result", "date")
    WHAT_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    DATE_FIELD_NUMBER: _ClassVar[int]
    what: str
    tool: str
    result: str
    date: str
    def __init__(self, what: _Optional[str] = ..., tool: _Optional[str] = ..., result: _Optional[str] = ..., date: _Optional[str] = ...) -> None: ...

class Provenance(_message.Message):
    __slots__ = ("origin", "rounds", "author")
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    origin: str
    rounds: _containers.RepeatedScalarFieldContainer[str]
    author: str
    def __init__(self, origin: _Optional[str] = ..., rounds: _Optional[_Iterable[str]] = ..., author: _Optional[str] = ...) -> None: ...

class CardStats(_message.Message):
    __slots__ = ("cited", "applied", "verified", "lift_mean", "lift_ci_low", "lift_ci_high", "lift_n")
    CITED_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    VERIFIED_FIELD_NUMBER: _ClassVar[int]
    LIFT_MEAN_FIELD_NUMBER: _ClassVar[int]
    LIFT_CI_LOW_FIELD_NUMBER: _ClassVar[int]
    LIFT_CI_HIGH_FIELD_NUMBER: _ClassVar[int]
    LIFT_N_FIELD_NUMBER: _ClassVar[int]
    cited: int
    applied: int
    verified: int
    lift_mean: float
    lift_ci_low: float
    lift_ci_high: float
    lift_n: int
    def __init__(self, cited: _Optional[int] = ..., applied: _Optional[int] = ..., verified: _Optional[int] = ..., lift_mean: _Optional[float] = ..., lift_ci_low: _Optional[float] = ..., lift_ci_high: _Optional[float] = ..., lift_n: _Optional[int] = ...) -> None: ...

class AntiSignalFields(_message.Message):
    __slots__ = ("trigger_evidence", "contraindicated", "counterexample")
    TRIGGER_EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    CONTRAINDICATED_FIELD_NUMBER: _ClassVar[int]
    COUNTEREXAMPLE_FIELD_NUMBER: _ClassVar[int]
    trigger_evidence: _containers.RepeatedScalarFieldContainer[str]
    contraindicated: _containers.RepeatedScalarFieldContainer[str]
    counterexample: str
    def __init__(self, trigger_evidence: _Optional[_Iterable[str]] = ..., contraindicated: _Optional[_Iterable[str]] = ..., counterexample: _Optional[str] = ...) -> None: ...

class InvariantFields(_message.Message):
    __slots__ = ("passes", "legality", "question_templates")
    PASSES_FIELD_NUMBER: _ClassVar[int]
    LEGALITY_FIELD_NUMBER: _ClassVar[int]
    QUESTION_TEMPLATES_FIELD_NUMBER: _ClassVar[int]
    passes: _containers.RepeatedScalarFieldContainer[str]
    legality: str
    question_templates: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, passes: _Optional[_Iterable[str]] = ..., legality: _Optional[str] = ..., question_templates: _Optional[_Iterable[str]] = ...) -> None: ...

class Card(_message.Message):
    __slots__ = ("id", "kind", "title", "summary", "body", "backends", "levels", "symptoms", "preconditions", "rewrite", "interpretation", "evidence", "sources", "related", "compiler_scope", "verification", "status", "version", "provenance", "stats", "anti_signal", "invariant")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    BACKENDS_FIELD_NUMBER: _ClassVar[int]
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    SYMPTOMS_FIELD_NUMBER: _ClassVar[int]
    PRECONDITIONS_FIELD_NUMBER: _ClassVar[int]
    REWRITE_FIELD_NUMBER: _ClassVar[int]
    INTERPRETATION_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    RELATED_FIELD_NUMBER: _ClassVar[int]
    COMPILER_SCOPE_FIELD_NUMBER: _ClassVar[int]
    VERIFICATION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    ANTI_SIGNAL_FIELD_NUMBER: _ClassVar[int]
    INVARIANT_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: str
    title: str
    summary: str
    body: str
    backends: _containers.RepeatedScalarFieldContainer[str]
    levels: _containers.RepeatedScalarFieldContainer[str]
    symptoms: Symptoms
    preconditions: _containers.RepeatedScalarFieldContainer[str]
    rewrite: Rewrite
    interpretation: str
    evidence: _containers.RepeatedCompositeFieldContainer[Evidence]
    sources: _containers.RepeatedScalarFieldContainer[str]
    related: _containers.RepeatedScalarFieldContainer[str]
    compiler_scope: _containers.RepeatedScalarFieldContainer[str]
    verification: _containers.RepeatedCompositeFieldContainer[Verification]
    status: str
    version: int
    provenance: Provenance
    stats: CardStats
    anti_signal: AntiSignalFields
    invariant: InvariantFields
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[str] = ..., title: _Optional[str] = ..., summary: _Optional[str] = ..., body: _Optional[str] = ..., backends: _Optional[_Iterable[str]] = ..., levels: _Optional[_Iterable[str]] = ..., symptoms: _Optional[_Union[Symptoms, _Mapping]] = ..., preconditions: _Optional[_Iterable[str]] = ..., rewrite: _Optional[_Union[Rewrite, _Mapping]] = ..., interpretation: _Optional[str] = ..., evidence: _Optional[_Iterable[_Union[Evidence, _Mapping]]] = ..., sources: _Optional[_Iterable[str]] = ..., related: _Optional[_Iterable[str]] = ..., compiler_scope: _Optional[_Iterable[str]] = ..., verification: _Optional[_Iterable[_Union[Verification, _Mapping]]] = ..., status: _Optional[str] = ..., version: _Optional[int] = ..., provenance: _Optional[_Union[Provenance, _Mapping]] = ..., stats: _Optional[_Union[CardStats, _Mapping]] = ..., anti_signal: _Optional[_Union[AntiSignalFields, _Mapping]] = ..., invariant: _Optional[_Union[InvariantFields, _Mapping]] = ...) -> None: ...

class CardFilter(_message.Message):
    __slots__ = ("kinds", "backends", "levels", "statuses")
    KINDS_FIELD_NUMBER: _ClassVar[int]
    BACKENDS_FIELD_NUMBER: _ClassVar[int]
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    kinds: _containers.RepeatedScalarFieldContainer[str]
    backends: _containers.RepeatedScalarFieldContainer[str]
    levels: _containers.RepeatedScalarFieldContainer[str]
    statuses: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, kinds: _Optional[_Iterable[str]] = ..., backends: _Optional[_Iterable[str]] = ..., levels: _Optional[_Iterable[str]] = ..., statuses: _Optional[_Iterable[str]] = ...) -> None: ...

class ScoreBreakdown(_message.Message):
    __slots__ = ("dense", "bm25", "symptom", "dense_rank", "bm25_rank", "matched_symptoms")
    DENSE_FIELD_NUMBER: _ClassVar[int]
    BM25_FIELD_NUMBER: _ClassVar[int]
    SYMPTOM_FIELD_NUMBER: _ClassVar[int]
    DENSE_RANK_FIELD_NUMBER: _ClassVar[int]
    BM25_RANK_FIELD_NUMBER: _ClassVar[int]
    MATCHED_SYMPTOMS_FIELD_NUMBER: _ClassVar[int]
    dense: float
    bm25: float
    symptom: float
    dense_rank: int
    bm25_rank: int
    matched_symptoms: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, dense: _Optional[float] = ..., bm25: _Optional[float] = ..., symptom: _Optional[float] = ..., dense_rank: _Optional[int] = ..., bm25_rank: _Optional[int] = ..., matched_symptoms: _Optional[_Iterable[str]] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ("card", "score", "breakdown")
    CARD_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    card: Card
    score: float
    breakdown: ScoreBreakdown
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ..., score: _Optional[float] = ..., breakdown: _Optional[_Union[ScoreBreakdown, _Mapping]] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("text", "top_k", "filter", "mode")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    text: str
    top_k: int
    filter: CardFilter
    mode: str
    def __init__(self, text: _Optional[str] = ..., top_k: _Optional[int] = ..., filter: _Optional[_Union[CardFilter, _Mapping]] = ..., mode: _Optional[str] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ...) -> None: ...

class QuickMatchRequest(_message.Message):
    __slots__ = ("symptoms", "text", "backend", "top_k", "exclude")
    SYMPTOMS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    symptoms: Symptoms
    text: str
    backend: str
    top_k: int
    exclude: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, symptoms: _Optional[_Union[Symptoms, _Mapping]] = ..., text: _Optional[str] = ..., backend: _Optional[str] = ..., top_k: _Optional[int] = ..., exclude: _Optional[_Iterable[str]] = ...) -> None: ...

class GetCardRequest(_message.Message):
    __slots__ = ("id", "version")
    ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    version: int
    def __init__(self, id: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class ListCardsRequest(_message.Message):
    __slots__ = ("filter", "page_size", "cursor")
    FILTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    filter: CardFilter
    page_size: int
    cursor: str
    def __init__(self, filter: _Optional[_Union[CardFilter, _Mapping]] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListCardsResponse(_message.Message):
    __slots__ = ("cards", "next_cursor", "total")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    next_cursor: str
    total: int
    def __init__(self, cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., next_cursor: _Optional[str] = ..., total: _Optional[int] = ...) -> None: ...

class GetInvariantsRequest(_message.Message):
    __slots__ = ("pass_names", "ir_signatures", "backend", "text", "top_k")
    PASS_NAMES_FIELD_NUMBER: _ClassVar[int]
    IR_SIGNATURES_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    pass_names: _containers.RepeatedScalarFieldContainer[str]
    ir_signatures: _containers.RepeatedScalarFieldContainer[str]
    backend: str
    text: str
    top_k: int
    def __init__(self, pass_names: _Optional[_Iterable[str]] = ..., ir_signatures: _Optional[_Iterable[str]] = ..., backend: _Optional[str] = ..., text: _Optional[str] = ..., top_k: _Optional[int] = ...) -> None: ...

class UpsertCardRequest(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: Card
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class Cause(_message.Message):
    __slots__ = ("id", "title", "description", "bottleneck_class", "families", "explains", "status", "version", "provenance", "evidence")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    BOTTLENECK_CLASS_FIELD_NUMBER: _ClassVar[int]
    FAMILIES_FIELD_NUMBER: _ClassVar[int]
    EXPLAINS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    description: str
    bottleneck_class: str
    families: _containers.RepeatedScalarFieldContainer[str]
    explains: _containers.RepeatedScalarFieldContainer[str]
    status: str
    version: int
    provenance: Provenance
    evidence: _containers.RepeatedCompositeFieldContainer[Evidence]
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., bottleneck_class: _Optional[str] = ..., families: _Optional[_Iterable[str]] = ..., explains: _Optional[_Iterable[str]] = ..., status: _Optional[str] = ..., version: _Optional[int] = ..., provenance: _Optional[_Union[Provenance, _Mapping]] = ..., evidence: _Optional[_Iterable[_Union[Evidence, _Mapping]]] = ...) -> None: ...

class ListCausesRequest(_message.Message):
    __slots__ = ("statuses",)
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    statuses: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, statuses: _Optional[_Iterable[str]] = ...) -> None: ...

class ListCausesResponse(_message.Message):
    __slots__ = ("causes",)
    CAUSES_FIELD_NUMBER: _ClassVar[int]
    causes: _containers.RepeatedCompositeFieldContainer[Cause]
    def __init__(self, causes: _Optional[_Iterable[_Union[Cause, _Mapping]]] = ...) -> None: ...

class SetCardStatusRequest(_message.Message):
    __slots__ = ("id", "status", "reason", "version")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    status: str
    reason: str
    version: int
    def __init__(self, id: _Optional[str] = ..., status: _Optional[str] = ..., reason: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class SubmitTrajectoryRequest(_message.Message):
    __slots__ = ("trajectory_json",)
    TRAJECTORY_JSON_FIELD_NUMBER: _ClassVar[int]
    trajectory_json: str
    def __init__(self, trajectory_json: _Optional[str] = ...) -> None: ...

class SubmitTrajectoryResponse(_message.Message):
    __slots__ = ("trajectory_id", "created")
    TRAJECTORY_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    trajectory_id: str
    created: bool
    def __init__(self, trajectory_id: _Optional[str] = ..., created: _Optional[bool] = ...) -> None: ...

class SynthesisReport(_message.Message):
    __slots__ = ("trajectories", "rounds", "categories", "mapped", "unmatched", "proposals", "excluded", "pending_rounds", "polished", "duration_s", "rounds_per_min", "new_proposals")
    class CategoriesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class ProposalsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class ExcludedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TRAJECTORIES_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    MAPPED_FIELD_NUMBER: _ClassVar[int]
    UNMATCHED_FIELD_NUMBER: _ClassVar[int]
    PROPOSALS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_FIELD_NUMBER: _ClassVar[int]
    PENDING_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    POLISHED_FIELD_NUMBER: _ClassVar[int]
    DURATION_S_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_PER_MIN_FIELD_NUMBER: _ClassVar[int]
    NEW_PROPOSALS_FIELD_NUMBER: _ClassVar[int]
    trajectories: int
    rounds: int
    categories: _containers.ScalarMap[str, int]
    mapped: int
    unmatched: int
    proposals: _containers.ScalarMap[str, int]
    excluded: _containers.ScalarMap[str, str]
    pending_rounds: _containers.RepeatedScalarFieldContainer[str]
    polished: int
    duration_s: float
    rounds_per_min: float
    new_proposals: int
    def __init__(self, trajectories: _Optional[int] = ..., rounds: _Optional[int] = ..., categories: _Optional[_Mapping[str, int]] = ..., mapped: _Optional[int] = ..., unmatched: _Optional[int] = ..., proposals: _Optional[_Mapping[str, int]] = ..., excluded: _Optional[_Mapping[str, str]] = ..., pending_rounds: _Optional[_Iterable[str]] = ..., polished: _Optional[int] = ..., duration_s: _Optional[float] = ..., rounds_per_min: _Optional[float] = ..., new_proposals: _Optional[int] = ...) -> None: ...

class RunSynthesisRequest(_message.Message):
    __slots__ = ("only_new",)
    ONLY_NEW_FIELD_NUMBER: _ClassVar[int]
    only_new: bool
    def __init__(self, only_new: _Optional[bool] = ...) -> None: ...

class JobStatus(_message.Message):
    __slots__ = ("job_id", "state", "done", "total", "message", "result")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    state: str
    done: int
    total: int
    message: str
    result: SynthesisReport
    def __init__(self, job_id: _Optional[str] = ..., state: _Optional[str] = ..., done: _Optional[int] = ..., total: _Optional[int] = ..., message: _Optional[str] = ..., result: _Optional[_Union[SynthesisReport, _Mapping]] = ...) -> None: ...

class GetJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class MappingComponents(_message.Message):
    __slots__ = ("dense", "symptoms", "levels", "cited")
    DENSE_FIELD_NUMBER: _ClassVar[int]
    SYMPTOMS_FIELD_NUMBER: _ClassVar[int]
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    CITED_FIELD_NUMBER: _ClassVar[int]
    dense: float
    symptoms: float
    levels: float
    cited: float
    def __init__(self, dense: _Optional[float] = ..., symptoms: _Optional[float] = ..., levels: _Optional[float] = ..., cited: _Optional[float] = ...) -> None: ...

class FamilyCandidate(_message.Message):
    __slots__ = ("family_id", "score", "components")
    FAMILY_ID_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    family_id: str
    score: float
    components: MappingComponents
    def __init__(self, family_id: _Optional[str] = ..., score: _Optional[float] = ..., components: _Optional[_Union[MappingComponents, _Mapping]] = ...) -> None: ...

class EvidenceRef(_message.Message):
    __slots__ = ("round_ref", "problem", "backend", "outcome", "speedup", "lift", "confidence", "note", "copies")
    ROUND_REF_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    SPEEDUP_FIELD_NUMBER: _ClassVar[int]
    LIFT_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    COPIES_FIELD_NUMBER: _ClassVar[int]
    round_ref: str
    problem: str
    backend: str
    outcome: str
    speedup: float
    lift: float
    confidence: float
    note: str
    copies: int
    def __init__(self, round_ref: _Optional[str] = ..., problem: _Optional[str] = ..., backend: _Optional[str] = ..., outcome: _Optional[str] = ..., speedup: _Optional[float] = ..., lift: _Optional[float] = ..., confidence: _Optional[float] = ..., note: _Optional[str] = ..., copies: _Optional[int] = ...) -> None: ...

class Proposal(_message.Message):
    __slots__ = ("id", "kind", "status", "card", "target_family", "base_version", "confidence", "evidence", "nearest", "reason", "created_at", "author", "polished", "reviewer", "reviewer_notes", "reviewed_at", "cause")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    TARGET_FAMILY_FIELD_NUMBER: _ClassVar[int]
    BASE_VERSION_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    NEAREST_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    POLISHED_FIELD_NUMBER: _ClassVar[int]
    REVIEWER_FIELD_NUMBER: _ClassVar[int]
    REVIEWER_NOTES_FIELD_NUMBER: _ClassVar[int]
    REVIEWED_AT_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: str
    status: str
    card: Card
    target_family: str
    base_version: int
    confidence: float
    evidence: _containers.RepeatedCompositeFieldContainer[EvidenceRef]
    nearest: _containers.RepeatedCompositeFieldContainer[FamilyCandidate]
    reason: str
    created_at: _timestamp_pb2.Timestamp
    author: str
    polished: bool
    reviewer: str
    reviewer_notes: str
    reviewed_at: _timestamp_pb2.Timestamp
    cause: Cause
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[str] = ..., status: _Optional[str] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., target_family: _Optional[str] = ..., base_version: _Optional[int] = ..., confidence: _Optional[float] = ..., evidence: _Optional[_Iterable[_Union[EvidenceRef, _Mapping]]] = ..., nearest: _Optional[_Iterable[_Union[FamilyCandidate, _Mapping]]] = ..., reason: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., author: _Optional[str] = ..., polished: _Optional[bool] = ..., reviewer: _Optional[str] = ..., reviewer_notes: _Optional[str] = ..., reviewed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., cause: _Optional[_Union[Cause, _Mapping]] = ...) -> None: ...

class ReviewItem(_message.Message):
    __slots__ = ("proposal", "nearest_card")
    PROPOSAL_FIELD_NUMBER: _ClassVar[int]
    NEAREST_CARD_FIELD_NUMBER: _ClassVar[int]
    proposal: Proposal
    nearest_card: Card
    def __init__(self, proposal: _Optional[_Union[Proposal, _Mapping]] = ..., nearest_card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class ListProposalsRequest(_message.Message):
    __slots__ = ("status", "page_size", "cursor")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    status: str
    page_size: int
    cursor: str
    def __init__(self, status: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListProposalsResponse(_message.Message):
    __slots__ = ("proposals", "next_cursor")
    PROPOSALS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    proposals: _containers.RepeatedCompositeFieldContainer[Proposal]
    next_cursor: str
    def __init__(self, proposals: _Optional[_Iterable[_Union[Proposal, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class GetProposalRequest(_message.Message):
    __slots__ = ("proposal_id",)
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    proposal_id: str
    def __init__(self, proposal_id: _Optional[str] = ...) -> None: ...

class ReviewRequest(_message.Message):
    __slots__ = ("proposal_id", "action", "reason", "card", "merge_into", "reviewer")
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    MERGE_INTO_FIELD_NUMBER: _ClassVar[int]
    REVIEWER_FIELD_NUMBER: _ClassVar[int]
    proposal_id: str
    action: str
    reason: str
    card: Card
    merge_into: str
    reviewer: str
    def __init__(self, proposal_id: _Optional[str] = ..., action: _Optional[str] = ..., reason: _Optional[str] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., merge_into: _Optional[str] = ..., reviewer: _Optional[str] = ...) -> None: ...
