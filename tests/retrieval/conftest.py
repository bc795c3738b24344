from __future__ import annotations

import pytest

from kb.settings import Settings

#: the reviewer token is named: decisions are recorded under "ana" whatever a request claims
TOKENS = {"contrib-token-0123456789": ["contributor"], "review-token-0123456789": {"name": "ana", "roles": ["reviewer"]},
          "read-token-0123456789": ["reader"]}


@pytest.fixture(scope="module")
def server(tmp_path_factory, seeded_home, embedder):
    """A real server on a free port over a copy of the seeded KB, with contributor and reviewer tokens."""
    import shutil

    from kb.service import KnowledgeBase
    from retrieval.server.app import create_server

    home = tmp_path_factory.mktemp("srv") / "kb"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    settings = Settings(home=home, tokens=TOKENS, port=0, max_message_bytes=256 * 1024)
    kb = KnowledgeBase.open(settings, embedder=embedder)
    handle = create_server(settings, kb=kb, bind="127.0.0.1:0")
    assert handle.wait_ready(60)
    yield handle
    handle.stop(0)
