"""L4 compiler grounding: invariant cards first, compiler source when the cards do not settle the question.

For each implicated signature the engine asks the KB (through any :class:`kb.client.KBClient`) for invariant
cards matching the signature word and the passes that introduced or govern it, fills the cards' question
templates (``{source_line}``, ``{pass}``, ``{dtype}`` ...) from the L3 report, and takes the card's legality as
the condition and its rewrite section as the constraints. When no card gives a legality condition it locates
the pass in compiler source: the installed backend's pipeline module (``triton/backends/nvidia/compiler.py``,
or the Ascend backend in ``.venv-ascend``), read as text without importing it, and optionally a compiler
checkout (``compiler_source``) grepped for the pass definition and the remark texts.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import string
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from kb.client import KBClient
from kb.models.cards import InvariantCard
from kb.models.search import InvariantQuery
from optimizer.ir.constructs import card_constructs
from optimizer.ir.patterns import VEC_REMARK
from optimizer.ir.types import FRONTEND, CompilerSourceRef, IRReport, L4Account, L4Finding, L4Question, Signature

__all__ = ["explain", "fill_template", "installed_backend_source", "invariant_applies", "locate_pass",
           "template_context"]

#: Signatures that describe healthy code; explained only when asked for explicitly.
INFORMATIONAL = frozenset({"vector_global_load", "ascend_mix_mode"})
_SOURCE_SUFFIXES = (".cpp", ".cc", ".h", ".hpp", ".td", ".py")
_MAX_CHECKOUT_FILES = 20000


def explain(
    report: IRReport,
    client: KBClient | None = None,
    *,
    focus: Iterable[str] | None = None,
    hotspot_lines: Iterable[int] | None = None,
    compiler_source: str | Path | None = None,
    top_k: int = 3,
) -> L4Account:
    """A localized account (pass, condition, rewrite constraints) for the signatures of ``report``.

    ``focus`` restricts to signature names; ``hotspot_lines`` (kernel source lines from an L2 hotspot) restricts
    to signatures mapped to those lines. Without a ``client`` only compiler source is consulted.
    """
    sigs = _select(report, focus, hotspot_lines)
    arguments = {c.pass_name: c.pass_argument for c in report.pass_changes if c.pass_argument}
    installed = installed_backend_source(report)
    findings = [_finding(report, s, client, arguments, installed, compiler_source, top_k) for s in sigs]
    unresolved: list[str] = [f.signature for f in findings if not f.cards and not f.source_refs]
    settled = sum(f.settled for f in findings)
    grounded = sum(1 for f in findings if f.source_refs)
    summary = (f"{len(findings)} signature(s) examined: {settled} settled by invariant cards, "
               f"{grounded} located in compiler source, {len(unresolved)} unresolved")
    return L4Account(kernel=report.kernel, target=report.target, compiler_version=report.compiler_version,
                     findings=findings, unresolved=unresolved, summary=summary)


def _select(report: IRReport, focus, hotspot_lines) -> list[Signature]:
    wanted = set(focus or [])
    lines = set(hotspot_lines or [])
    out = []
    for s in report.signatures:
        if wanted and s.name not in wanted:
            continue
        if not wanted and s.name in INFORMATIONAL:
            continue
        if lines and not (lines & set(s.source_lines)):
            continue
        out.append(s)
    return out


def _finding(report, sig, client, arguments, installed, checkout, top_k) -> L4Finding:
    passes = [p for p in [sig.pass_introduced, *sig.related_passes] if p and p != FRONTEND]
    cards: list[InvariantCard] = []
    citing: list[InvariantCard] = []
    passed_over: list[str] = []
    if client is not None:
        query = InvariantQuery(pass_names=passes + [arguments[p] for p in passes if p in arguments],
                               ir_signatures=[sig.name], backend=report.backend,
                               text=f"{sig.name} {' '.join(sig.constructs)} {sig.detail}"[:4000], top_k=3 * top_k)
        hits = [h.card for h in client.get_invariants(query) if isinstance(h.card, InvariantCard)]
        cards, passed_over = _matching_constructs(hits, sig)
        # cards that cite the signature, those citing its neighbours too first; failing that, cards about the pass
        # that introduced it
        near = _neighbours(report, sig)
        citing = sorted((c for c in cards if sig.name in c.symptoms.ir_signatures),
                        key=lambda c: -len(near & set(c.symptoms.ir_signatures)))[:top_k]
        cards = citing or [c for c in cards if _passes_overlap(c.passes, passes[:1], arguments)][:top_k]
    context = template_context(report, sig)
    questions = [fill_template(t, context, c.id) for c in cards for t in c.question_templates]
    legal = next((c for c in citing if c.legality.strip()), None)  # only a card citing the signature settles it
    refs: list[CompilerSourceRef] = []
    if legal is None:
        for p in passes:
            refs += locate_pass(p, arguments.get(p, ""), installed)
        if checkout:
            refs += _grep_checkout(Path(checkout), passes, arguments, report, sig)
        refs = _finalize(refs, _capability(report))
    condition = legal.legality.strip() if legal else _conditions_text([r for r in refs if r.applies is not False],
                                                                      report.options)
    constraints = _constraints(cards)
    pass_name = sig.pass_introduced or (passes[0] if passes else None)
    where = ", ".join(f"line {n}" + (f" `{report.source_excerpt[n]}`" if n in report.source_excerpt else "")
                      for n in sig.source_lines[:3]) or "no source line"
    account = (f"{sig.name} x{sig.count} ({where}) appears at {sig.stage}"
               + (f", introduced by {pass_name}" if pass_name else "")
               + (f"; governed by {', '.join(sig.related_passes)}" if sig.related_passes else "") + ". "
               + (f"Condition: {condition} " if condition else "")
               + (f"A rewrite must: {'; '.join(constraints).rstrip('.')}." if constraints else ""))
    return L4Finding(signature=sig.name, pass_name=pass_name, stage=sig.stage, source_lines=sig.source_lines,
                     condition=condition, constraints=constraints, cards=[c.id for c in cards], questions=questions,
                     passed_over=passed_over, source_refs=refs, settled=legal is not None, account=account.strip())


def _matching_constructs(cards: list[InvariantCard], sig: Signature) -> tuple[list[InvariantCard], list[str]]:
    """Cards whose constructs (the Triton calls in their code features) include one at the signature, and why the
    cards citing the signature for another construct were passed over. A card naming no construct, or a signature
    whose constructs are unknown, matches."""
    keep, passed = [], []
    have = set(sig.constructs)
    for c in cards:
        about = card_constructs(c.symptoms.code_features)
        if not about or not have or about & have:
            keep.append(c)
        elif sig.name in c.symptoms.ir_signatures:  # a card that cites the signature for another cause
            where = "its source lines" if sig.source_lines else "the kernel"
            passed.append(f"{c.id}: about {', '.join(sorted(about))}; {where} do {', '.join(sig.constructs)}")
    return keep, passed


def _neighbours(report: IRReport, sig: Signature) -> set[str]:
    """The signature and the others that share one of its source lines (a barrier next to a cross-warp reduce)."""
    lines = set(sig.source_lines)
    return {sig.name} | {s.name for s in report.signatures if lines & set(s.source_lines)}


def _norm(name: str) -> str:
    n = re.sub(r"[^a-z0-9]", "", name.lower())
    return n[:-4] if n.endswith("pass") else n


def _passes_overlap(card_passes: list[str], passes: list[str], arguments: dict[str, str]) -> bool:
    ours = {_norm(p) for p in passes} | {_norm(arguments[p]) for p in passes if p in arguments}
    return any(_norm(c) in ours for c in card_passes)


def template_context(report: IRReport, sig: Signature) -> dict[str, str]:
    """Values for the template fields (``kb.lint.TEMPLATE_FIELDS``) this report and signature give; a field left
    out is one the report cannot answer (e.g. ``source_line`` for ptxas figures, ``maxnreg`` when unset)."""
    ctx: dict[str, str] = {"signature": sig.name, "count": str(sig.count), "stage": sig.stage, "kernel": report.kernel,
                           "target": report.target}
    file = Path(report.source_file).name
    if sig.source_lines:
        n = sig.source_lines[0]
        code = report.source_excerpt.get(n)
        ctx["source_line"] = f"{file}:{n}" + (f" (`{code}`)" if code else "")
    if sig.pass_introduced or sig.related_passes:
        if sig.pass_introduced is not None and sig.pass_introduced != FRONTEND:
            ctx["pass"] = sig.pass_introduced
        elif sig.related_passes:
            ctx["pass"] = sig.related_passes[0]
        elif sig.pass_introduced is not None:  # the frontend, nothing related
            ctx["pass"] = sig.pass_introduced
    for k in ("num_warps", "num_stages", "maxnreg"):
        v = report.options.get(k, report.compiled_with.get(k))
        if v is not None:
            ctx[k] = str(v)
    ctx |= _borrowed_facts(report, sig) | sig.facts  # op, dtype, block_shape, operands, input_precision
    if "block_shape" not in ctx and (blocks := _block_constexprs(report)):
        ctx["block_shape"] = blocks
    if "dtype" not in ctx and len(dtypes := {a.type.lstrip("*") for a in report.args if a.type.startswith("*")}) == 1:
        ctx["dtype"] = dtypes.pop()
    lines = set(sig.source_lines)
    near = [sig] + [s for s in report.signatures if s is not sig and lines & set(s.source_lines)]
    blob = " ".join(" ".join(s.evidence) + " " + s.detail for s in near)
    if m := re.search(r'reduce_mode = "(\w+)"|reduce_mode=(\w+)', blob):
        ctx["reduce_mode"] = m.group(1) or m.group(2)
    if m := re.search(r"vec (\d+) instead of (\d+)", sig.detail):
        ctx["vec"], ctx["origin_vec"] = m.group(1), m.group(2)
    elif m := next((m for r in report.remarks if r.line in sig.source_lines and (m := VEC_REMARK.search(r.message))),
                   None):
        ctx["vec"], ctx["origin_vec"] = m["vec"], m["origin"]
    ptx = next((s for s in report.stages if s.stage == "ptx"), None)
    if ptx is not None:
        ctx["fma_f32"] = str(ptx.features.get("fma_f32", 0))
    r = report.resources
    if r is not None:
        for k in ("registers", "spill_stores_bytes", "shared_bytes", "barriers"):
            if getattr(r, k) is not None:
                ctx[k] = str(getattr(r, k))
    return ctx


def _borrowed_facts(report: IRReport, sig: Signature) -> dict[str, str]:
    """Facts of the signatures sharing a source line with ``sig`` (a barrier takes its reduce's dtype and shape)."""
    out: dict[str, str] = {}
    lines = set(sig.source_lines)
    for s in report.signatures:
        if s is not sig and lines & set(s.source_lines):
            out = s.facts | out
    return out


def _block_constexprs(report: IRReport) -> str:
    """``BLOCK_M=64, BLOCK_N=32``: the kernel's block-size constexprs, when no tensor type gives the shape."""
    return ", ".join(f"{a.name}={a.value}" for a in report.args
                     if a.type == "constexpr" and "BLOCK" in a.name.upper() and isinstance(a.value, int))


def fill_template(template: str, context: dict[str, str], card_id: str = "") -> L4Question:
    """Fill the ``{name}`` fields ``context`` knows. A field it does not know is listed in ``unfilled`` and printed
    as ``(name unknown)``, never as a raw placeholder."""
    names = list(dict.fromkeys(f for _, f, _, _ in string.Formatter().parse(template) if f))
    unfilled = [n for n in names if n not in context]
    out = template
    for n in names:
        out = out.replace("{" + n + "}", context.get(n, f"({n} unknown)"))
    return L4Question(card_id=card_id, template=template, question=out, unfilled=unfilled)


def _constraints(cards: list[InvariantCard]) -> list[str]:
    out: list[str] = []
    for c in cards:
        section = re.search(r"#+\s*What a rewrite must satisfy\s*\n(.*?)(?:\n#+\s|\Z)", c.body, re.S | re.I)
        if section:
            out += [re.sub(r"\s+", " ", b).strip() for b in re.findall(r"^\s*[-*]\s+(.+(?:\n\s{2,}.+)*)",
                                                                          section.group(1), re.M)]
        if c.rewrite and not section:
            out.append(c.rewrite.description.strip())
    return list(dict.fromkeys(out))


def _finalize(refs: list[CompilerSourceRef], capability: int | None) -> list[CompilerSourceRef]:
    """Deduplicate, evaluate each ref's gate for the target, and put applicable installed refs first."""
    unique = {(r.path, r.line): r.model_copy(update={"applies": invariant_applies(r.conditions, capability)})
              for r in refs}
    return sorted(unique.values(), key=lambda r: (r.applies is False, r.origin != "installed"))


def _conditions_text(refs: list[CompilerSourceRef], options: dict) -> str:
    parts = []
    for r in refs[:3]:
        gate = f" under `{' and '.join(r.conditions)}`" if r.conditions else ""
        used = [f"{k}={options[k]}" for k in dict.fromkeys(re.findall(r"\bopt\.(\w+)", r.code)) if k in options]
        with_opts = f" (this build: {', '.join(used)})" if used else ""
        parts.append(f"{Path(r.path).name}:{r.line} `{r.code}`{with_opts} in {r.function or 'module scope'}{gate}")
    return ("compiler source: " + "; ".join(parts)) if parts else ""


def installed_backend_source(report: IRReport) -> Path | None:
    """The pipeline module of the backend the report was compiled with (found on disk, not imported)."""
    if report.backend == "ascend":
        from optimizer.ir.ascend import ascend_backend_dir

        d = ascend_backend_dir()
        return d / "compiler.py" if d and (d / "compiler.py").exists() else None
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return None
    sub = {"cuda": "nvidia", "amd": "amd"}.get(report.backend, report.backend)
    path = Path(next(iter(spec.submodule_search_locations))) / "backends" / sub / "compiler.py"
    return path if path.exists() else None


def locate_pass(pass_name: str, argument: str, source: Path | None) -> list[CompilerSourceRef]:
    """Where a backend pipeline module adds ``pass_name``: ``passes.*.add_<name>(pm, ...)`` calls, or the
    ``--<argument>`` flag of an opt-tool command line (triton-ascend 3.2)."""
    if source is None or not pass_name or pass_name in (FRONTEND, "ptxas"):
        return []
    lines = source.read_text(errors="replace").splitlines()
    patterns = [re.compile(rf"\badd_{re.escape(c)}(?:ir)?\(") for c in _binding_candidates(argument or pass_name)]
    if argument:
        patterns.append(re.compile(rf"--{re.escape(argument)}\b"))
    for rx in patterns:
        hits = [i for i, line in enumerate(lines) if rx.search(line)]
        if hits:
            return [_ref(lines, i, source, "installed") for i in hits[:3]]
    return []


def _binding_candidates(name: str) -> list[str]:
    """``tritongpu-accelerate-matmul`` -> ``tritongpu_accelerate_matmul``, ``accelerate_matmul``, ``matmul``:
    binding names to look for, longest (most specific) first."""
    if "-" in name:
        words = name.split("-")
    else:
        words = [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name)]
        words = [w for w in words if w != "pass"]
    # Triton's Python bindings abbreviate dialects: convert-triton-to-tritongpu -> add_convert_to_ttgpuir
    short = [_ABBREV.get(w, w) for w in words]
    short = [w for w in short if w]
    out: list[str] = []
    for ws in (words, short):
        out += ["_".join(ws[i:]) for i in range(len(ws)) if len("_".join(ws[i:])) >= 5]
    return sorted(dict.fromkeys(out), key=len, reverse=True)


