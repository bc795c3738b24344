"""``import optimizer``: the curated names resolve lazily to their defining modules, unknown names say what exists."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_every_public_name_resolves_to_its_module() -> None:
    import optimizer

    assert sorted(optimizer.__all__) == sorted(optimizer._EXPORTS)
    for name, module in optimizer._EXPORTS.items():
        obj = getattr(optimizer, name)
        assert getattr(sys.modules[module], name) is obj
    assert set(optimizer.__all__) <= set(dir(optimizer))


def test_an_unknown_name_lists_the_public_ones() -> None:
    import optimizer

    with pytest.raises(AttributeError, match="its public names: Diagnosis"):
        optimizer.no_such_thing  # noqa: B018


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = ("import sys, optimizer, optimizer.harness.problem; print(any(m in sys.modules for m in "
            "('optimizer.session', 'optimizer.ladder.engine', 'optimizer.diagnosis', 'optimizer.proposers.offline')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
