"""The static account of the gap in ``ladder diagnose`` (issue 30): L3 reports a ``gap_account`` item per recorded
launch configuration and an ``unexplained`` item for an inefficiency no listed cause explains (a column walk whose
lanes are 8192 elements apart: the ladder's nearest listed cause is "scalar loads", which does not explain it)."""

from __future__ import annotations

from pathlib import Path

import pytest

ITEM = Path(__file__).resolve().parents[2] / "benchmarks" / "diagnosis" / "beyond" / "column_mean_fp32"


@pytest.fixture
def client(kb):
    from retrieval.client import LocalKBClient

    return LocalKBClient(kb=kb)


def test_diagnose_reports_the_account_and_what_no_listed_cause_explains(client, tmp_path: Path) -> None:
    from optimizer.diagnosis import diagnose

    d = diagnose(ITEM, ITEM / "initial.py", backend="interpreter", max_level="L3", kb=client, workdir=tmp_path,
                 validate=False)
    l3 = next(lv for lv in d.levels if lv.level == "L3")
    accounts = [e for e in l3.evidence if e.kind == "gap_account" and e.reference == "colmean_kernel"]
    assert accounts, [e.kind for e in l3.evidence]
    kinds = {f["kind"]: f for f in accounts[0].data["findings"]}
    assert kinds["access_stride"]["significant"] and kinds["access_stride"]["value"] == 8192
    assert kinds["access_stride"]["source_lines"] == [17]
    unexplained = {e.reference: e for e in l3.evidence if e.kind == "unexplained"}
    assert "access_stride" in unexplained and "no listed cause explains it" in unexplained["access_stride"].summary
    assert "vector_width" not in unexplained  # scalar loads are what the listed cause unvectorized_access explains
    # additive: the account decides nothing; the listed rules still reach their nearest cause (scalar loads), and
    # the unexplained item is what says that cause does not account for the stride
    assert d.decision is not None and d.decision.cause == "unvectorized_access"
