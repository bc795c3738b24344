"""SynthesisService servicer: trajectory intake, background synthesis jobs, proposals and review — a thin
adapter over ``synthesis.curation.Curator``."""

from __future__ import annotations

from typing import Any

import grpc

from kb.errors import InvalidArgument
from kb.service import check_storable
from retrieval import convert
from retrieval.server.interceptors import caller
from retrieval.server.knowledge import fit_message, message_budget
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc
from synthesis.curation import Curator
from synthesis.models import PROPOSAL_STATUSES, REVIEW_ACTIONS, Proposal

__all__ = ["SynthesisServicer"]


class SynthesisServicer(pb_grpc.SynthesisServiceServicer):
    def __init__(self, kb: Any, curator: Curator | None = None) -> None:
        self.kb = kb
        self._curator = curator

    @property
    def curator(self) -> Curator:
        if self._curator is None:
            self._curator = Curator(self.kb.target if hasattr(self.kb, "target") else self.kb)
        return self._curator

    def _proposal(self, p: Proposal) -> pb.ReviewItem:
        return convert.to_proto_review_item(p, self.curator.nearest_family(p))

    def SubmitTrajectory(self, request: pb.SubmitTrajectoryRequest,
                         context: grpc.ServicerContext) -> pb.SubmitTrajectoryResponse:
        traj = convert.from_proto_trajectory(request, self.kb.settings.limits)
        created = self.kb.submit_trajectory(traj)
        return pb.SubmitTrajectoryResponse(trajectory_id=traj.id, created=created)

    def RunSynthesis(self, request: pb.RunSynthesisRequest, context: grpc.ServicerContext) -> pb.JobStatus:
        return convert.to_proto_job(self.curator.start_job(only_new=request.only_new))

    def GetJob(self, request: pb.GetJobRequest, context: grpc.ServicerContext) -> pb.JobStatus:
        if not request.job_id:
            raise InvalidArgument("job_id is required", field="job_id")
        return convert.to_proto_job(self.curator.job(request.job_id))

    def ListProposals(self, request: pb.ListProposalsRequest,
                      context: grpc.ServicerContext) -> pb.ListProposalsResponse:
        if request.status and request.status not in PROPOSAL_STATUSES:
            raise InvalidArgument(f"status must be one of {', '.join(PROPOSAL_STATUSES)}", field="status")
        page = self.curator.proposal_page(request.status or None, request.page_size or 100, request.cursor)
        resp = pb.ListProposalsResponse(proposals=[convert.to_proto_proposal(p) for p in page.proposals],
                                        next_cursor=page.next_cursor)
        if fit_message(resp, "proposals", message_budget(self.curator.kb.settings.max_message_bytes)):
            resp.next_cursor = page.cursors[len(resp.proposals) - 1]  # the next page starts after the last one sent
        return resp

    def GetProposal(self, request: pb.GetProposalRequest, context: grpc.ServicerContext) -> pb.ReviewItem:
        if not request.proposal_id:
            raise InvalidArgument("proposal_id is required", field="proposal_id")
        return self._proposal(self.curator.proposal(request.proposal_id))

    def Review(self, request: pb.ReviewRequest, context: grpc.ServicerContext) -> pb.ReviewItem:
        if request.action not in REVIEW_ACTIONS:
            raise InvalidArgument(f"action must be one of {', '.join(REVIEW_ACTIONS)}", field="action")
        if not request.proposal_id and not (request.action == "edit" and request.HasField("card")):
            raise InvalidArgument("proposal_id is required (only an edit with a card may omit it)",
                                  field="proposal_id")
        card = convert.from_proto_review_card(request)
        if card is not None:
            check_storable(card, "card", self.kb.settings.limits)
        # the decision is recorded under the authenticated token's name; request.reviewer is only a fallback for a
        # servicer run without the auth interceptor (tests)
        who = caller()
        reviewer = who.name if who is not None and who.name else (request.reviewer or "reviewer")
        # no proposal: an edit of a served card (card checked above), queued as a new version for review
        if not request.proposal_id and card is not None:
            return self._proposal(self.curator.propose_edit(card, author=reviewer, reason=request.reason))
        done = self.curator.review(request.proposal_id, request.action, reviewer=reviewer,
                                   reason=request.reason, card=card, merge_into=request.merge_into)
        return self._proposal(done)
