"""The LLM proposer against a local HTTP server that speaks OpenAI chat-completions."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from ladder_fakes import LADDER_CARDS, FakeKB

from optimizer.proposers.llm import LLMProposer, extract_code
from optimizer.rewrite.errors import NotApplicable
from optimizer.session import Session
from optimizer.settings import LadderSettings

DATA = Path(__file__).parent / "data"
REPLY_SOURCE = (DATA / "softmax" / "initial.py").read_text().replace("num_warps=4", "num_warps=2")


class Handler(BaseHTTPRequestHandler):
    requests: list[dict] = []
    reply = "Here is the rewrite.\n```python\n" + REPLY_SOURCE + "```\n"

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        payload = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": Handler.reply}}],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    Handler.requests.clear()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_llm_round_against_local_server(server: str, tmp_path: Path) -> None:
    settings = LadderSettings(llm_base_url=server, llm_model="test-model", llm_api_key="sk-test", validation_seeds=[0, 1],
                              sandbox_timeout_s=60, llm_max_retries=0)
    session = Session(DATA / "softmax", None, kb=FakeKB(LADDER_CARDS), settings=settings, backend="interpreter",
                      proposer=LLMProposer(settings), out_dir=tmp_path)
    traj = session.run(1)
    r1 = traj.rounds[1]
    assert r1.outcome == "neutral" and r1.validation.passed and r1.rewrite.recipe["kind"] == "llm"
    assert "-        softmax_kernel[(n_rows,)](x, y, n_rows, n_cols, x.stride(0), BLOCK_N=BLOCK_N, num_warps=4)" in r1.rewrite.diff
    req = Handler.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test" and req["body"]["model"] == "test-model"
    prompt = req["body"]["messages"][1]["content"]
    assert r1.stop.level == "L3" and r1.rewrite.family == "shuffle-explainer-test"  # a card without recipe: fine for an LLM
    assert "shuffle-explainer-test" in prompt and "[ir_signature]" in prompt and "class ModelNew" in prompt
    assert "Do not call the PyTorch op" in req["body"]["messages"][0]["content"]


def test_reply_without_code_is_a_refusal() -> None:
    with pytest.raises(NotApplicable, match="no ```python block"):
        extract_code("I would change num_warps.")
    assert "class ModelNew" in extract_code("```python\nclass X: pass\n```\n```py\nclass ModelNew: pass\n```")
    with pytest.raises(Exception, match="LADDER_LLM_BASE_URL"):
        LLMProposer(LadderSettings(llm_base_url=None, llm_model=None))
