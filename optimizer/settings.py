"""Optimizer settings (pydantic-settings, environment prefix ``LADDER_``).

Examples: ``LADDER_LLM_BASE_URL``, ``LADDER_LLM_MODEL``, ``LADDER_LLM_API_KEY`` for the LLM proposer (any
OpenAI-compatible endpoint); ``LADDER_SANDBOX_TIMEOUT_S`` and ``LADDER_SANDBOX_MEMORY_MB`` for the sandbox;
``LADDER_VALIDATION_SEEDS='[0,1,2]'`` for validation.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from kb.vocab import Level

__all__ = ["LadderSettings"]


class LadderSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LADDER_", extra="ignore")

    # LLM proposer
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    llm_model: str | None = None
    llm_api_key: SecretStr = SecretStr("")
    llm_temperature: float = 0.2
    llm_max_tokens: int = 8192
    llm_timeout_s: float = 300.0
    llm_max_retries: int = 2

    # session
    rounds: int = Field(default=15, ge=0)
    max_inconclusive_streak: int = Field(
        default=3, ge=1, description="stop after this many inconclusive rounds in a row"
    )
    improvement_threshold: float = Field(
        default=0.02, ge=0, description="relative geomean gain that counts as improved"
    )
    derive_unseen: bool = Field(
        default=True,
        description="when a problem declares no UNSEEN_CASES, check the selected best "
        "on one case derived from its largest (sizes >= 32 made odd and ~20% smaller)",
    )
    round_variants: int = Field(default=4, ge=1, le=8, description="points of one recipe screened per round on the "
                                "largest case (1: one point per round); the fastest valid one is judged on every case")

    # validation and sandbox
    validation_seeds: list[int] = Field(default_factory=lambda: [0, 1, 2])
    sandbox_timeout_s: float = 300.0
    screen_timeout_s: float = Field(
        default=40.0,
        gt=0,
        description="time box of one screened point's validation "
        "(largest case, one seed) on a GPU; a point past it leaves the screen as too slow to "
        "compile or run (the chosen point is then validated with sandbox_timeout_s)",
    )
    sandbox_memory_mb: int = 8192
    sandbox_fork_server: bool = Field(
        default=True,
        description="fork interpreter and CUDA workers from a pre-imported zygote "
        "(saves the torch/triton import per worker)",
    )

    # timing (GPU/NPU)
    timing_warmup_ms: float = 25.0
    timing_rep_ms: float = Field(default=10.0, gt=0, description="do_bench rep budget of ONE interleaved block")
    timing_blocks: int = Field(
        default=8, ge=2, description="interleaved blocks per kernel per case (the interval's samples)"
    )
    timing_confirm_blocks: int = Field(
        default=16, ge=2, description="blocks when the winner is re-timed before selection"
    )
    timing_graph_below_us: float | None = Field(
        default=50.0, description="CUDA-graph timing below this kernel time (None: never)"
    )
    l2_flush_mb: int = 256
    ncu_launch_count: int | None = Field(default=8, ge=1, description="at most this many launches of the hot kernel "
                                         "replayed under ncu per profile (None: every launch in the profiled forward)")
    ncu_account: bool = Field(default=False, description="L2 also runs the measured account of the gap "
                              "(optimizer.profile.ncu_account: one more ncu run of the largest case with the standard "
                              "sections' raw metrics) and records it as evidence, the decision ranks causes by it, "
                              "and each validated candidate is measured the same way to record whether its targeted "
                              "inefficiency went down (Round.target); off by default: it adds replay passes")
    lock_dir: str = Field(default_factory=lambda: str(Path(tempfile.gettempdir()) / "kernel-ladder-gpu-locks"),
                          description="per-GPU lock files: two timing sessions never share a device")
    cache_dir: str = Field(
        default_factory=lambda: str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kernel-ladder"),
        description="IR capture cache (keyed by kernel source, specialization, target, options)",
    )

    max_level: Level = Field(default="L4", description="highest ladder level a session round may reach")
    policy: str = Field(
        default="hierarchical",
        pattern=r"^(hierarchical|l1-only|profile-first|always-deep|random-family)$",
        description="ladder policy (optimizer.ladder.policy): hierarchical (default), l1-only, profile-first, "
        "always-deep, random-family (the ablation's arms)",
    )
    policy_seed: int = Field(
        default=0, description="seed of the random-family policy's draws (with the problem and round)"
    )
    timing_cache: str | None = Field(default=None, description="JSON-lines file of a content-addressed timing cache "
                                     "(optimizer.harness.timing_cache): an evaluation already timed on this GPU is not "
                                     "timed again; None (default): off")

    # Triton environment: a python whose Triton matches the GPU image (make triton36-env), for validation
    triton_python: str | None = Field(
        default=None,
        description="python of another Triton env (e.g. .venv-triton36/bin/python) "
        "for validation and IR capture; empty = the current interpreter",
    )

    # IR / compiler (L3/L4)
    ir_target: str = Field(
        default="", description="IR capture target, e.g. cuda:90 or ascend; default from the backend"
    )
    compiler_source: str | None = Field(
        default=None, description="a compiler checkout L4 may grep when invariants do not resolve"
    )
