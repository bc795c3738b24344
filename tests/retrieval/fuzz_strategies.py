"""Hypothesis strategies for every request message of ladder.v1, plus JSON documents mutated from valid ones.

Each strategy mixes values that pass validation (vocabulary words, known ids, valid documents) with garbage
(unicode, control characters, huge strings, out-of-range integers, NaN/inf, wrong enums, unknown keys), so that
some requests go deep into the domain and others probe every rejection path.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from google.protobuf.struct_pb2 import Struct
from hypothesis import strategies as st

from kb.cardfiles import load_dir
from kb.models import (
    EvidenceItem,
    ProblemRef,
    Round,
    RoundRewrite,
    Timing,
    TimingProtocol,
    Trajectory,
    Validation,
)
from kb.vocab import (
    BACKENDS,
    BOTTLENECK_CLASSES,
    CARD_KINDS,
    CARD_STATUSES,
    IR_SIGNATURES,
    LEVELS,
)
from retrieval.convert import to_proto_card
from retrieval.v1 import ladder_pb2 as pb

_PACKAGED = load_dir()
KNOWN_IDS = [c.id for c in _PACKAGED]
#: one valid card per kind and status-relevant shape: the starting points that garbage is spliced into
BASE_CARDS = [to_proto_card(c) for kind in sorted(CARD_KINDS) for c in [x for x in _PACKAGED if x.kind == kind][:4]]
ODD = ["", " ", "\x00", "\t\n\r", "é", "😀" * 40, "\u202e\u0645\u0631\u062d\u0628\u0627", "'; DROP TABLE cards;--",
       "../../etc/passwd", "%s%n{0}", "null", "NaN", "a" * 4000, "\ufeff", "\U0010ffff", "x" * 5000]

# ---------------------------------------------------------------- scalars
def mostly(valid: st.SearchStrategy[Any], junk: st.SearchStrategy[Any], odds: int = 4) -> st.SearchStrategy[Any]:
    """``valid`` (odds-1 in odds) or ``junk``. A plain ``one_of`` would not do: hypothesis steers towards the branch
    with more distinct values, so a small valid vocabulary drowns in garbage."""
    return st.sampled_from(range(odds)).flatmap(lambda i: junk if i == 0 else valid)


texts = st.one_of(st.text(max_size=60), st.sampled_from(ODD), st.text(min_size=200, max_size=1500))
short = st.one_of(st.text(max_size=20), st.sampled_from(ODD[:12]))
queries = mostly(st.text(max_size=60), st.sampled_from(ODD))  # long text is costly to embed: rarely
int32 = st.one_of(st.sampled_from([0, 1, -1, 3, 5, 50, 51, 100, 101, 500, 501, 2**31 - 1, -(2**31)]),
                  st.integers(-(2**31), 2**31 - 1))
counts = mostly(st.integers(0, 20), int32)  # top_k, page_size, version: mostly in range
int64 = st.one_of(st.sampled_from([0, 1, -1, 2**63 - 1, -(2**63)]), st.integers(-(2**63), 2**63 - 1))
doubles = st.floats(allow_nan=True, allow_infinity=True)


def vocab(words: frozenset[str] | tuple[str, ...]) -> st.SearchStrategy[str]:
    """Mostly a valid word, else garbage or a near miss (case, whitespace)."""
    w = st.sampled_from(sorted(words))
    return mostly(w, st.one_of(w.map(str.upper), w.map(lambda s: s + " "), short), odds=6)


def lists(s: st.SearchStrategy[Any], n: int = 4) -> st.SearchStrategy[list[Any]]:
    return st.lists(s, max_size=n)


_SLUG = "abcdefghijklmnopqrstuvwxyz0123456789-"
new_ids = st.text(alphabet=_SLUG, min_size=1, max_size=12).map(lambda s: "fz-" + s)
ids = mostly(st.one_of(st.sampled_from(KNOWN_IDS), new_ids), short)

# ---------------------------------------------------------------- JSON
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63 - 2, max_value=2**70),
                      doubles, st.text(max_size=30))
json_values = st.recursive(json_leaf, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c,
                                                                                           max_size=4), max_leaves=12)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any], max_mutations: int = 3) -> Any:
    """``base`` with 0..max_mutations random edits: a node replaced by random JSON, a key deleted, a key added."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(0, max_mutations))):
        path = draw(st.sampled_from(_paths(doc)))
        if not path:
            doc = draw(json_values) if draw(st.integers(0, 9)) == 0 else doc
            continue
        parent = doc
        try:
            for p in path[:-1]:
                parent = parent[p]
        except (KeyError, IndexError, TypeError):
            continue
        action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(json_values)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(json_values)
    return doc


