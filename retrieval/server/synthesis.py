"""SynthesisService servicer: trajectory intake, background synthesis jobs, proposals and review — a thin
adapter over ``synthesis.curation.Curator``."""

from __future__ import annotations

import json
from typing import Any

import grpc

from kb.errors import InvalidArgument
from kb.limits import Limits, check_json
from kb.models import Trajectory
from kb.service import check_storable
from retrieval import convert
from retrieval.server.interceptors import caller
from retrieval.server.knowledge import fit_message, message_budget
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc
from synthesis.curation import Curator
from synthesis.models import PROPOSAL_STATUSES, REVIEW_ACTIONS, Proposal

__all__ = ["SynthesisServicer", "parse_trajectory"]


def _json_object(raw: str, field: str, limits: Limits | None = None) -> dict[str, Any]:
    check_json(raw, limits or Limits(), field)  # before the parser recurses into a deep document
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, or a 5000-digit integer (int_max_str_digits)
        raise InvalidArgument(f"not valid JSON: {e}", field=field) from e
    if not isinstance(data, dict):
        raise InvalidArgument("must be a JSON object", field=field)
    return data


def parse_trajectory(raw: str, limits: Limits | None = None) -> Trajectory:
    return convert.validate(Trajectory, _json_object(raw, "trajectory_json", limits), "trajectory")


def _job(doc: dict[str, Any]) -> pb.JobStatus:
    return pb.JobStatus(job_id=doc["job_id"], state=doc["state"], done=int(doc.get("done", 0)),
                        total=int(doc.get("total", 0)), message=doc.get("message", ""),
                        result_json=json.dumps(doc.get("result", {})))


class SynthesisServicer(pb_grpc.SynthesisServiceServicer):
    def __init__(self, kb: Any, curator: Curator | None = None) -> None:
        self.kb = kb
        self._curator = curator

    @property
    def curator(self) -> Curator:
        if self._curator is None:
            self._curator = Curator(self.kb.target if hasattr(self.kb, "target") else self.kb)
        return self._curator

    def _proposal(self, p: Proposal) -> pb.Proposal:
        near = self.curator.nearest_family(p)
        return pb.Proposal(proposal_json=p.model_dump_json(), nearest_card_json=near.model_dump_json() if near else "")

    def SubmitTrajectory(self, request: pb.SubmitTrajectoryRequest,
                         context: grpc.ServicerContext) -> pb.SubmitTrajectoryResponse:
        traj = parse_trajectory(request.trajectory_json, self.kb.settings.limits)
        created = self.kb.submit_trajectory(traj)
        return pb.SubmitTrajectoryResponse(trajectory_id=traj.id, created=created)

    def RunSynthesis(self, request: pb.RunSynthesisRequest, context: grpc.ServicerContext) -> pb.JobStatus:
        return _job(self.curator.start_job(only_new=request.only_new))

    def GetJob(self, request: pb.GetJobRequest, context: grpc.ServicerContext) -> pb.JobStatus:
        if not request.job_id:
            raise InvalidArgument("job_id is required", field="job_id")
        return _job(self.curator.job(request.job_id))

    def ListProposals(self, request: pb.ListProposalsRequest,
                      context: grpc.ServicerContext) -> pb.ListProposalsResponse:
        if request.status and request.status not in PROPOSAL_STATUSES:
            raise InvalidArgument(f"status must be one of {', '.join(PROPOSAL_STATUSES)}", field="status")
        page = self.curator.proposal_page(request.status or None, request.page_size or 100, request.cursor)
        resp = pb.ListProposalsResponse(proposals=[pb.Proposal(proposal_json=p.model_dump_json())
                                                   for p in page.proposals], next_cursor=page.next_cursor)
        if fit_message(resp, "proposals", message_budget(self.curator.kb.settings.max_message_bytes)):
            resp.next_cursor = page.cursors[len(resp.proposals) - 1]  # the next page starts after the last one sent
        return resp

    def GetProposal(self, request: pb.GetProposalRequest, context: grpc.ServicerContext) -> pb.Proposal:
        if not request.proposal_id:
            raise InvalidArgument("proposal_id is required", field="proposal_id")
        return self._proposal(self.curator.proposal(request.proposal_id))

    def Review(self, request: pb.ReviewRequest, context: grpc.ServicerContext) -> pb.Proposal:
        if request.action not in REVIEW_ACTIONS:
            raise InvalidArgument(f"action must be one of {', '.join(REVIEW_ACTIONS)}", field="action")
        if not request.proposal_id and not (request.action == "edit" and request.card_json):
            raise InvalidArgument("proposal_id is required (only an edit with card_json may omit it)",
                                  field="proposal_id")
        card = None
        if request.card_json:
            from pydantic import ValidationError

            from kb.models import parse_card

            try:
                card = parse_card(_json_object(request.card_json, "card_json", self.kb.settings.limits))
            except ValidationError as e:
                raise convert._invalid(e, "card_json") from e
            check_storable(card, "card_json", self.kb.settings.limits)
        # the decision is recorded under the authenticated token's name; request.reviewer is only a fallback for a
        # servicer run without the auth interceptor (tests)
        who = caller()
        reviewer = who.name if who is not None and who.name else (request.reviewer or "reviewer")
        # no proposal: an edit of a served card (card_json checked above), queued as a new version for review
        if not request.proposal_id and card is not None:
            return self._proposal(self.curator.propose_edit(card, author=reviewer, reason=request.reason))
        done = self.curator.review(request.proposal_id, request.action, reviewer=reviewer,
                                   reason=request.reason, card=card, merge_into=request.merge_into)
        return self._proposal(done)
