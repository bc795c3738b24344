"""Shared fixtures: one embedding model per test session, fresh KB homes, an in-process gRPC server."""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# a fresh IR cache and GPU-lock folder per test session: no test depends on what an earlier run left behind. Under
# pytest-xdist (scripts/test.sh: `-n 2 --dist loadfile`) each worker process gets its own: a worker inherits the
# controller's environment, and a test that expects a cold cache or a free lock must not see another worker's.
_OWNER = os.environ.get("PYTEST_XDIST_WORKER", "main")
for _var, _prefix in (("LADDER_CACHE_DIR", "ladder-test-cache-"), ("LADDER_LOCK_DIR", "ladder-test-locks-")):
    # set by the caller (no owner mark): kept; set by this file in another process (the xdist controller): replaced
    if _var not in os.environ or os.environ.get(f"{_var}_TEST_OWNER", _OWNER) != _OWNER:
        os.environ[_var] = tempfile.mkdtemp(prefix=_prefix)
        os.environ[f"{_var}_TEST_OWNER"] = _OWNER


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
    """A KB home seeded from the packaged cards once per test run (tests copy it rather than re-embedding); xdist
    workers share one, seeded by whichever asks first (the others wait on a lock)."""
    import fcntl

    from kb.service import KnowledgeBase
    from kb.settings import Settings

    root = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        root = root.parent  # the run's base folder, one level above each worker's
    home, done = root / "seeded-kb", root / "seeded-kb.done"
    with open(root / "seeded-kb.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            KnowledgeBase.open(Settings(home=home), embedder=embedder).close()
            done.touch()
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