def dumps(doc: Any) -> str:
    return json.dumps(doc, allow_nan=True)  # NaN / Infinity literals are part of the attack surface


def json_texts(base: dict[str, Any]) -> st.SearchStrategy[str]:
    """Valid-then-mutated documents, arbitrary JSON, and text that is not JSON at all."""
    junk = st.one_of(json_values.map(dumps), texts,
                     st.sampled_from(["{", "[]", "{}", '{"id": 1e999}', '{"a": NaN}', "1" * 5000]))
    return mostly(mutated(base).map(dumps), junk)


def _trajectory() -> dict[str, Any]:
    timing = Timing(protocol=TimingProtocol(method="do_bench-median"), geomean_speedup=1.8)
    rnd = Round(index=1, levels_reached=["L1"], hypothesis="one row per program is launch bound",
                evidence=[EvidenceItem(level="L1", kind="quick_match", summary="rows-per-program matched")],
                rewrite=RoundRewrite(family="rows-per-program", description="8 rows per program"),
                validation=Validation(passed=True), timing=timing, outcome="improved")
    t = Trajectory(id="fz-traj-base", problem=ProblemRef(name="softmax_rows"), backend="cuda", rounds=[rnd])
    return t.model_dump(mode="json")


TRAJECTORY_BASE = _trajectory()


@st.composite
def trajectory_docs(draw: st.DrawFn) -> str:
    base = dict(TRAJECTORY_BASE, id=draw(st.one_of(new_ids, new_ids, short)))
    return draw(json_texts(base))


# ---------------------------------------------------------------- messages
symptoms = st.builds(pb.Symptoms, bottleneck_classes=lists(vocab(BOTTLENECK_CLASSES)), profile_signals=lists(short),
                     ir_signatures=lists(vocab(IR_SIGNATURES)), code_features=lists(short))
card_filter = st.builds(pb.CardFilter, kinds=lists(vocab(CARD_KINDS), 2), backends=lists(vocab(BACKENDS), 2),
                        levels=lists(vocab(LEVELS), 2), statuses=lists(vocab(CARD_STATUSES), 2))
modes = vocab(("hybrid", "dense", "bm25"))


@st.composite
def structs(draw: st.DrawFn) -> Struct:
    s = Struct()
    d = draw(st.dictionaries(st.text(max_size=8), json_values.filter(lambda v: not isinstance(v, int) or
                                                                     abs(v) < 2**53), max_size=4))
    try:
        s.update(d)
    except (ValueError, TypeError):
        pass  # not representable as a Struct on the client side; send it empty
    return s


evidence = st.builds(pb.Evidence, kind=vocab(("measurement", "ir", "profile", "source", "doc", "trajectory")),
                     text=texts, source=short, metric=st.dictionaries(st.text(max_size=8), doubles, max_size=3))
#: per Card field, the garbage that may replace it (each generated card takes a valid base and 0-3 of these)
CARD_GARBAGE: dict[str, st.SearchStrategy[Any]] = {
    "id": ids, "kind": vocab(CARD_KINDS), "title": texts, "summary": texts, "body": texts,
    "backends": lists(vocab(BACKENDS), 3), "levels": lists(vocab(LEVELS), 3), "symptoms": symptoms,
    "preconditions": lists(short, 2), "interpretation": texts, "evidence": lists(evidence, 2),
    "sources": lists(short, 2), "related": lists(ids, 2), "compiler_scope": lists(short, 2),
    "verification": lists(st.builds(pb.Verification, what=short, tool=short, result=short, date=short), 2),
    "status": vocab(CARD_STATUSES), "version": int32,
    "rewrite": st.builds(pb.Rewrite, description=texts,
                         recipe=st.one_of(st.none(), st.builds(pb.Recipe, kind=short, params=structs()))),
    "provenance": st.builds(pb.Provenance, origin=vocab(("curated", "synthesized")), rounds=lists(short, 2),
                            author=short),
    "stats": st.builds(pb.CardStats, cited=int64, applied=int64, verified=int64, lift_n=int64, lift_mean=doubles,
                       lift_ci_low=doubles, lift_ci_high=doubles),
    "anti_signal": st.builds(pb.AntiSignalFields, trigger_evidence=lists(short, 2), contraindicated=lists(short, 2),
                             counterexample=short),
    "invariant": st.builds(pb.InvariantFields, passes=lists(short, 2), legality=short,
                           question_templates=lists(texts, 2)),
}


