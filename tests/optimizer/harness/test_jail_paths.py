"""The jail binds what a worker's compile and imports need beyond the system directories (found on the H200
image: CC=/opt/gcc/bin/gcc and wheels under /tmp/site were outside the jail, so every compile and every import of
a carried wheel failed)."""

from __future__ import annotations

from pathlib import Path

from optimizer.harness import jail


def test_the_compiler_tree_and_pythonpath_entries_are_readable(tmp_path: Path) -> None:
    gcc = tmp_path / "opt" / "gcc" / "bin" / "gcc"
    gcc.parent.mkdir(parents=True)
    gcc.write_text("")
    ptxas = tmp_path / "cuda" / "ptxas"
    ptxas.parent.mkdir()
    ptxas.write_text("")
    site = tmp_path / "site"
    env = {"CC": str(gcc), "TRITON_PTXAS_PATH": str(ptxas), "PYTHONPATH": f"{site}:relative/dir", "CXX": "g++"}
    got = jail._toolchain_paths(env)
    assert got == [str(site), str(tmp_path / "opt" / "gcc"), str(tmp_path / "cuda")]
    assert jail._toolchain_paths({}) == []
