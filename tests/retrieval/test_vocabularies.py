"""Each vocabulary has one source (a Literal read with typing.get_args) that every transport uses."""

from __future__ import annotations

from typing import get_args

import pytest
from pydantic import ValidationError

from kb.settings import IMPLIES, Role, Settings
from retrieval.client import review as review_client
from retrieval.server import interceptors
from retrieval.web import app as web_app
from retrieval.web import render
from synthesis import curation
from synthesis.models import PROPOSAL_STATUSES, REVIEW_ACTIONS, ProposalStatus, ReviewAction


def test_statuses_and_actions_come_from_the_literals():
    assert PROPOSAL_STATUSES == get_args(ProposalStatus) and "pending" in PROPOSAL_STATUSES
    assert REVIEW_ACTIONS == get_args(ReviewAction) and "approve" in REVIEW_ACTIONS
    assert review_client.STATUSES is PROPOSAL_STATUSES and review_client.ACTIONS is REVIEW_ACTIONS
    assert curation.ReviewAction is ReviewAction


def test_the_queue_page_offers_a_tab_per_status():
    page = render.queue_page([], "pending", nonce="n", user=None)
    for status in (*PROPOSAL_STATUSES, "all"):
        assert f"/queue?status={status}" in page


def test_one_role_table_for_the_interceptor_and_the_web_app():
    assert set(IMPLIES) == set(get_args(Role))
    assert all(role in implied and implied <= set(IMPLIES) for role, implied in IMPLIES.items())
    for module in (interceptors, web_app):  # neither keeps a copy of its own
        copies = [v for v in vars(module).values()
                  if isinstance(v, dict) and v is not IMPLIES and set(v) == set(IMPLIES)]
        assert not copies, module.__name__
    with pytest.raises(ValidationError):
        Settings(tokens={"t": ["admin"]})
