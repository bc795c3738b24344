"""Optional LLM polish of drafted cards through an OpenAI-compatible endpoint (off by default).

Only prose fields change (title, summary, body, interpretation, rewrite description, preconditions); ids,
symptoms, evidence, numbers and provenance stay exactly as mined. Any failure (no endpoint, bad JSON, a field
that no longer validates) keeps the deterministic draft and records why in ``reviewer_notes``.

Settings come from the environment: ``LADDER_LLM_BASE_URL``, ``LADDER_LLM_API_KEY``, ``LADDER_LLM_MODEL``,
``LADDER_LLM_TIMEOUT_S``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from kb.errors import ToolchainError, log_error
from kb.models import parse_card
from synthesis.models import Proposal

log = logging.getLogger(__name__)

__all__ = ["LLMSettings", "make_client", "polish_proposals"]

_FIELDS = ("title", "summary", "body", "interpretation", "preconditions", "rewrite_description")
_SYSTEM = (
    "You edit draft knowledge-base cards about Triton GPU kernel optimizations. Rewrite the prose so a kernel "
    "engineer can act on it: a specific title (<= 12 words), a 1-2 sentence summary, a concise markdown body. "
    "Keep every number, kernel name, card id and code snippet exactly; add no claims that the draft does not "
    'support. Answer with one JSON object with keys: "title", "summary", "body", "interpretation", '
    '"preconditions" (list of strings), "rewrite_description".'
)


class LLMSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LADDER_LLM_", extra="ignore")

    base_url: str | None = None
    api_key: str | None = None
    model: str = "gpt-4o-mini"
    timeout_s: float = 60.0
    temperature: float = 0.0


def make_client(settings: LLMSettings | None = None) -> Any:
    """An ``openai.OpenAI`` client for the configured endpoint; raises ToolchainError with the fix if unusable."""
    s = settings or LLMSettings()
    try:
        from openai import OpenAI
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ToolchainError("polishing needs the openai package: pip install 'kernel-ladder[llm]'") from e
    if not s.base_url and not s.api_key:
        raise ToolchainError("set LADDER_LLM_BASE_URL (and LADDER_LLM_API_KEY if the endpoint needs one) to polish")
    return OpenAI(base_url=s.base_url, api_key=s.api_key or "unused", timeout=s.timeout_s)


def _draft_payload(p: Proposal) -> dict[str, Any]:
    c = p.card
    return {
        "kind": c.kind, "title": c.title, "summary": c.summary, "body": c.body, "interpretation": c.interpretation,
        "preconditions": c.preconditions, "rewrite_description": c.rewrite.description if c.rewrite else "",
        "symptoms": c.symptoms.model_dump(), "evidence": [e.text for e in c.evidence[:6]],
    }


def _apply(p: Proposal, answer: dict[str, Any]) -> Proposal:
    data = p.card.model_dump()
    for key in _FIELDS:
        val = answer.get(key)
        if val is None:
            continue
        if key == "preconditions":
            if not isinstance(val, list) or not all(isinstance(x, str) for x in val):
                raise TypeError("preconditions must be a list of strings")
            data["preconditions"] = val
        elif not isinstance(val, str):
            raise TypeError(f"{key} must be a string")
        elif key == "rewrite_description":
            if data.get("rewrite") is not None and val.strip():
                data["rewrite"]["description"] = val
        else:
            data[key] = val
    return p.model_copy(update={"card": parse_card(data), "polished": True})


def polish_proposals(
    proposals: Sequence[Proposal],
    client: Any = None,
    settings: LLMSettings | None = None,
    *,
    kinds: frozenset[str] = frozenset({"new_family", "anti_signal"}),
) -> list[Proposal]:
    """Polish the prose of drafted cards (new families and anti-signals by default); the rest pass through."""
    s = settings or LLMSettings()
    cli = client if client is not None else make_client(s)
    out: list[Proposal] = []
    for p in proposals:
        if p.kind not in kinds:
            out.append(p)
            continue
        try:
            resp = cli.chat.completions.create(
                model=s.model,
                temperature=s.temperature,
                response_format={"type": "json_object"},
                messages=[
                    {"role": "system", "content": _SYSTEM},
                    {"role": "user", "content": json.dumps(_draft_payload(p), indent=1)},
                ],
            )
            answer = json.loads(resp.choices[0].message.content or "")
            if not isinstance(answer, dict):
                raise TypeError("the answer is not a JSON object")
            out.append(_apply(p, answer))
        except (ValueError, TypeError, ValidationError, KeyError, IndexError, AttributeError) as e:
            out.append(p.model_copy(update={"reviewer_notes": f"polish skipped: {type(e).__name__}: {e}"[:500]}))
        except Exception as e:  # noqa: BLE001 - per-proposal boundary: any OpenAI-compatible server's network/API errors
            error_id = log_error(log, e, f"polishing proposal {p.id}", level=logging.WARNING)
            note = f"polish failed: {type(e).__name__}: {e}"[:480] + f" (error {error_id})"
            out.append(p.model_copy(update={"reviewer_notes": note}))
    return out