def _set(msg: Any, name: str, value: Any) -> None:
    field = msg.DESCRIPTOR.fields_by_name[name]
    if field.is_repeated:
        del getattr(msg, name)[:]
        getattr(msg, name).extend(value)
    elif field.message_type is not None:
        getattr(msg, name).CopyFrom(value)
    else:
        setattr(msg, name, value)


@st.composite
def cards(draw: st.DrawFn, bases: list[pb.Card] | None = None) -> pb.Card:
    """A valid base card (one of ``bases``, default BASE_CARDS) with 0-3 fields replaced by garbage."""
    card = pb.Card()
    card.CopyFrom(draw(st.sampled_from(bases or BASE_CARDS)))
    if draw(st.booleans()):
        card.id = draw(new_ids)
    for name in draw(st.lists(st.sampled_from(sorted(CARD_GARBAGE)), max_size=3, unique=True)):
        _set(card, name, draw(CARD_GARBAGE[name]))
    return card


@st.composite
def cursors(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(short)
    payload = draw(st.one_of(json_values.map(dumps), st.sampled_from(KNOWN_IDS).map(
        lambda i: json.dumps({"after": i}))))
    return base64.urlsafe_b64encode(payload.encode()).decode()


REQUESTS: dict[str, st.SearchStrategy[Any]] = {
    "Search": st.builds(pb.SearchRequest, text=st.one_of(st.just("softmax rows launch bound"), queries), top_k=counts,
                        filter=card_filter, mode=modes),
    "QuickMatch": st.builds(pb.QuickMatchRequest, symptoms=symptoms, text=queries, backend=vocab(BACKENDS),
                            top_k=counts, exclude=lists(ids)),
    "GetCard": st.builds(pb.GetCardRequest, id=ids, version=counts),
    "ListCards": st.builds(pb.ListCardsRequest, filter=card_filter, page_size=counts, cursor=cursors()),
    "GetInvariants": st.builds(pb.GetInvariantsRequest, pass_names=lists(st.one_of(
        st.sampled_from(["triton-to-linalg", "tritongpu-coalesce", "convert-layout"]), short)),
        ir_signatures=lists(vocab(IR_SIGNATURES)), backend=vocab(BACKENDS), text=queries, top_k=counts),
    "UpsertCard": st.builds(pb.UpsertCardRequest, card=st.one_of(st.none(), cards(), cards(), cards())),
    "SetCardStatus": st.builds(pb.SetCardStatusRequest, id=ids, status=vocab(CARD_STATUSES), reason=texts,
                               version=counts),
    "SubmitTrajectory": st.builds(pb.SubmitTrajectoryRequest, trajectory_json=trajectory_docs()),
    "RunSynthesis": st.builds(pb.RunSynthesisRequest, only_new=st.booleans()),
    "ListProposals": st.builds(pb.ListProposalsRequest, status=vocab(("pending", "approved", "rejected", "merged")),
                               page_size=counts, cursor=cursors()),
}


def known_or_junk(known: list[str]) -> st.SearchStrategy[str]:
    return mostly(st.sampled_from(known), short) if known else short


def get_job_requests(job_ids: list[str]) -> st.SearchStrategy[pb.GetJobRequest]:
    return st.builds(pb.GetJobRequest, job_id=known_or_junk(job_ids))


def get_proposal_requests(proposal_ids: list[str]) -> st.SearchStrategy[pb.GetProposalRequest]:
    return st.builds(pb.GetProposalRequest, proposal_id=known_or_junk(proposal_ids))


def review_requests(proposal_ids: list[str], drafts: list[pb.Card]) -> st.SearchStrategy[pb.ReviewRequest]:
    """Review requests aimed at real proposals (and at none), with edited cards mutated from real drafts."""
    pid = known_or_junk(proposal_ids)
    card = mostly(cards(drafts), st.one_of(st.none(), st.just(pb.Card())))
    return st.builds(pb.ReviewRequest, proposal_id=pid, action=vocab(("approve", "reject", "edit", "merge")),
                     reason=mostly(st.text(max_size=40), st.just("")), card=card,
                     merge_into=mostly(ids, st.just("")),
                     reviewer=short)
