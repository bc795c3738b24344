"""Synthesis: mine optimization trajectories into pattern-family examples, new families, anti-signals and stats.

Entry point: :func:`synthesize` (trajectories + current cards + an embedder -> proposals, mappings, stats).
The pieces are usable alone: :func:`map_rounds` / :class:`FamilyIndex` (family assignment),
:func:`cluster_rounds` / :func:`draft_family_card` (new families), :func:`anti_signal_proposals`,
:func:`card_stats` / :func:`deprecation_proposals`, and :func:`polish_proposals` (optional LLM step).
"""

from synthesis.anti import anti_signal_proposals
from synthesis.clustering import cluster_rounds, draft_family_card, new_family_proposals
from synthesis.mining import (
    CachedEmbed,
    Embed,
    FamilyIndex,
    MiningConfig,
    example_proposals,
    map_rounds,
    proposal_id,
)
from synthesis.models import (
    PROPOSAL_TRANSITIONS,
    EvidenceRef,
    FamilyCandidate,
    FamilyMapping,
    MappingComponents,
    Proposal,
    ProposalKind,
    ProposalStatus,
    SynthesisReport,
    SynthesisResult,
    card_on_approval,
)
from synthesis.pipeline import Progress, SynthesisConfig, synthesize
from synthesis.polish import LLMSettings, polish_proposals
from synthesis.rounds import RoundCategory, RoundRecord, collect_rounds, is_clean
from synthesis.stats import card_stats, deprecation_proposals, lift_interval

__all__ = [
    "PROPOSAL_TRANSITIONS",
    "CachedEmbed",
    "Embed",
    "EvidenceRef",
    "FamilyCandidate",
    "FamilyIndex",
    "FamilyMapping",
    "LLMSettings",
    "MappingComponents",
    "MiningConfig",
    "Progress",
    "Proposal",
    "ProposalKind",
    "ProposalStatus",
    "RoundCategory",
    "RoundRecord",
    "SynthesisConfig",
    "SynthesisReport",
    "SynthesisResult",
    "anti_signal_proposals",
    "card_on_approval",
    "card_stats",
    "cluster_rounds",
    "collect_rounds",
    "deprecation_proposals",
    "draft_family_card",
    "example_proposals",
    "is_clean",
    "lift_interval",
    "map_rounds",
    "new_family_proposals",
    "polish_proposals",
    "proposal_id",
    "synthesize",
]
