"""Kernel-argument syntax and JIT-parity specialization (standard library only).

This module is imported by the parent process *and* by the capture worker, which may run in another
virtualenv (``.venv-ascend``) that has neither pydantic nor our packages; so it uses plain dicts and
dataclasses and imports nothing outside the standard library.

Argument syntax (``ladder ir --arg``), one ``NAME=VALUE[:QUALIFIER...]`` per argument::

    x=*fp32             pointer to fp32, assumed 16-byte aligned like a torch allocation -> tt.divisibility=16
    x=*fp16:unaligned   pointer without the alignment hint (what an offset view would get)
    x=*fp32[4096]       pointer with a 4096-element buffer (the size matters only for ``--launch`` on a GPU)
    n=4096              integer: i32 (i64/u64 when out of range); %16 == 0 -> tt.divisibility=16; == 1 -> constexpr 1
    n=4096:i64          integer with an explicit type
    n=1000:nospec       integer passed as if listed in ``do_not_specialize`` (no divisibility, no ==1 folding)
    n=i32               integer whose value is unknown: no specialization at all (the pessimistic compile)
    eps=1e-5            fp32 scalar
    flag=true           bool (u1 on Triton >= 3.3, i1 before)
    BLOCK=1024          value of a ``tl.constexpr`` parameter (the kernel's annotation decides; ``:constexpr``
                        forces it)
    DTYPE=tl.float16    constexpr naming a ``triton.language`` attribute
    PRECISION=ieee      constexpr string

Parameters left out fall back to their Python default; a parameter with neither a value nor a default is an
error that lists the kernel's parameters.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ArgSpec", "Param", "Specialization", "SpecError", "parse_arg", "specialize"]

#: Element types accepted behind ``*`` (Triton's canonical spellings).
POINTER_ELEMENT_TYPES = frozenset(
    "i1 i8 i16 i32 i64 u1 u8 u16 u32 u64 fp8e4nv fp8e5 fp8e4b15 fp8e4b8 fp8e5b16 fp16 bf16 fp32 fp64".split()
)
SCALAR_INT_TYPES = frozenset("i8 i16 i32 i64 u8 u16 u32 u64".split())
SCALAR_FLOAT_TYPES = frozenset("fp16 bf16 fp32 fp64".split())
_QUALIFIERS = frozenset({"unaligned", "nospec", "constexpr"})

# x=*fp32[4096] -> element type fp32, 4096 elements
_POINTER = re.compile(r"^\*(?P<ty>[a-z0-9]+)(?:\[(?P<numel>\d+)\])?$")
_INT = re.compile(r"^[+-]?(?:0x[0-9a-fA-F]+|\d+)$")
_FLOAT = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+(?:\.\d*)?[eE][+-]?\d+|inf|nan)$")


class SpecError(ValueError):
    """A malformed ``--arg`` or an argument list that does not fit the kernel (message says how to fix it).

    A plain ``ValueError``, outside ``kb.errors``: this module runs in the standard-library-only IR worker, also in
    ``.venv-ascend``, which has no pydantic; ``optimizer.ir.capture`` re-raises it in the parent as
    ``kb.errors.InvalidArgument``."""


@dataclass
class ArgSpec:
    """One parsed ``NAME=VALUE[:QUALIFIER]`` argument."""

    name: str
    raw: str
    kind: str  # pointer | int | float | bool | str | unknown_int | none (constexpr None)
    value: Any = None
    type: str | None = None  # "*fp32", "i32", "fp32", ... (None: decided by specialization)
    aligned: bool = True
    specialize: bool = True
    numel: int | None = None
    constexpr: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArgSpec:
        return cls(**data)


@dataclass
class Param:
    """What specialization needs to know about one kernel parameter."""

    name: str
    index: int
    is_constexpr: bool = False
    has_default: bool = False
    default: Any = None
    do_not_specialize: bool = False
    do_not_specialize_on_alignment: bool = False


@dataclass
class Specialization:
    """The compile inputs a JIT launch would derive from these arguments."""

    signature: dict[str, str] = field(default_factory=dict)  # every parameter; constexprs typed "constexpr"
    constexprs: dict[str, Any] = field(default_factory=dict)  # declared constexprs and ints folded to 1
    divisible_by_16: list[int] = field(default_factory=list)  # parameter indices given tt.divisibility=16
    equal_to_1: list[int] = field(default_factory=list)  # parameter indices folded to constexpr 1
    resolved: list[dict[str, Any]] = field(default_factory=list)  # per-parameter record for the report

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_arg(text: str) -> ArgSpec:
    """Parse one ``NAME=VALUE[:QUALIFIER...]`` argument (see the module docstring for the syntax)."""
    name, sep, rest = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier() or not rest.strip():
        raise SpecError(f"--arg {text!r}: expected NAME=VALUE, e.g. x_ptr=*fp32, n=4096 or BLOCK=1024:constexpr")
    value_text, *quals = [p.strip() for p in rest.split(":")]
    ty_qual = [q for q in quals if q not in _QUALIFIERS]
    bad = [q for q in ty_qual if q not in SCALAR_INT_TYPES | SCALAR_FLOAT_TYPES]
    if bad or len(ty_qual) > 1:
        raise SpecError(
            f"--arg {text!r}: unknown qualifier {':'.join(bad or ty_qual)!r}; use one of "
            f"{sorted(_QUALIFIERS)} or a scalar type such as i64 / fp16"
        )
    spec = ArgSpec(
        name=name,
        raw=text,
        kind="str",
        aligned="unaligned" not in quals,
        specialize="nospec" not in quals,
        constexpr="constexpr" in quals,
    )
    explicit = ty_qual[0] if ty_qual else None
    if m := _POINTER.match(value_text):
        if m["ty"] not in POINTER_ELEMENT_TYPES:
            raise SpecError(f"--arg {text!r}: unknown element type {m['ty']!r}; e.g. *fp32, *fp16, *bf16, *i32")
        spec.kind, spec.type = "pointer", "*" + m["ty"]
        spec.numel = int(m["numel"]) if m["numel"] else None
    elif value_text == "None":  # the JIT specializes a None argument as constexpr None (an optional pointer)
        spec.kind, spec.value, spec.constexpr = "none", None, True
    elif value_text in SCALAR_INT_TYPES:
        spec.kind, spec.type, spec.specialize = "unknown_int", value_text, False
    elif value_text.lower() in ("true", "false"):
        spec.kind, spec.value = "bool", value_text.lower() == "true"
    elif _INT.match(value_text):
        spec.kind, spec.value = "int", int(value_text, 0)
        spec.type = explicit if explicit in SCALAR_INT_TYPES else None
    elif _FLOAT.match(value_text.lower()):
        spec.kind, spec.value = "float", float(value_text)
        spec.type = explicit if explicit in SCALAR_FLOAT_TYPES else "fp32"
    else:
        spec.value = value_text  # a string: constexpr strings such as "ieee" or "tl.float16"
    if explicit and spec.kind == "int" and explicit in SCALAR_FLOAT_TYPES:
        spec.kind, spec.value, spec.type = "float", float(spec.value), explicit
    return spec


def int_type(value: int) -> str:
    """The type Triton's JIT gives a Python int."""
    if -(2**31) <= value < 2**31:
        return "i32"
    if 2**63 <= value < 2**64:
        return "u64"
    return "i64"


