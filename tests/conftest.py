"""Shared fixtures: one embedding model per test session, fresh KB homes, an in-process gRPC server."""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# a fresh IR cache and GPU-lock folder per test session: no test depends on what an earlier run left behind
os.environ.setdefault("LADDER_CACHE_DIR", tempfile.mkdtemp(prefix="ladder-test-cache-"))
os.environ.setdefault("LADDER_LOCK_DIR", tempfile.mkdtemp(prefix="ladder-test-locks-"))


@pytest.fixture(autouse=True)
def _seed() -> None:
    random.seed(0)


@pytest.fixture(scope="session")
def embedder():
    from kb.search.embedding import Embedder

    e = Embedder()
    e.warm()
    return e


@pytest.fixture(scope="session")
def seeded_home(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """A KB home seeded from the packaged cards once per session (tests copy it rather than re-embedding)."""
    from kb.service import KnowledgeBase
    from kb.settings import Settings

    home = tmp_path_factory.mktemp("seeded-kb")
    KnowledgeBase.open(Settings(home=home), embedder=embedder).close()
    return home


@pytest.fixture
def kb_home(tmp_path: Path, seeded_home: Path) -> Path:
    import shutil

    home = tmp_path / "kb"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    return home


@pytest.fixture
def kb(kb_home: Path, embedder):
    from kb.service import KnowledgeBase
    from kb.settings import Settings

    k = KnowledgeBase.open(Settings(home=kb_home), embedder=embedder)
    yield k
    k.close()
