"""The LLM proposer: any OpenAI-compatible chat-completions endpoint, prompted with the ladder's evidence.

Base URL, model and key come from settings (``LADDER_LLM_BASE_URL``, ``LADDER_LLM_MODEL``,
``LADDER_LLM_API_KEY``). The prompt carries the problem, the current candidate, the evidence of every level
reached, the stop decision (which tests passed), the 1-2 cards the ladder opened, what earlier rounds did,
and the rules a candidate must keep (the hack catalogue). The reply must contain the whole new file in one
python code block; anything else is a failed proposal, not a guess.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import replace
from typing import Any

from kb.errors import InvalidArgument, LadderError, log_error
from kb.models import AppliedRecipe
from optimizer.ladder.engine import LadderOutcome
from optimizer.ladder.select import recipe_context
from optimizer.ladder.types import LadderContext
from optimizer.proposers.base import Proposal
from optimizer.rewrite import module_facts, parse_tree
from optimizer.rewrite.context import RecipeContext, unified_diff
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import can_apply
from optimizer.settings import LadderSettings

log = logging.getLogger(__name__)

__all__ = ["LLMProposer", "build_messages", "extract_code", "structural_section"]

_RULES = """Rules for the new candidate (violations are rejected by the validator):
- Keep `class ModelNew(nn.Module)` with the same constructor and forward signature; forward must launch Triton kernels.
- Do not call the PyTorch op being replaced, and do not fall back to PyTorch compute.
- Do not cache results across calls, keep outputs in buffers reused across calls, or modify inputs.
- No side streams, threads, processes, timer or harness patching, introspection, or environment changes.
- Keep the reference precision: fp32 problems compute in fp32 (no fp16/bf16 casts, no TF32; \
tl.dot input_precision="tf32x3" keeps fp32 accuracy and is allowed).
- Change ONE thing: the rewrite family named below. Return the complete file in a single ```python code block."""


def extract_code(text: str) -> str:
    """The last fenced python block that defines ModelNew."""
    blocks = re.findall(r"```(?:python|py)?[ \t]*\n(.*?)```", text or "", flags=re.DOTALL)
    good = [b for b in blocks if "class ModelNew" in b]
    if not good:
        raise NotApplicable("the model's reply contains no ```python block defining class ModelNew")
    return good[-1].strip() + "\n"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 40] + f"\n... [{len(text) - n + 40} characters cut]"


def _target_structure(body: str) -> str:
    """The card body's "## After" block: the structure the rewrite should reach."""
    m = re.search(r"^## After[^\n]*\n(.*?)(?=^## |\Z)", body or "", flags=re.DOTALL | re.MULTILINE)
    return m.group(1).strip() if m else ""


def structural_section(source: str, cards: list[Any], rctx: RecipeContext) -> list[str]:
    """Prompt lines: the syntax-tree facts of the candidate's kernels and, per card, whether its machine recipe
    applies (and every precondition that failed) plus the card's target structure, so that a model can do what
    the recipe could not."""
    lines = ["## Structural facts (syntax tree)"]
    try:
        lines += [f"- {f}" for f in module_facts(parse_tree(replace(rctx, source=source))).summary()]
    except NotApplicable as exc:
        lines.append(f"- (not analysed: {exc})")
    for c in cards:
        recipe = c.rewrite.recipe if c.rewrite else None
        if recipe is not None:
            ok, note = can_apply(recipe, replace(rctx, source=source))
            lines.append(
                f"### Recipe `{recipe.kind}` of `{c.id}`: " + (f"applies ({note})" if ok else f"does not apply: {note}")
            )
        target = _target_structure(c.body)
        if target:
            lines += [f"### Target structure of `{c.id}`", target]
    return lines


