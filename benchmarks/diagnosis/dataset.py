"""The labelled diagnosis benchmark: one folder per kernel, each with a ``label.yaml`` naming its planted cause.

    from benchmarks.diagnosis.dataset import load_items
    items = load_items("tune")            # or "eval", or None for both halves
    items[0].cause, items[0].problem_path, items[0].fix_path

Every label is validated against the shared vocabulary (``kb.vocab``): the cause and secondary causes are
``SeedCause`` names (never ``unknown``), the class is a ``BottleneckClass``, and every rewrite family is a pattern
card id in ``kb/cards/patterns/`` or a family named in ``CAUSE_FAMILIES``; the first family is the cause's
canonical one. A bad label raises ``LabelError`` naming the folder, the field and what is allowed.

Causes beyond the list (issue 30): items under ``beyond/`` carry a defect that is NOT a ``kb.vocab.SeedCause``. Their
label says ``listed: false`` and names the new kind in ``cause`` (a snake_case name that is not a listed cause),
plus ``inefficiency``: the kind of static-account finding (``optimizer.ir.gap_account.AccountKind``) the account
must show for it. ``families`` are then optional card ids in any order (often none: no family acts on the kind
yet). ``load_items`` returns the listed items only (what every existing figure counts); ``load_beyond`` the new.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from kb.vocab import (
    BOTTLENECK_CLASSES,
    CAUSE_FAMILIES,
    CAUSES,
    IR_SIGNATURES,
    BottleneckClass,
    SeedCause,
)

__all__ = ["BEYOND_DIR", "DIAGNOSIS_DIR", "DiagItem", "LabelError", "StaticCheck", "account_kinds", "known_families",
           "load_beyond", "load_items"]

DIAGNOSIS_DIR = Path(__file__).resolve().parent
BEYOND_DIR = DIAGNOSIS_DIR / "beyond"
CARDS_DIR = DIAGNOSIS_DIR.parents[1] / "kb" / "cards" / "patterns"
SPLITS = ("tune", "eval")


class LabelError(ValueError):
    """A label.yaml that does not fit the vocabulary or the folder layout."""


@cache
def known_families() -> frozenset[str]:
    """Pattern card ids shipped in kb/cards/patterns plus every family CAUSE_FAMILIES names."""
    ids = set()
    for path in CARDS_DIR.glob("*.yaml"):
        card = yaml.safe_load(path.read_text()) or {}
        ids.add(str(card.get("id", path.stem)))
    return frozenset(ids | {f for fams in CAUSE_FAMILIES.values() for f in fams})


@cache
def account_kinds() -> frozenset[str]:
    """The finding kinds of the static account of the gap (what an unlisted item's ``inefficiency`` may name)."""
    from typing import get_args

    from optimizer.ir.gap_account import AccountKind

    return frozenset(get_args(AccountKind))


class Expectation(BaseModel):
    """What the sm_90 compile of one file must show: IR signatures present / absent, ptxas spills, cp.async."""

    model_config = ConfigDict(extra="forbid")

    present: list[str] = Field(default_factory=list)
    absent: list[str] = Field(default_factory=list)
    spills: bool | None = None
    cp_async: bool | None = None

    @field_validator("present", "absent")
    @classmethod
    def _signature_names(cls, v: list[str]) -> list[str]:
        bad = [s for s in v if s not in IR_SIGNATURES]
        if bad:
            raise ValueError(f"{bad} are not IR signatures; use names from kb.vocab.IRSignature")
        return v


class StaticCheck(BaseModel):
    """A compile-only check of a statically provable cause (``static_check.py`` runs it, ``seen`` records it)."""

    model_config = ConfigDict(extra="forbid")

    kernel: str
    args: list[str]
    fix_kernel: str | None = None
    fix_args: list[str] = Field(default_factory=list, description="arguments added (or replaced) for fix.py")
    options: dict[str, int] = Field(default_factory=dict)
    fix_options: dict[str, int] = Field(default_factory=dict)
    initial: Expectation
    fix: Expectation
    seen: str = Field(min_length=1, description="what the check printed when the label was written")


class DiagItem(BaseModel):
    """One labelled kernel of the diagnosis benchmark."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str
    folder: Path
    cause: str = Field(description="a kb.vocab SeedCause; with listed: false a new kind's name")
    listed: bool = Field(default=True, description="whether cause is one of kb.vocab.SeedCause")
    inefficiency: str | None = Field(default=None, description="for listed: false, the static-account finding kind "
                                     "(optimizer.ir.gap_account.AccountKind) the account must show")
    secondary: list[SeedCause] = Field(default_factory=list)
    bottleneck_class: BottleneckClass = Field(alias="class")
    families: list[str]
    split: Literal["tune", "eval"]
    where: str = Field(min_length=10)
    shapes_dtypes: str = Field(min_length=3)
    static_check: StaticCheck | None = None

    @field_validator("cause")
    @classmethod
    def _cause_is_known(cls, v: str) -> str:
        if v == "unknown":
            raise ValueError("'unknown' is not a label: name the planted cause")
        if not v.isidentifier() or v != v.lower():
            raise ValueError(f"{v!r} is not a snake_case cause name")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> DiagItem:
        if self.listed and self.cause not in CAUSES:
            raise ValueError(f"{self.cause!r} is not a Cause; use one of {sorted(CAUSES - {'unknown'})}, or mark a new "
                             f"kind with listed: false and its inefficiency")
        if not self.listed:
            return self._consistent_unlisted()
        if self.inefficiency is not None:
            raise ValueError("inefficiency is for listed: false items (a listed cause has its own findings)")
        if self.cause in self.secondary or "unknown" in self.secondary:
            raise ValueError(f"secondary {self.secondary} must not repeat the cause {self.cause!r} or say 'unknown'")
        unknown = [f for f in self.families if f not in known_families()]
        if unknown:
            raise ValueError(f"families {unknown} are not pattern card ids (kb/cards/patterns/*.yaml) or CAUSE_FAMILIES")
        canonical = CAUSE_FAMILIES[self.cause]
        if not canonical and self.families:
            raise ValueError(f"cause {self.cause!r} has no rewrite family; leave families empty")
        if canonical and (not self.families or self.families[0] != canonical[0]):
            raise ValueError(f"families must start with {canonical[0]!r}, the canonical family of {self.cause!r}")
        for required in ("problem.py", "initial.py"):
            if not (self.folder / required).is_file():
                raise ValueError(f"{self.folder} has no {required}")
        has_fix = (self.folder / "fix.py").is_file()
        if self.cause == "at_roofline" and has_fix:
            raise ValueError("an at_roofline item has nothing to fix: remove fix.py (initial.py is its reference)")
        if self.cause != "at_roofline" and not has_fix:
            raise ValueError(f"{self.folder} has no fix.py (the reference fix for {self.cause!r})")
        return self

    def _consistent_unlisted(self) -> DiagItem:
        if self.cause in CAUSES:
            raise ValueError(f"{self.cause!r} is a listed Cause: drop listed: false")
        if self.inefficiency not in account_kinds():
            raise ValueError(f"inefficiency {self.inefficiency!r} is not a gap-account kind; use one of {sorted(account_kinds())}")
        if self.cause in self.secondary:
            raise ValueError(f"secondary {self.secondary} must not repeat the cause {self.cause!r}")
        unknown = [f for f in self.families if f not in known_families()]
        if unknown:
            raise ValueError(f"families {unknown} are not pattern card ids (kb/cards/patterns/*.yaml) or CAUSE_FAMILIES")
        for required in ("problem.py", "initial.py", "fix.py"):
            if not (self.folder / required).is_file():
                raise ValueError(f"{self.folder} has no {required}")
        return self

    @property
    def problem_path(self) -> Path:
        return self.folder / "problem.py"

    @property
    def initial_path(self) -> Path:
        return self.folder / "initial.py"

    @property
    def fix_path(self) -> Path:
        """The reference fix; for ``at_roofline`` items (nothing to fix) the initial kernel itself."""
        fix = self.folder / "fix.py"
        return fix if fix.is_file() else self.initial_path


def load_item(folder: str | Path) -> DiagItem:
    """Read and validate one item's label.yaml."""
    folder = Path(folder).resolve()
    label = folder / "label.yaml"
    if not label.is_file():
        raise LabelError(f"{folder.name}: no label.yaml (see benchmarks/diagnosis/README.md for the format)")
    raw = yaml.safe_load(label.read_text())
    if not isinstance(raw, dict):
        raise LabelError(f"{label}: expected a mapping of label fields")
    try:
        return DiagItem.model_validate({**raw, "name": folder.name, "folder": folder})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'label'}: {_explain(e)}" for e in exc.errors())
        raise LabelError(f"{label}: {problems}") from None


