"""ListCauses over a real server, the cause conversion, the authorization matrix over every RPC, and
``ladder kb causes`` (issue 30, "Causes that grow")."""

from __future__ import annotations

import json

import grpc
import pytest
from typer.testing import CliRunner

from kb.causes import SEED_CAUSES
from kb.models import CauseRecord, Evidence, Provenance
from kb.vocab import CAUSES
from retrieval import convert
from retrieval.server.interceptors import METHOD_ROLES
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

READ = (("authorization", "Bearer read-token-0123456789"),)


def test_the_authorization_matrix_names_every_rpc_of_both_services():
    methods = {f"/{svc.full_name}/{m.name}" for svc in pb.DESCRIPTOR.services_by_name.values() for m in svc.methods}
    assert set(METHOD_ROLES) == methods  # an RPC missing here would be served with no role check at all
    assert METHOD_ROLES["/ladder.v1.KnowledgeService/ListCauses"] is None  # a read, like ListCards


def test_a_cause_survives_the_wire():
    cause = CauseRecord(id="strided_access", title="Strided access", description="A stride-s access wastes sectors.",
                        bottleneck_class="memory_bound", families=["coalesce-strided-loads"], explains=["access_stride"],
                        status="proposed", version=3,
                        provenance=Provenance(origin="synthesized", rounds=["t-1#2"], author="synthesis@offline"),
                        evidence=[Evidence(kind="trajectory", text="share 0.4 -> 0.05", source="t-1#2",
                                           metric={"before": 0.4, "after": 0.05})])
    assert convert.from_proto_cause(convert.to_proto_cause(cause)) == cause
    assert convert.from_proto_causes(convert.to_proto_causes(list(SEED_CAUSES))) == list(SEED_CAUSES)


def test_a_bad_cause_on_the_wire_names_the_field():
    bad = pb.ListCausesResponse(causes=[pb.Cause(id="Not A Cause", title="Bad", description="An id with spaces.")])
    with pytest.raises(Exception) as e:
        convert.from_proto_causes(bad)
    assert getattr(e.value, "field", "") == "causes.0.id"


@pytest.fixture(scope="module")
def stub(server):
    ch = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield pb_grpc.KnowledgeServiceStub(ch)
    ch.close()


def test_list_causes_serves_the_seed_and_filters_by_status(stub):
    every = stub.ListCauses(pb.ListCausesRequest())
    assert {c.id for c in every.causes} == CAUSES
    fma = next(c for c in every.causes if c.id == "fma_dot")
    assert list(fma.families)[0] == "tf32-for-fp32-matmul" and "dot_units" in fma.explains
    assert not stub.ListCauses(pb.ListCausesRequest(statuses=["proposed"])).causes
    assert len(stub.ListCauses(pb.ListCausesRequest(statuses=["active"]), metadata=READ).causes) == len(CAUSES)


def test_list_causes_with_a_bad_status_is_invalid_argument_naming_it(stub):
    with pytest.raises(grpc.RpcError) as e:
        stub.ListCauses(pb.ListCausesRequest(statuses=["active", "shiny"]))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert dict(e.value.trailing_metadata() or ()).get("ladder-error-field") == "statuses.1"


def test_ladder_kb_causes_embedded_and_through_the_server(server, kb_home):
    from optimizer.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["kb", "causes", "--home", str(kb_home), "--json"])
    assert res.exit_code == 0, res.output
    local = json.loads(res.stdout[res.stdout.index("["):])
    assert {c["id"] for c in local} == CAUSES
    res = runner.invoke(app, ["kb", "causes", "--server", f"127.0.0.1:{server.port}", "--status", "active", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout[res.stdout.index("["):]) == local
    res = runner.invoke(app, ["kb", "causes", "--home", str(kb_home), "--status", "shiny"])
    assert res.exit_code != 0 and "statuses.0" in res.output