def specialize(params: list[Param], args: dict[str, ArgSpec], *, bool_type: str = "u1") -> Specialization:
    """Reproduce the JIT's specialization of ``args`` for a kernel with ``params``.

    Like ``triton.runtime.jit``: 16-byte aligned pointers and ints divisible by 16 get ``tt.divisibility=16``
    (unless the parameter is in ``do_not_specialize[_on_alignment]`` or the argument says ``nospec`` /
    ``unaligned``); ints equal to 1 become ``constexpr 1``; bools are ``u1`` (``i1`` before Triton 3.3).
    """
    names = {p.name for p in params}
    unknown = sorted(set(args) - names)
    if unknown:
        raise SpecError(f"unknown argument(s) {unknown}; the kernel's parameters are {[p.name for p in params]}")
    out = Specialization()
    for p in params:
        a = args.get(p.name)
        record: dict[str, Any] = {"name": p.name, "index": p.index, "divisibility": None, "folded_to_constexpr": False}
        if p.is_constexpr or (a is not None and a.constexpr):
            if a is None and not p.has_default:
                raise _missing(p, params)
            value = a.value if a is not None else p.default
            if a is not None and a.kind == "pointer":
                raise SpecError(f"{p.name} is a tl.constexpr parameter; give it a value, not a pointer type")
            out.signature[p.name] = "constexpr"
            out.constexprs[p.name] = value
            out.resolved.append({**record, "type": "constexpr", "value": value, "source": "arg" if a else "default"})
            continue
        if a is None:
            if not p.has_default:
                raise _missing(p, params)
            a = _from_default(p)
        ty, value, div = _scalar_or_pointer(p, a, bool_type)
        if div:
            out.divisible_by_16.append(p.index)
            record["divisibility"] = 16
        if a.kind == "int" and a.specialize and not p.do_not_specialize and value == 1:
            out.signature[p.name] = "constexpr"
            out.constexprs[p.name] = 1
            out.equal_to_1.append(p.index)
            out.resolved.append(
                {**record, "type": "constexpr", "value": 1, "folded_to_constexpr": True, "source": "arg"}
            )
            continue
        out.signature[p.name] = ty
        out.resolved.append({**record, "type": ty, "value": value, "source": "arg"})
    return out


def _scalar_or_pointer(p: Param, a: ArgSpec, bool_type: str) -> tuple[str, Any, bool]:
    if a.kind == "pointer":
        div = a.aligned and a.specialize and not p.do_not_specialize and not p.do_not_specialize_on_alignment
        return a.type or "*fp32", a.type, div
    if a.kind == "int":
        ty = a.type or int_type(a.value)
        div = a.specialize and not p.do_not_specialize and not p.do_not_specialize_on_alignment and a.value % 16 == 0
        return ty, a.value, div
    if a.kind == "unknown_int":
        return a.type or "i32", None, False
    if a.kind == "float":
        return a.type or "fp32", a.value, False
    if a.kind == "bool":
        return bool_type, a.value, False
    raise SpecError(
        f"{p.name}={a.value!r} is not a pointer or a number, and {p.name} is not a tl.constexpr parameter; "
        f"write {p.name}={a.value}:constexpr to force a constexpr, or give a type such as *fp32 or i32"
    )


def _from_default(p: Param) -> ArgSpec:
    v = p.default
    if isinstance(v, bool):
        return ArgSpec(p.name, f"{p.name}={v}", "bool", v)
    if isinstance(v, int):
        return ArgSpec(p.name, f"{p.name}={v}", "int", v)
    if isinstance(v, float):
        return ArgSpec(p.name, f"{p.name}={v}", "float", v, "fp32")
    raise SpecError(
        f"{p.name} has a default ({v!r}) that cannot be passed as a kernel argument; give --arg {p.name}=..."
    )


def _missing(p: Param, params: list[Param]) -> SpecError:
    listing = ", ".join(f"{q.name}{'(constexpr)' if q.is_constexpr else ''}" for q in params)
    return SpecError(
        f"missing --arg for parameter {p.name!r}; the kernel takes: {listing}. "
        f"Example: --arg {p.name}={'1024' if p.is_constexpr else '*fp32'}"
    )