def _explain(err: dict) -> str:
    field = err["loc"][0] if err["loc"] else ""
    if field == "secondary" and err["type"] == "literal_error":
        return f"{err['input']!r} is not a Cause; use one of {sorted(CAUSES - {'unknown'})}"
    if field == "class" and err["type"] == "literal_error":
        return f"{err['input']!r} is not a BottleneckClass; use one of {sorted(BOTTLENECK_CLASSES)}"
    return err["msg"]


def load_items(split: str | None = None, root: str | Path = DIAGNOSIS_DIR) -> list[DiagItem]:
    """Every item under ``root`` (folders holding a problem.py), sorted by name; only one half if ``split``."""
    if split is not None and split not in SPLITS:
        raise LabelError(f"split must be one of {SPLITS} or None, got {split!r}")
    folders = sorted(p for p in Path(root).iterdir() if p.is_dir() and (p / "problem.py").is_file())
    items = [load_item(p) for p in folders]
    return [i for i in items if split is None or i.split == split]


def load_beyond(split: str | None = None) -> list[DiagItem]:
    """The items whose defect is not a listed cause (``beyond/``, every label ``listed: false``)."""
    items = load_items(split, BEYOND_DIR)
    listed = [i.name for i in items if i.listed]
    if listed:
        raise LabelError(f"beyond/ holds items with a listed cause ({listed}); they belong in benchmarks/diagnosis/")
    return items