_ABBREV = {"tritongpu": "ttgpuir", "triton": "", "llvm": "llvmir", "nvidia": "", "gpu": ""}


def _capability(report: IRReport) -> int | None:
    arch = report.target.split(":", 1)[1] if ":" in report.target else ""
    return int(arch) if arch.isdigit() else None


_SAFE_NODES = (ast.Expression, ast.Compare, ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.Name, ast.Load, ast.Constant,
               ast.List, ast.Tuple, ast.In, ast.NotIn, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.And,
               ast.Or, ast.Not, ast.FloorDiv, ast.Mod, ast.Add, ast.Sub, ast.Mult)


def invariant_applies(conditions: list[str], capability: int | None) -> bool | None:
    """Evaluate ``if capability // 10 in [8, 9]``-style gates for the target; None when they cannot be read."""
    if capability is None or not conditions:
        return None
    for cond in conditions:
        expr = re.sub(r"^(?:el)?if\s+", "", cond).strip()
        try:
            tree = ast.parse(expr, mode="eval")
        except SyntaxError:
            return None
        if not all(isinstance(n, _SAFE_NODES) for n in ast.walk(tree)):
            return None
        if any(isinstance(n, ast.Name) and n.id != "capability" for n in ast.walk(tree)):
            return None
        if not eval(compile(tree, "<gate>", "eval"), {"__builtins__": {}}, {"capability": capability}):
            return False
    return True


