"""Where turnscope keeps files of its own (a leaf module: the CLI reads it for help texts
without loading the service stack)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import platformdirs

__all__ = ["DEFAULT_STATE_FILE", "default_cache_dir", "user_data_path", "default_state_path",
           "replace_atomically"]

#: the name of the SQLite session store used when neither ``--store`` nor
#: ``$TURNSCOPE_STATE`` names one
DEFAULT_STATE_FILE = "sessions.db"


def default_cache_dir() -> Path:
    """``$TURNSCOPE_CACHE`` if set, else ``~/.cache/turnscope`` (read at call time): files
    turnscope can always rebuild (retrieval indexes, embeddings)."""
    env = os.environ.get("TURNSCOPE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "turnscope"


def user_data_path() -> Path:
    """The per-user data folder: ``~/.local/share/turnscope`` on Linux (``$XDG_DATA_HOME/
    turnscope`` when that is set), ``~/Library/Application Support/turnscope`` on macOS,
    ``%LOCALAPPDATA%\\turnscope`` on Windows."""
    return Path(platformdirs.user_data_dir("turnscope", appauthor=False))


def default_state_path() -> Path:
    """``sessions.db`` in :func:`user_data_path`: the service's default store, never a file
    in whatever folder the server happens to start from."""
    return user_data_path() / DEFAULT_STATE_FILE


def replace_atomically(path: Path, write: Callable[[Path], object], *, is_dir: bool = False) -> None:
    """Make ``path`` what ``write(tmp)`` puts in a temporary sibling (a file, or a folder with
    ``is_dir``), then rename it into place: a reader in another process sees the old entry or
    the whole new one, never half. The temporary file ends with ``path``'s suffix, so a writer
    that adds one to a name that lacks it (``np.save`` adds ".npy") writes where it was told.
    Whatever ``write`` or the rename raises is raised again, after the temporary sibling is
    removed (callers whose file is only a cache log it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if is_dir:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    else:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
        os.close(fd)
        tmp = Path(name)
    try:
        write(tmp)
        if is_dir and path.exists():
            # a folder cannot be renamed over a non-empty one
            shutil.rmtree(path, ignore_errors=True)
        os.replace(tmp, path)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise
