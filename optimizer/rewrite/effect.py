"""Does a rewrite change what runs? Refuse candidates that cannot, before anything is timed.

Two checks, both stated as refusal reasons (``NotApplicable`` messages start with ``no-op:``):

- **overridden knobs** (static, always): a launch option (``num_warps``, ``num_stages``, ``num_ctas``, ``maxnreg``) or
  a constexpr that the rewrite sets at a launch of a kernel whose ``@triton.heuristics`` computes that name, or
  whose ``@triton.autotune`` configs set it (every ``triton.Config`` sets the launch options), is overridden at
  run time: Triton's ``Heuristics.run`` writes ``kwargs[name]`` after the launch passed it, and the autotuner
  launches with the config's values. Such a value must be edited where it is decided (the heuristic, the config
  list), never at the launch.
- **identical compiled kernel** (``effect_target`` set, e.g. ``cuda:90``): when the rewrite leaves the host code
  and the launches' structure alone (only kernel bodies, launch options or literal constexprs changed), every
  recorded launch configuration of every changed kernel is compiled for the target, base and candidate, and the
  PTX is compared without debug locations. Identical PTX for every configuration means the GPU runs the same
  code: a ``tl.max_contiguous``/``tl.multiple_of`` hint on offsets the compiler already knows to be contiguous
  (unit strides specialised to 1), ``input_precision="ieee"`` on an fp16 dot, ``num_stages`` on a loop-less
  kernel. A rewrite that touches anything else (the host, a grid, a new parameter) is never called a no-op.

Compiles go to one worker process per check (``_compile_jobs.py``) and are memoized per (source hash, kernel,
specialization, options, target), so the base is compiled once however many points are checked.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import libcst as cst

from optimizer.ir.compile_cost import within_budget
from optimizer.rewrite.tree import CstKernel, Tree, call_name, dotted, walk

__all__ = ["KNOB_OPTIONS", "compiled_identity", "decorator_knobs", "effect_reasons", "overridden_knobs"]

KNOB_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_OPTION_DEFAULTS = {"num_warps": 4, "num_stages": 3, "num_ctas": 1}
_WORKER = Path(__file__).with_name("_compile_jobs.py")
_BOOT = "import runpy, sys; path = sys.argv[1]; sys.argv = sys.argv[1:]; runpy.run_path(path, run_name='__main__')"
#: (source sha, kernel, args, options, target) -> normalized PTX (or None: the compile failed)
_MEMO: dict[str, str | None] = {}


# ------------------------------------------------------------------------------------------- decorator knobs
def _module_value(module: cst.Module, name: str) -> cst.BaseExpression | None:
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
            a = stmt.body[0]
            if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name) and a.targets[0].target.value == name:
                return a.value
    return None


def _function(module: cst.Module, name: str) -> cst.FunctionDef | None:
    return next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)


def _string_keys(node: cst.CSTNode) -> set[str]:
    return {k.evaluated_value for e in getattr(node, "elements", []) if isinstance(e, cst.DictElement)
            and isinstance(k := e.key, cst.SimpleString) and isinstance(k.evaluated_value, str)}


def _config_names(module: cst.Module, configs: cst.CSTNode) -> set[str]:
    """Names set by the ``triton.Config`` calls of an autotune config list: their kwargs dicts' keys, and every
    launch option (a Config always carries num_warps, num_stages, num_ctas). Follows a list built by a module
    function (``configs=get_autotune_config()``) or held in a module variable."""
    names: set[str] = {"num_warps", "num_stages", "num_ctas"}
    roots: list[cst.CSTNode] = [configs]
    for n in list(walk(configs)):
        if isinstance(n, cst.Call) and (f := _function(module, call_name(n))) is not None:
            roots.append(f)
        elif isinstance(n, cst.Name) and (v := _module_value(module, n.value)) is not None:
            roots.append(v)
    for root in roots:
        for n in walk(root):
            if isinstance(n, cst.Call) and call_name(n).endswith("Config"):
                if n.args and isinstance(n.args[0].value, cst.Dict):
                    names |= _string_keys(n.args[0].value)
                names |= {a.keyword.value for a in n.args if a.keyword is not None and a.keyword.value in KNOB_OPTIONS}
    return names


def decorator_knobs(tree: Tree, kernel: CstKernel) -> dict[str, str]:
    """Name -> the decorator that decides it at run time (``@triton.heuristics`` / ``@triton.autotune``)."""
    out: dict[str, str] = {}
    for d in kernel.node.decorators:
        dec = d.decorator
        name = dotted(dec)
        if not isinstance(dec, cst.Call):
            continue
        if name.endswith("heuristics"):
            arg = dec.args[0].value if dec.args else None
            if isinstance(arg, cst.Name):
                arg = _module_value(tree.module, arg.value)
            for key in _string_keys(arg) if arg is not None else ():
                out[key] = "@triton.heuristics"
        elif name.endswith("autotune"):
            configs = next((a.value for a in dec.args if a.keyword is not None and a.keyword.value == "configs"),
                           dec.args[0].value if dec.args and dec.args[0].keyword is None else None)
            for key in _config_names(tree.module, configs) if configs is not None else {"num_warps", "num_stages"}:
                out.setdefault(key, "@triton.autotune")
    return out


def _site_args(tree: Tree, kernel: CstKernel, call: cst.Call) -> dict[str, str]:
    """Launch argument text per kernel parameter or launch option."""
    out = {}
    for p in [*kernel.params, *KNOB_OPTIONS]:
        a = next((x.value for x in call.args if x.keyword is not None and x.keyword.value == p), None)
        if a is None and p in kernel.params:
            pos = [x for x in call.args if x.keyword is None and not x.star]
            i = kernel.params.index(p)
            a = pos[i].value if i < len(pos) and not any(x.star for x in call.args) else None
        if a is not None:
            out[p] = tree.code(a)
    return out


def _launch_changes(base: Tree, cand: Tree) -> dict[str, list[dict[str, tuple[str | None, str | None]]]] | None:
    """Per launched kernel, per launch site (in order): the arguments whose text changed, (base, candidate). None when
    the launch structure differs (other kernels launched, a different number of sites, another grid)."""
    kb, kc = [s.kernel for s in base.launches], [s.kernel for s in cand.launches]
    if kb != kc:
        return None
    out: dict[str, list[dict[str, tuple[str | None, str | None]]]] = {}
    for sb, sc in zip(base.launches, cand.launches, strict=True):
        kern_b, kern_c = base.kernels[sb.kernel], cand.kernels[sc.kernel]
        if base.code(sb.grid) != cand.code(sc.grid):
            return None
        ab, ac = _site_args(base, kern_b, sb.call), _site_args(cand, kern_c, sc.call)
        diff = {k: (ab.get(k), ac.get(k)) for k in {*ab, *ac} if ab.get(k) != ac.get(k)}
        out.setdefault(sb.kernel, []).append(diff)
    return out


def overridden_knobs(base_src: str, cand_src: str) -> list[str]:
    """Launch values the rewrite sets that a decorator of the launched kernel overrides at run time."""
    try:
        base, cand = Tree(base_src), Tree(cand_src)
    except cst.ParserSyntaxError:
        return []
    changes = _launch_changes(base, cand)
    if not changes:
        return []
    out = []
    for kname, sites in changes.items():
        deco = decorator_knobs(cand, cand.kernels[kname])
        for diff in sites:
            for name, (old, new) in sorted(diff.items()):
                if name in deco and new is not None:
                    out.append(f"{name}={new} at the launch of {kname} is overridden by its {deco[name]} (which sets "
                               f"{name}; edit it there)" + (f" [was {old}]" if old is not None else ""))
    return out


# ---------------------------------------------------------------------------------------- compiled identity
class _StripLaunchArgs(cst.CSTTransformer):
    """Host text with the kernels' definitions and the launches' argument lists blanked (compared separately)."""

    def __init__(self, kernels: set[str]) -> None:
        self.kernels = kernels

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        if any(dotted(d.decorator).endswith("jit") for d in original_node.decorators):
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if isinstance(original_node.func, cst.Subscript) and dotted(original_node.func.value) in self.kernels:
            return updated_node.with_changes(args=[])
        return updated_node


def _host_text(tree: Tree) -> str:
    return tree.module.visit(_StripLaunchArgs(set(tree.kernels))).code


def _jit_text(tree: Tree, *, decorators: bool = False) -> dict[str, str]:
    """Every @triton.jit function (kernels and helpers) by name, as an ast dump (comments and layout ignored); with
    ``decorators``, only the decorators other than ``@triton.jit`` (autotune configs, heuristics)."""
    out = {}
    for name, k in tree.kernels.items():
        if decorators:
            code = "\n".join(cst.Module([]).code_for_node(d) for d in k.node.decorators
                             if not dotted(d.decorator).endswith("jit"))
        else:
            code = cst.Module([]).code_for_node(k.node.with_changes(decorators=[
                d for d in k.node.decorators if dotted(d.decorator).endswith("jit")]))
        try:
            out[name] = ast.dump(ast.parse(code.strip())) if not decorators else code.strip()
        except SyntaxError:
            out[name] = code
    return out


def _literal(text: str | None) -> Any:
    if text is None:
        return None
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _NOT_LITERAL
    return v if isinstance(v, (bool, int, float)) else _NOT_LITERAL


_NOT_LITERAL = object()


def _candidate_job(rec: dict[str, Any], kernel: CstKernel, diffs: list[dict[str, tuple[str | None, str | None]]]
                   ) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(ir_args, options) the candidate launches with, from the base record and the launch text changes; None when a
    changed value is not a literal (its run-time value is unknown here)."""
    args = dict(rec.get("ir_args") or {})
    opts = {k: v for k, v in (rec.get("options") or {}).items() if k in KNOB_OPTIONS}
    merged: dict[str, tuple[str | None, str | None]] = {}
    for d in diffs:
        for k, v in d.items():
            if k in merged and merged[k] != v:
                return None  # sites changed differently: which record belongs to which site is unknown
            merged[k] = v
    for name, (_old, new) in merged.items():
        val = _literal(new)
        if val is _NOT_LITERAL:
            return None
        if name in KNOB_OPTIONS:
            if val is None:
                opts.pop(name, None)
                if name in _OPTION_DEFAULTS:
                    opts[name] = _OPTION_DEFAULTS[name]
            else:
                opts[name] = val
        elif name in kernel.constexprs and val is not None:
            args[name] = val
        else:
            return None
    return args, opts


