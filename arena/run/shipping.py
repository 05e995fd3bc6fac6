"""Bot folders shipped to the workers (``--ship-bots``): the arena zips each bot's folder (its
``cwd``) once; every worker unpacks the archives into its own local directory, and a bot is
started there with its folder — and any argument naming a path inside it — moved to the copy.
Without Dask (the worker plugin that carries the archives is in ``arena.run.cluster``)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import shutil
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from arena.model.manifest import BotSpec

SKIPPED = frozenset({".git", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
"""Folders never shipped (version control, virtual environments, caches)."""
MAX_BYTES = 200 * 1024 * 1024
"""A bot folder larger than this (zipped) is refused: ship it another way (the same path on
every machine)."""


class ShippingError(ValueError):
    """A bot folder that cannot be shipped."""


def zip_folder(folder: Path) -> bytes:
    """``folder`` zipped (its files' modes kept; :data:`SKIPPED` folders and symlinks left out)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not Path(root, d).is_symlink())
            for name in sorted(files):
                path = Path(root, name)
                if not path.is_symlink():
                    z.write(path, path.relative_to(folder).as_posix())
            if buffer.tell() > MAX_BYTES:
                raise ShippingError(f"bot folder {str(folder)!r} is larger than {MAX_BYTES // 2**20} MiB zipped; "
                                    "put it at the same path on every worker instead of --ship-bots")
    return buffer.getvalue()


def archives(bots: Iterable[BotSpec]) -> dict[str, bytes]:
    """The folders of ``bots`` that start a program (by their path), zipped."""
    folders = sorted({b.cwd for b in bots if b.cwd and not b.remote})
    return {f: zip_folder(Path(f)) for f in folders}


def unpack(folders: Mapping[str, bytes], root: Path) -> dict[str, str]:
    """(On a worker.) Unpack each archive under ``root``; returns {arena's folder: the copy}."""
    places: dict[str, str] = {}
    for folder, data in folders.items():
        dest = root / hashlib.sha256(folder.encode()).hexdigest()[:16]
        if dest.exists():
            shutil.rmtree(dest)
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                z.extract(info, dest)
                mode = info.external_attr >> 16
                if mode & 0o777:
                    (dest / info.filename).chmod(mode & 0o777)
        places[folder] = str(dest)
    return places


T = TypeVar("T")


def relocated(item: T, places: Mapping[str, str]) -> T:
    """A :class:`BotSpec` or :class:`referee.BotLaunch` started from the copy of its folder:
    its ``cwd`` and every command word inside that folder moved to the copy."""
    cwd = str(getattr(item, "cwd", ""))
    if cwd not in places:
        return item
    copy = places[cwd]
    command = tuple(copy + w[len(cwd):] if w == cwd or w.startswith(cwd + os.sep) else w
                    for w in getattr(item, "command", ()))
    return dataclasses.replace(item, cwd=copy, command=command)  # type: ignore[type-var]
