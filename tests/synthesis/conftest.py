"""Fixtures for synthesis tests."""

from __future__ import annotations

import pytest
from synth_builders import make_families

from kb.models import PatternCard


@pytest.fixture
def families() -> list[PatternCard]:
    return make_families()