def _job_key(source: str, kernel: str, args: dict[str, Any], opts: dict[str, Any], target: str) -> str:
    h = hashlib.sha256(source.encode())
    h.update(json.dumps([kernel, args, opts, target], sort_keys=True, default=str).encode())
    return h.hexdigest()


def _compile(jobs: list[dict[str, Any]], target: str, timeout_s: float) -> list[str | None]:
    """Normalized PTX per job (None where it did not compile), memoized; one worker process for the misses."""
    from optimizer.ir.capture import parse_args, parse_target

    keys = [_job_key(j["source"], j["kernel"], j["args"], j["options"], target) for j in jobs]
    todo = [(k, j) for k, j in zip(keys, jobs, strict=True) if k not in _MEMO]
    todo = list({k: (k, j) for k, j in todo}.values())
    if todo:
        tgt = parse_target(target)
        with tempfile.TemporaryDirectory(prefix="ladder-effect-") as tmp:
            files = {}
            wire = []
            for i, (_k, j) in enumerate(todo):
                try:
                    args = [a.to_dict() for a in parse_args(j["args"]).values()]
                except Exception:  # noqa: BLE001 -- a record this parser cannot read: compile nothing, "cannot tell"
                    args = None
                sha = hashlib.sha256(j["source"].encode()).hexdigest()[:16]
                if sha not in files:
                    folder = Path(tmp) / sha
                    folder.mkdir()
                    f = folder / (Path(j["file"]).name if j.get("file") else f"candidate_{i}.py")
                    f.write_text(j["source"])
                    files[sha] = f
                wire.append({"file": str(files[sha]), "kernel": j["kernel"], "options": j["options"], "args": args})
            req = Path(tmp) / "request.json"
            out = Path(tmp) / "result.json"
            req.write_text(json.dumps({"target": {"backend": tgt.triton_backend, "arch": tgt.arch,
                                                  "warp_size": tgt.warp_size}, "jobs": wire, "out": str(out)}))
            env = {k: v for k, v in os.environ.items() if k not in ("MLIR_DUMP_PATH", "TRITON_INTERPRET")}
            paths = sorted({str(Path(j["file"]).parent) for _k, j in todo if j.get("file")})
            env["PYTHONPATH"] = os.pathsep.join([*paths, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
            try:
                subprocess.run([sys.executable, "-c", _BOOT, str(_WORKER), str(req)], env=env, cwd=tmp,
                               timeout=timeout_s, capture_output=True)
                results = json.loads(out.read_text())["results"] if out.exists() else [{"ok": False}] * len(todo)
            except subprocess.TimeoutExpired:
                results = [{"ok": False}] * len(todo)
        for (k, _j), r in zip(todo, results, strict=True):
            _MEMO[k] = r.get("ptx") if r.get("ok") else None
    return [_MEMO.get(k) for k in keys]


def compiled_identity(base_src: str, cand_src: str, launches: list[dict[str, Any]], *, target: str = "cuda:90",
                      timeout_s: float = 300.0) -> str | None:
    """The refusal reason when the candidate compiles, for every recorded launch configuration of every kernel it
    changed, to the same PTX as its base and changes nothing else; None when it changes something (or that cannot
    be established: a changed host, grid or parameter list, a non-literal launch value, a failed compile)."""
    try:
        base, cand = Tree(base_src), Tree(cand_src)
    except cst.ParserSyntaxError:
        return None
    if _host_text(base) != _host_text(cand):
        return None
    changes = _launch_changes(base, cand)
    if changes is None:
        return None
    jb, jc = _jit_text(base), _jit_text(cand)
    if set(jb) != set(jc) or _jit_text(base, decorators=True) != _jit_text(cand, decorators=True):
        return None  # a decorator decides configs at run time (autotune, heuristics): the records do not show them
    jit_changed = jb != jc
    jobs_b, jobs_c, labels = [], [], []
    skipped = 0
    for kname, diffs in changes.items():
        kb, kc = base.kernels[kname], cand.kernels[kname]
        if kb.params != kc.params or kb.constexprs != kc.constexprs:
            return None
        recs = [r for r in launches if r.get("kernel") == kname and r.get("ir_args") and "error" not in r]
        fit = [r for r in recs if within_budget(r)]  # never a compile whose time is unbounded
        skipped += len(recs) - len(fit)
        if recs and not fit:
            return None  # nothing of this kernel can be compiled within the budget: the effect is not established
        recs = fit
        if not recs:
            if jit_changed or any(diffs):
                return None  # a changed kernel with no recorded configuration to compile
            continue
        seen = set()
        for rec in recs:
            job = _candidate_job(rec, kc, diffs)
            if job is None:
                return None
            args_c, opts_c = job
            opts_b = {k: v for k, v in (rec.get("options") or {}).items() if k in KNOB_OPTIONS}
            key = json.dumps([rec["ir_args"], opts_b, args_c, opts_c], sort_keys=True, default=str)
            if key in seen:
                continue
            seen.add(key)
            if not jit_changed and args_c == rec["ir_args"] and opts_c == opts_b:
                continue  # this configuration is launched exactly as before
            file = rec.get("file") or ""
            jobs_b.append(
                {"source": base_src, "file": file, "kernel": kname, "args": rec["ir_args"], "options": opts_b}
            )
            jobs_c.append({"source": cand_src, "file": file, "kernel": kname, "args": args_c, "options": opts_c})
            labels.append(f"{kname} ({', '.join(f'{k}={v}' for k, v in sorted(opts_c.items()))})")
    if not jobs_b:
        return "no-op: the rewrite changes no kernel, launch or host code" if not jit_changed else None
    # one configuration first: a rewrite that changes the kernel usually shows it there, and an autotuned kernel's
    # sixteen recorded configurations cost 32 compiles (63 s of a round's proposer on the H200) when it does not
    first = _compile([jobs_b[0], jobs_c[0]], target, timeout_s)
    if first[0] is None or first[0] != first[1]:
        return None
    ptx = _compile(jobs_b + jobs_c, target, timeout_s)  # the first pair is memoized
    pb, pc = ptx[: len(jobs_b)], ptx[len(jobs_b):]
    if any(p is None for p in ptx) or any(a != b for a, b in zip(pb, pc, strict=True)):
        return None
    within = f" within the compile budget ({skipped} over it not compiled)" if skipped else ""
    return (f"no-op: the candidate compiles to the same {target} PTX as its base for every recorded launch "
            f"configuration{within} ({'; '.join(sorted(set(labels)))[:300]}), so the GPU would run the same code")


def effect_reasons(base_src: str, cand_src: str, launches: list[dict[str, Any]], *, target: str | None) -> list[str]:
    """Why the candidate cannot change what runs (empty: it may). ``target`` None: only the static override check."""
    out = [f"no-op: {r}" for r in overridden_knobs(base_src, cand_src)]
    if not out and target:
        same = compiled_identity(base_src, cand_src, launches, target=target)
        if same:
            out.append(same)
    return out
