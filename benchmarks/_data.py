"""Committed campaign data, read the same way everywhere: packed, unpacked, or both at once.

A campaign folder under ``benchmarks/results`` (``naive``, ``suite``, ``diagnosis`` ...) is stored as one archive,
``<folder>/packed.jsonl.gz``: gzip (level 9, no timestamp) of JSON lines ``{"path": ..., "text": ...}`` (or
``"base64"`` for bytes that are not UTF-8), one per file, sorted by path, so the same files always give the same
bytes. Only what people read stays beside it as plain files: ``*.md`` reports and ``*.png`` figures (the README
links them). ``benchmarks/pack_results.py`` folds a folder's loose files into its archive.

A path is *logical*: ``benchmarks/results/naive/argmax/session/trajectory.json`` names the same file whether it lies
on disk, on disk as ``trajectory.json.gz`` (an older form), or inside ``benchmarks/results/naive/packed.jsonl.gz``
as ``argmax/session/trajectory.json``. A loose file wins over the archive (it is the newer: a device call's
unpacked results, a regenerated report), so new results can be added before they are packed, and every reader
(scripts, tests, ``ladder bench``) goes through ``read_text`` / ``files`` / ``glob`` here instead of the disk.

    python benchmarks/_data.py ls DIR            # the logical files under DIR
    python benchmarks/_data.py cat PATH          # one logical file
    python benchmarks/_data.py unpack DIR DEST   # DIR's logical files written out under DEST (a resumable copy)

Only the standard library: the GPU image's bare ``python3`` runs it (``benchmarks/device_call.sh``)."""

from __future__ import annotations

import base64
import fnmatch
import gzip
import json
import os
import sys
from pathlib import Path

ARCHIVE = "packed.jsonl.gz"
#: files a pack leaves on disk beside the archive: the reports and figures people open
LOOSE = ("*.md", "*.png")
#: never folded into an archive, never listed: caches and half-written files
SKIP_DIRS = ("__pycache__",)
SKIP_SUFFIXES = (".tmp", ".pyc")

_cache: dict[Path, tuple[tuple[int, int], dict[str, bytes]]] = {}


# ------------------------------------------------------------------------------------------------ archive ---
def load_archive(archive: Path) -> dict[str, bytes]:
    """path -> bytes of every member of ``archive`` (cached while the file is unchanged)."""
    archive = Path(archive).resolve()
    st = archive.stat()
    key = (st.st_mtime_ns, st.st_size)
    hit = _cache.get(archive)
    if hit and hit[0] == key:
        return hit[1]
    members: dict[str, bytes] = {}
    for line in gzip.decompress(archive.read_bytes()).decode().splitlines():
        rec = json.loads(line)
        members[rec["path"]] = rec["text"].encode() if "text" in rec else base64.b64decode(rec["base64"])
    _cache[archive] = (key, members)
    return members


def archive_bytes(members: dict[str, bytes]) -> bytes:
    """The archive form of ``members``: deterministic (sorted paths, gzip mtime 0)."""
    lines = []
    for path in sorted(members):
        data = members[path]
        try:
            rec = {"path": path, "text": data.decode()}
        except UnicodeDecodeError:
            rec = {"path": path, "base64": base64.b64encode(data).decode()}
        lines.append(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    return gzip.compress("".join(lines).encode(), compresslevel=9, mtime=0)


def write_archive(archive: Path, members: dict[str, bytes]) -> int:
    """Write ``members`` to ``archive`` atomically; returns its size in bytes."""
    data = archive_bytes(members)
    tmp = archive.with_name(archive.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, archive)
    _cache.pop(archive.resolve(), None)
    return len(data)


def _archives_over(path: Path) -> list[tuple[Path, str]]:
    """(archive, path relative to the archive's folder) for every archive in ``path`` or above it, nearest first."""
    path = Path(path).resolve()
    out = []
    for folder in (path, *path.parents):
        a = folder / ARCHIVE
        if a.is_file():
            rel = path.relative_to(folder).as_posix()
            out.append((a, "" if rel == "." else rel))
    return out


def _skipped(rel_parts: tuple[str, ...]) -> bool:
    return any(p in SKIP_DIRS for p in rel_parts) or rel_parts[-1].endswith(SKIP_SUFFIXES) or rel_parts[-1] == ARCHIVE


def _logical_name(name: str) -> str:
    """``x.json.gz`` -> ``x.json`` (a single compressed file); other names unchanged."""
    return name[:-3] if name.endswith(".gz") and not name.endswith((".tar.gz", ARCHIVE)) else name


# --------------------------------------------------------------------------------------------- reading ---
def read_bytes(path: Path) -> bytes:
    """The bytes of the logical file ``path``: on disk, its ``.gz`` on disk, or in the nearest archive above it."""
    path = Path(path)
    if path.is_file():
        return path.read_bytes()
    gz = path.with_name(path.name + ".gz")
    if gz.is_file():
        return gzip.decompress(gz.read_bytes())
    for archive, rel in _archives_over(path):
        data = load_archive(archive).get(rel)
        if data is not None:
            return data
    raise FileNotFoundError(f"{path} (neither on disk, nor {path.name}.gz, nor in a {ARCHIVE} above it)")


def read_text(path: Path) -> str:
    return read_bytes(path).decode()


def read_json(path: Path) -> object | None:
    """The JSON in ``path``, or None when it is missing or not JSON."""
    try:
        return json.loads(read_bytes(path))
    except (OSError, ValueError):
        return None


def exists(path: Path) -> bool:
    """Whether ``path`` is a logical file."""
    try:
        read_bytes(path)
    except FileNotFoundError:
        return False
    return True


def is_dir(path: Path) -> bool:
    """Whether ``path`` is a folder on disk or holds logical files inside an archive above it."""
    path = Path(path)
    if path.is_dir():
        return True
    for archive, rel in _archives_over(path):
        prefix = rel + "/"
        if any(m.startswith(prefix) for m in load_archive(archive)):
            return True
    return False


def files(root: Path) -> list[Path]:
    """Every logical file under ``root`` (loose files, ``.gz`` files by their plain name, archive members), sorted."""
    root = Path(root)
    if root.is_file():
        return [root]
    found: set[Path] = set()
    if root.is_dir():
        for p in root.rglob("*"):
            rel = p.relative_to(root).parts
            if p.is_file() and not _skipped(rel):
                found.add(p.with_name(_logical_name(p.name)))
            elif p.is_file() and p.name == ARCHIVE:
                found |= {p.parent / m for m in load_archive(p)}
    for archive, rel in _archives_over(root):
        if archive.parent == root.resolve():
            continue  # listed above, from the disk walk
        prefix = rel + "/"
        found |= {root / m[len(prefix):] for m in load_archive(archive) if m.startswith(prefix)}
    return sorted(found)


def _match(rel: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    if pattern and pattern[0] == "**":
        return any(_match(rel[i:], pattern[1:]) for i in range(len(rel) + 1))
    return len(rel) == len(pattern) and all(fnmatch.fnmatchcase(r, p) for r, p in zip(rel, pattern, strict=True))


def glob(root: Path, pattern: str) -> list[Path]:
    """The logical files under ``root`` whose path relative to it matches ``pattern`` (``*/result.json``,
    ``**/trajectory.json``: ``*`` within one folder name, a leading ``**/`` any depth), sorted."""
    root = Path(root)
    pat = tuple(pattern.split("/"))
    return [p for p in files(root) if _match(p.relative_to(root).parts, pat)]


def find(root: Path, name: str = "trajectory.json") -> list[Path]:
    """Every logical file called ``name`` under ``root``, sorted; read them with ``read_text``."""
    return glob(root, f"**/{name}")


# ------------------------------------------------------------------------------------- writing it out ---
def materialize(root: Path, dest: Path) -> int:
    """Write every logical file under ``root`` to the same place under ``dest`` (a plain copy a run can resume
    from; ``dest`` may be ``root`` itself: then only files that are not on disk yet are written). Returns the count."""
    root, dest = Path(root), Path(dest)
    n = 0
    for p in files(root):
        target = dest / p.relative_to(root)
        if target.is_file():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(read_bytes(p))
        n += 1
    return n


def _session_source(rel: tuple[str, ...]) -> bool:
    """A candidate source of a session folder (stored as data: ``round_03.py`` -> ``round_03.py.txt``)."""
    return rel[-1].endswith(".py") and any(p in ("session", "sessions") for p in rel[:-1])


def fold(root: Path) -> tuple[int, int, int]:
    """Fold the loose files of a campaign folder into its archive (``root/packed.jsonl.gz``, or the one of the
    nearest folder above ``root`` that has one): a loose file replaces the member of the same logical path, ``.gz``
    files are stored decompressed, candidate ``.py`` sources as ``.py.txt``; ``LOOSE`` files (reports, figures)
    stay on disk. Folded files are removed, and folders left empty. Returns (files folded, members, archive bytes)."""
    root = Path(root).resolve()
    over = _archives_over(root)
    folder = over[0][0].parent if over else root
    archive = folder / ARCHIVE
    members = dict(load_archive(archive)) if archive.is_file() else {}
    loose = []
    # .gz first, so a plain file of the same logical name (the newer) overwrites it
    for p in sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: (not p.name.endswith(".gz"), p)):
        rel = p.relative_to(folder).parts
        if _skipped(rel) or any(fnmatch.fnmatchcase(p.name, pat) for pat in LOOSE):
            continue
        data = p.read_bytes()
        name = _logical_name(p.name)
        if name != p.name:
            data = gzip.decompress(data)
        if _session_source(rel):
            name += ".txt"
        members["/".join((*rel[:-1], name))] = data
        loose.append(p)
    size = write_archive(archive, members) if loose or not archive.is_file() else archive.stat().st_size
    for p in loose:
        p.unlink()
    for d in sorted((d for d in folder.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
        if not any(d.iterdir()):
            d.rmdir()
    return len(loose), len(members), size


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "ls":
        for p in files(Path(argv[1])):
            print(p)
    elif len(argv) == 2 and argv[0] == "cat":
        sys.stdout.buffer.write(read_bytes(Path(argv[1])))
    elif len(argv) == 3 and argv[0] == "unpack":
        n = materialize(Path(argv[1]), Path(argv[2]))
        print(f"{argv[1]} -> {argv[2]}: {n} file(s)")
    else:
        print("usage: python benchmarks/_data.py ls DIR | cat PATH | unpack DIR DEST", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