def build_messages(ctx: LadderContext, outcome: LadderOutcome, cards: list[Any]) -> list[dict[str, str]]:
    stop = outcome.stop
    lines = [
        f"## Problem `{ctx.problem.name}` (reference, KernelBench format)",
        "```python",
        _clip(ctx.problem.source, 6000),
        "```",
        f"## Current candidate `{ctx.candidate.name}`",
        "```python",
        _clip(ctx.source, 12000),
        "```",
        "## Evidence from the diagnosis ladder",
    ]
    for r in outcome.results:
        lines.append(f"### {r.level}: bottleneck {r.bottleneck}; tests localized={r.tests.localized} "
                     f"single_family={r.tests.single_family} justified={r.tests.justified}")
        for e in r.evidence:
            if e.kind != "escalation_tests":
                lines.append(f"- [{e.kind}] {_clip(e.summary, 600)}")
    if stop is not None:
        lines.append(f"## Decision\nStopped at {stop.level}: {stop.rationale}")
    l4 = next((r for r in outcome.results if r.level == "L4"), None)
    if l4 and l4.data.get("constraints"):
        lines.append("## A rewrite must satisfy\n" + "\n".join(f"- {c}" for c in l4.data["constraints"]))
    for c in cards:
        lines += [f"## Card `{c.id}`: {c.title}", c.summary]
        if c.preconditions:
            lines.append("Preconditions:\n" + "\n".join(f"- {p}" for p in c.preconditions))
        if c.rewrite:
            lines.append(f"Rewrite: {c.rewrite.description}")
        if c.body:
            lines.append(_clip(c.body, 3000))
    family = outcome.chosen.id if outcome.chosen else "unknown"
    lines += structural_section(ctx.source, cards, recipe_context(ctx, family, stop.bottleneck if stop else "unknown"))
    if ctx.history:
        lines.append("## Earlier rounds")
        for rnd in ctx.history[-6:]:
            fam = rnd.rewrite.family if rnd.rewrite else "-"
            sp = rnd.timing.geomean_speedup if rnd.timing and rnd.timing.geomean_speedup else None
            lines.append(
                f"- round {rnd.index}: {fam} -> {rnd.outcome}"
                + (f" ({sp:.3f}x)" if sp else "")
                + (f"; {rnd.validation.failure_reason[:200]}" if rnd.validation and not rnd.validation.passed else "")
            )
    family = outcome.chosen.id if outcome.chosen else "(none)"
    lines.append(f"## Task\nApply the `{family}` rewrite to the current candidate.")
    return [{"role": "system", "content": "You optimize Triton GPU/NPU kernels.\n" + _RULES},
            {"role": "user", "content": "\n".join(lines)}]


class LLMProposer:
    name = "llm"
    requires_recipe = False

    def __init__(self, settings: LadderSettings, client: Any | None = None) -> None:
        if not settings.llm_base_url or not settings.llm_model:
            raise InvalidArgument("the LLM proposer needs LADDER_LLM_BASE_URL and LADDER_LLM_MODEL "
                                  "(an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1)", field="proposer")
        self.settings = settings
        if client is None:
            from openai import OpenAI

            client = OpenAI(
                base_url=settings.llm_base_url,
                api_key=settings.llm_api_key.get_secret_value() or "not-needed",
                timeout=settings.llm_timeout_s,
                max_retries=settings.llm_max_retries,
            )
        self.client: Any = client  # an OpenAI client, or any object with its chat.completions.create (tests pass fakes)

    def propose(self, ctx: LadderContext, outcome: LadderOutcome, *, new_filename: str) -> Proposal:
        if outcome.chosen is None or outcome.stop is None:
            raise NotApplicable("the ladder chose no family; an inconclusive round is not sent to the model")
        cards = []
        for cid in outcome.cards_cited[:2]:
            try:
                cards.append(ctx.kb.get_card(cid))
            except LadderError:  # a cited card the KB cannot give (gone, KB unavailable): the prompt goes without it
                continue
        messages = build_messages(ctx, outcome, cards)
        try:
            resp = self.client.chat.completions.create(
                model=self.settings.llm_model,
                messages=messages,
                temperature=self.settings.llm_temperature,
                max_tokens=self.settings.llm_max_tokens,
            )
        except Exception as exc:  # noqa: BLE001 - external-service boundary: any OpenAI-compatible client's errors
            error_id = log_error(log, exc, f"the LLM request for {ctx.problem.name}", level=logging.INFO)
            raise NotApplicable(f"LLM request failed (error {error_id}): {type(exc).__name__}: {exc}"[:500]) from None
        text = resp.choices[0].message.content or ""
        code = extract_code(text)
        if code.strip() == ctx.source.strip():
            raise NotApplicable("the model returned the candidate unchanged")
        prompt_sha = hashlib.sha256("".join(m["content"] for m in messages).encode()).hexdigest()[:12]
        recipe = AppliedRecipe(kind="llm", params={"model": self.settings.llm_model}, base=ctx.source_sha,
                               applied={"reply_sha": hashlib.sha256(code.encode()).hexdigest()[:12],
                                        "prompt_sha": prompt_sha})
        return Proposal(source=code, diff=unified_diff(ctx.source, code, ctx.candidate.name, new_filename),
                        family=outcome.chosen.id, recipe=recipe,
                        description=f"{self.settings.llm_model} rewrite following {outcome.chosen.id}",
                        hypothesis=f"{outcome.stop.bottleneck} at {outcome.stop.level}; apply {outcome.chosen.title}",
                        cards=[c.id for c in cards])