def beyond_table(items: list[DiagItem] | None = None) -> str:
    """The README's table of the kinds beyond the list (markdown), one row per kind."""
    items = load_beyond() if items is None else items
    rows = ["| kind (cause) | account finding | class | tune | eval |", "|---|---|---|---|---|"]
    for cause in sorted({i.cause for i in items}):
        its = [i for i in items if i.cause == cause]
        halves = [", ".join(f"`{i.name}`" for i in its if i.split == s) for s in SPLITS]
        rows.append(f"| `{cause}` | `{its[0].inefficiency}` | {its[0].bottleneck_class} | {halves[0]} | {halves[1]} |")
    return "\n".join(rows)


def split_table(items: list[DiagItem] | None = None) -> str:
    """The README's taxonomy-and-split table (markdown), one row per cause; ``*`` marks a secondary cause."""
    from kb.vocab import CAUSE_CLASS

    items = load_items() if items is None else items
    rows = ["| cause | default class | rewrite families (canonical first) | tune | eval |", "|---|---|---|---|---|"]
    for cause in sorted({i.cause for i in items}):
        fams = ", ".join(f"`{f}`" for f in CAUSE_FAMILIES[cause]) or "none: stop"
        halves = [", ".join(f"`{i.name}`" + ("*" if i.secondary else "") for i in items
                            if i.cause == cause and i.split == s) for s in SPLITS]
        rows.append(f"| `{cause}` | {CAUSE_CLASS[cause]} | {fams} | {halves[0]} | {halves[1]} |")
    return "\n".join(rows)
