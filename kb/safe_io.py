"""Writing files where a symlink may already be waiting.

A symlinked ``writer.lock`` in a home had its target overwritten by any writer; ``kb export`` and ``kb snapshot``
wrote through symlinks already in the destination. ``write_file`` writes to a fresh temporary name (``O_EXCL |
O_NOFOLLOW``) and renames it over the destination, which replaces a symlink there instead of following it;
``safe_dir`` refuses a directory that is a symlink; ``open_lock`` opens a lock file without following a link.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from kb.errors import InvalidArgument, StorageError

__all__ = ["open_lock", "safe_dir", "write_file"]


def safe_dir(path: Path, field: str = "out") -> Path:
    """Create ``path`` (and parents) if needed; refuse it if it, or an existing entry of that name, is a symlink."""
    path = Path(path)
    if path.is_symlink():
        raise InvalidArgument(f"{path} is a symbolic link; give a real directory (nothing is written through links)",
                              field=field)
    if path.exists() and not path.is_dir():
        raise InvalidArgument(f"{path} exists and is not a directory; give a new or existing directory", field=field)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InvalidArgument(f"cannot create {path}: {e.strerror}", field=field) from None
    return path


def write_file(path: Path, data: bytes | str, field: str = "out") -> None:
    """Write ``data`` to ``path`` atomically, never through a symlink (a link at ``path`` is replaced)."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise InvalidArgument(f"cannot write {path}: {e.strerror or e}", field=field) from None


def open_lock(path: Path) -> int:
    """Open (creating) a lock file for reading and writing without following a symlink."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as e:
        if Path(path).is_symlink():
            raise StorageError(f"{path} is a symbolic link; a lock file must be a plain file. Remove the link "
                               f"(`rm {path}`) and retry") from None
        raise StorageError(f"cannot open the lock file {path}: {e.strerror}") from None