def _ref(lines: list[str], i: int, path: Path, origin: Literal["installed", "checkout"]) -> CompilerSourceRef:
    indent = len(lines[i]) - len(lines[i].lstrip())
    conditions: list[str] = []
    function = ""
    for j in range(i - 1, -1, -1):
        s = lines[j]
        if not s.strip():
            continue
        ind = len(s) - len(s.lstrip())
        if ind < indent:
            head = s.strip()
            if head.startswith(("if ", "elif ")) and len(conditions) < 4:
                conditions.insert(0, head.rstrip(":"))
            elif head.startswith("else"):
                conditions.insert(0, "else")
            elif head.startswith("def "):
                function = head[4:].split("(")[0]
                break
            indent = ind
    return CompilerSourceRef(path=str(path), line=i + 1, function=function, code=lines[i].strip()[:200],
                             conditions=conditions, origin=origin)


def _grep_checkout(root: Path, passes: list[str], arguments: dict[str, str], report: IRReport,
                   sig: Signature) -> list[CompilerSourceRef]:
    """Pass definitions (``"<argument>"`` in .td/.cpp) and remark texts of ``sig`` in a compiler checkout."""
    needles = [f'"{arguments[p]}"' for p in passes if p in arguments]
    needles += [p for p in passes if p not in arguments]
    lines = set(sig.source_lines)
    needles += [r.message[:48] for r in report.remarks if r.line in lines and len(r.message) > 20]
    if not needles or not root.is_dir():
        return []
    refs: list[CompilerSourceRef] = []
    seen = 0
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("build", "node_modules")]
        for f in files:
            if not f.endswith(_SOURCE_SUFFIXES):
                continue
            seen += 1
            if seen > _MAX_CHECKOUT_FILES:
                return refs
            path = Path(dirpath) / f
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            for needle in needles:
                pos = text.find(needle)
                if pos >= 0:
                    n = text.count("\n", 0, pos)
                    code = text.splitlines()[n].strip()[:200]
                    refs.append(CompilerSourceRef(path=str(path), line=n + 1, code=code, origin="checkout"))
            if len(refs) >= 12:
                return refs
    return refs
