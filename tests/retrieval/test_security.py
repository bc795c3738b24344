"""Security (issue 8.4): constant-time token comparison, tokens never logged, TLS between server and client with a
self-signed certificate made here, and request size limits."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import logging
from pathlib import Path

import grpc
import pytest

from kb.errors import InvalidArgument
from kb.settings import Settings
from retrieval.server.interceptors import AuthInterceptor
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

TOKENS = {"contrib-token-0123456789": ["contributor"], "review-token-0123456789": ["reviewer"], "read-token-0123456789": ["reader"]}
SECRETS = [*TOKENS, "wrong-token-5d1e"]


def _card(cid: str) -> pb.Card:
    return pb.Card(id=cid, kind="pattern", title=f"Card {cid}", summary="A card sent by the security tests.",
                   body="b", backends=["cuda"], levels=["L1"], sources=["https://example.org"],
                   rewrite=pb.Rewrite(description="r"))


# ---------------------------------------------------------------- tokens
def test_every_token_is_compared_in_constant_time(monkeypatch):
    """hmac.compare_digest, against every configured token whether or not an earlier one matched, so neither the
    comparison nor the loop length tells an attacker how much of a token was right or which one matched."""
    import retrieval.server.interceptors as icp

    calls: list[tuple[bytes, bytes]] = []
    real = icp.hmac.compare_digest
    monkeypatch.setattr(icp.hmac, "compare_digest", lambda a, b: calls.append((a, b)) or real(a, b))
    auth = AuthInterceptor(Settings(tokens=TOKENS))
    for presented, roles in (("contrib-token-0123456789", {"contributor", "reader"}), ("review-tokeX", set()), ("", set())):
        calls.clear()
        assert auth._roles((("authorization", f"Bearer {presented}"),)) == roles
        assert len(calls) == len(TOKENS) and {b for _, b in calls} == {t.encode() for t in TOKENS}
    assert auth._roles((("authorization", "contrib-token-0123456789"),)) is None  # no "Bearer ": no credentials at all


def test_tokens_never_reach_logs_or_error_messages(server, caplog):
    caplog.set_level(logging.DEBUG)
    ch = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    stub, synth = pb_grpc.KnowledgeServiceStub(ch), pb_grpc.SynthesisServiceStub(ch)
    details = []
    attempts = [("wrong-token-5d1e", stub.UpsertCard, pb.UpsertCardRequest(card=_card("sec-a"))),
                ("read-token-0123456789", stub.UpsertCard, pb.UpsertCardRequest(card=_card("sec-b"))),
                ("contrib-token-0123456789", stub.SetCardStatus, pb.SetCardStatusRequest(id="sec-c", status="active")),
                ("contrib-token-0123456789", synth.RunSynthesis, pb.RunSynthesisRequest()),
                ("contrib-token-0123456789", synth.SubmitTrajectory, pb.SubmitTrajectoryRequest(trajectory_json="{")),
                ("contrib-token-0123456789", stub.UpsertCard, pb.UpsertCardRequest(card=_card("sec-ok")))]
    try:
        for token, call, req in attempts:
            try:
                call(req, metadata=(("authorization", f"Bearer {token}"),), timeout=60)
            except grpc.RpcError as e:
                details.append(e.details() or "")
                details.append(json.dumps(list(e.trailing_metadata() or ())))
    finally:
        ch.close()
    assert len(details) == 2 * (len(attempts) - 1)  # all refused but the last
    seen = caplog.text + "\n".join(details) + repr(server.settings) + str(server.settings)
    leaked = [t for t in SECRETS if t in seen]
    assert not leaked, f"token(s) {leaked} appear in logs or error messages"
    assert "denied" in caplog.text  # the refusals were logged, with roles only


# ---------------------------------------------------------------- TLS
@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> tuple[Path, Path, Path]:
    """A self-signed certificate for localhost / 127.0.0.1 (and an unrelated one a client must not trust)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    d = tmp_path_factory.mktemp("tls")
    now = dt.datetime.now(dt.timezone.utc)

    def make(name: str) -> tuple[Path, Path]:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
                .not_valid_after(now + dt.timedelta(days=1))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                            x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                               critical=False)
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .sign(key, hashes.SHA256()))
        (d / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        (d / f"{name}.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                          serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))
        return d / f"{name}.pem", d / f"{name}.key"

    cert, key = make("ladder-test")
    other, _ = make("someone-else")
    return cert, key, other


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory, seeded_home: Path, embedder, certs):
    import shutil

    from kb.service import KnowledgeBase
    from retrieval.server.app import create_server

    cert, key, _ = certs
    home = tmp_path_factory.mktemp("tls-srv") / "kb"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    settings = Settings(home=home, tokens=TOKENS, port=0, tls_cert=cert, tls_key=key)
    handle = create_server(settings, kb=KnowledgeBase.open(settings, embedder=embedder), bind="127.0.0.1:0")
    assert handle.wait_ready(60)
    yield handle
    handle.stop(0)


def test_tls_round_trip(tls_server, certs, monkeypatch):
    from typer.testing import CliRunner

    from kb.errors import Unavailable
    from kb.models.search import SearchQuery
    from optimizer.cli.app import app
    from retrieval.client import GrpcKBClient

    cert, _, other = certs
    target = f"127.0.0.1:{tls_server.port}"
    with GrpcKBClient(target, Settings(tls_ca=cert), token="contrib-token-0123456789") as c:
        assert c.search(SearchQuery(text="why does argmax scalarize on Ascend"))[0].card.id
        from retrieval.convert import from_proto_card

        assert c.upsert_card(from_proto_card(_card("tls-write"))).id == "tls-write"  # token travels inside TLS
    with GrpcKBClient(target, Settings(tls_ca=other), timeout=10) as c, pytest.raises(Unavailable):
        c.get_card("top2-pairwise-max")  # a certificate the client does not trust
    with GrpcKBClient(target, Settings(), timeout=10) as c, pytest.raises(Unavailable):
        c.get_card("top2-pairwise-max")  # plaintext against a TLS server
    monkeypatch.setenv("LADDER_TLS_CA", str(cert))  # the CLI picks TLS up from the environment
    r = CliRunner().invoke(app, ["query", "argmax on Ascend", "--server", target, "--json", "--top-k", "1"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)[0]["id"]


def test_half_a_tls_setting_is_an_error_not_plaintext(tmp_path: Path, certs):
    from retrieval.client import GrpcKBClient
    from retrieval.server.app import create_server

    cert, _, _ = certs
    with pytest.raises(InvalidArgument) as e:
        create_server(Settings(home=tmp_path, tls_cert=cert), bind="127.0.0.1:0")
    assert e.value.field == "tls_key"
    with pytest.raises(InvalidArgument) as e:
        GrpcKBClient("127.0.0.1:1", Settings(tls_ca=tmp_path / "missing.pem"))
    assert e.value.field == "tls_ca"


# ---------------------------------------------------------------- size limits
def test_request_size_limits(server):
    """The server refuses requests above ``max_message_bytes`` (256 KiB in this fixture) before reading them, and
    keeps serving; the settings refuse a limit too small to carry a card."""
    from pydantic import ValidationError

    ch = grpc.insecure_channel(f"127.0.0.1:{server.port}", options=[("grpc.max_send_message_length", 8 << 20)])
    stub, synth = pb_grpc.KnowledgeServiceStub(ch), pb_grpc.SynthesisServiceStub(ch)
    big = "x" * (300 * 1024)
    try:
        for call, req in ((stub.UpsertCard, pb.UpsertCardRequest(card=_card("too-big"))),
                          (synth.SubmitTrajectory, pb.SubmitTrajectoryRequest(trajectory_json=big)),
                          (stub.Search, pb.SearchRequest(text=big))):
            if isinstance(req, pb.UpsertCardRequest):
                req.card.body = big
            with pytest.raises(grpc.RpcError) as e:
                call(req, metadata=(("authorization", "Bearer contrib-token-0123456789"),), timeout=60)
            assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert stub.GetCard(pb.GetCardRequest(id="top2-pairwise-max"), timeout=30).id == "top2-pairwise-max"
    finally:
        ch.close()
    with pytest.raises(ValidationError):
        Settings(max_message_bytes=1024)
