"""SynthesisService servicer: trajectory intake, background synthesis jobs, proposals and review."""

from __future__ import annotations

import json

import grpc

from kb.models import Trajectory
from kb.service import KnowledgeBase
from retrieval import convert
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

__all__ = ["SynthesisServicer"]


def parse_trajectory(raw: str) -> Trajectory:
    from kb.errors import InvalidArgument

    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise InvalidArgument(f"not valid JSON: {e}", field="trajectory_json") from e
    if not isinstance(data, dict):
        raise InvalidArgument("must be a JSON object (a kb.models.Trajectory)", field="trajectory_json")
    return convert.validate(Trajectory, data, "trajectory")


class SynthesisServicer(pb_grpc.SynthesisServiceServicer):
    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def SubmitTrajectory(self, request: pb.SubmitTrajectoryRequest,
                         context: grpc.ServicerContext) -> pb.SubmitTrajectoryResponse:
        traj = parse_trajectory(request.trajectory_json)
        created = self.kb.submit_trajectory(traj)
        return pb.SubmitTrajectoryResponse(trajectory_id=traj.id, created=created)
