"""Units behind issue 17: depth/size limits name the field, the one terminal sanitiser, token names, and the
content hash that makes copies of a trajectory count once. No KB, no server: fast."""

from __future__ import annotations

import io
import json

import pytest

from kb.errors import InvalidArgument
from kb.limits import Limits, check_json, check_value
from kb.models import PatternCard, ProblemRef, Round, Trajectory
from kb.sanitize import terminal_text, terminal_tree
from kb.settings import Settings

HOSTILE = "name\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\\x9b31m\x07end"


def test_a_document_nested_100k_levels_is_refused_before_parsing():
    raw = "[" * 100_000 + "]" * 100_000
    with pytest.raises(InvalidArgument) as e:
        check_json(raw, Limits(), "trajectory_json")
    assert e.value.field == "trajectory_json" and "levels deep" in e.value.message
    check_json(json.dumps({"a": [[{"b": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}]]}), Limits(), "x")  # brackets in strings


def test_an_oversized_document_is_refused_by_size():
    with pytest.raises(InvalidArgument) as e:
        check_json("x" * 70_000, Limits(document_bytes=65_536), "trajectory_json")
    assert "65536-byte limit" in e.value.message


def test_card_fields_have_limits_that_name_the_field():
    card = PatternCard(id="big-card", title="Big card", summary="A card with a large body for the limit test.",
                       backends=["cuda"], levels=["L1"], body="x" * (3_900_000))
    with pytest.raises(InvalidArgument) as e:
        check_value(card.model_dump(), Limits(), "card", kind="card")
    assert e.value.field == "card.body" and "LADDER_MAX_CARD_BODY_BYTES" in e.value.message
    long_pre = card.model_copy(update={"body": "", "preconditions": ["p" * 9000]})
    with pytest.raises(InvalidArgument) as e:
        check_value(long_pre.model_dump(), Limits(), "card", kind="card")
    assert e.value.field == "card.preconditions.0"
    many = card.model_copy(update={"body": "", "sources": ["s"] * 2001})
    with pytest.raises(InvalidArgument) as e:
        check_value(many.model_dump(), Limits(), "card", kind="card")
    assert e.value.field == "card.sources"


def test_deep_values_and_lone_surrogates_are_refused_without_recursion():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(InvalidArgument, match="levels deep"):
        check_value({"data": deep}, Limits(), "trajectory")
    with pytest.raises(InvalidArgument) as e:
        check_value({"hypothesis": "a\ud800b"}, Limits(), "trajectory")
    assert e.value.field == "trajectory.hypothesis"


def test_limits_come_from_settings(monkeypatch):
    monkeypatch.setenv("LADDER_MAX_CARD_BODY_BYTES", "2048")
    monkeypatch.setenv("LADDER_MAX_DEPTH", "8")
    lim = Settings().limits
    assert (lim.card_body_bytes, lim.depth) == (2048, 8)


def test_the_sanitiser_strips_c0_c1_controls_but_keeps_newline_and_tab():
    clean = terminal_text(HOSTILE + "\nline\ttab")
    assert not any(ord(c) < 32 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F for c in clean)
    assert clean.endswith("end\nline\ttab") and clean.startswith("name")
    assert terminal_tree({"k\x1b": [HOSTILE, 3, None]}) == {"k": [terminal_text(HOSTILE), 3, None]}


def test_the_cli_console_never_prints_content_escapes():
    from rich.table import Table
    from rich.text import Text

    from optimizer.cli._common import SafeConsole

    buf = io.StringIO()
    con = SafeConsole(file=buf, force_terminal=True, width=100)
    table = Table("problem")
    table.add_row(Text(HOSTILE))
    con.print(table)
    con.print(Text(HOSTILE, style="bold red"))
    out = buf.getvalue()
    assert "\x07" not in out and "\x9b" not in out
    assert "\x1b]52" not in out and "\x1b]8;;https" not in out and "\x1b[2J" not in out
    assert "\x1b[" in out  # rich's own styling still reaches the terminal


def test_tokens_name_their_principals():
    rev, con = "t-rev-0123456789abcdef", "t-con-0123456789abcdef"
    s = Settings(tokens={rev: {"name": "ana", "roles": ["reviewer"]}, con: ["contributor"]})
    by_token = dict(s.principals())
    assert by_token[rev.encode()].name == "ana" and "contributor" in by_token[rev.encode()].roles
    anon = by_token[con.encode()]
    assert anon.name.startswith("contributor-") and con not in anon.name and anon.roles == {"contributor", "reader"}


def test_content_hash_ignores_ids_and_times_only():
    r = Round(index=0, outcome="baseline", hypothesis="h")
    t = Trajectory(id="abc-1", problem=ProblemRef(name="softmax"), backend="cuda", rounds=[r])
    later = Round(index=0, outcome="baseline", hypothesis="h", duration_s=9.0, candidate_path="/tmp/x.py")
    copy = t.model_copy(update={"id": "abc-2", "rounds": [later]})
    assert copy.content_hash() == t.content_hash()
    assert t.model_copy(update={"device": "H200"}).content_hash() != t.content_hash()


def test_a_round_without_a_target_hashes_as_before_and_one_with_a_target_differs() -> None:
    from kb.models import Round, TargetEffect

    plain = Round(index=1, outcome="neutral")
    assert "target" not in plain.content()  # rounds recorded before Round.target keep their content hashes
    eff = TargetEffect(cause="register_spills", before_ms=0.3, after_ms=0.0, verdict="removed")
    targeted = plain.model_copy(update={"target": eff})
    assert targeted.content()["target"]["verdict"] == "removed"
