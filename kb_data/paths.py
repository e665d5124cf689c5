"""Where the package's files are, in a source checkout and in an installed wheel alike.

A checkout keeps `problems/` and `cards/` at its root and its working files in `.kb/`; a wheel
carries the first two inside the package (`kb_data/_problems`, `kb_data/_cards`) and keeps working
files in the user's cache folder, never in site-packages.
"""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DATA_DIR = PACKAGE_DIR / "data"

_root = PACKAGE_DIR.parent
CHECKOUT = _root if (_root / "pyproject.toml").is_file() and (_root / "problems").is_dir() else None

PROBLEMS_DIR = CHECKOUT / "problems" if CHECKOUT else PACKAGE_DIR / "_problems"
CARDS_DIR = CHECKOUT / "cards" if CHECKOUT else PACKAGE_DIR / "_cards"


def work_dir() -> Path:
    """`.kb/` of the checkout, else `$XDG_CACHE_HOME/kb-data` (default `~/.cache/kb-data`)."""
    if CHECKOUT:
        return CHECKOUT / ".kb"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kb-data"


# Variables that move a part of work_dir() elsewhere (the store, the build cache, the builders' cache) or name where
# huggingface_hub keeps its token
FOLDER_VARIABLES = ("KB_STORE", "KB_BUILD_CACHE", "KB_CACHE", "HF_HOME")


def private_folders() -> list[str]:
    """The folders of this package's working files and of the Hub's token, wherever the environment put them: what a
    sandbox must not read (other submissions' builds and sources, the store's records, a token), beside the home
    folders it hides anyway."""
    found = {work_dir(), *(Path(os.environ[v]).expanduser() for v in FOLDER_VARIABLES if os.environ.get(v))}
    return sorted({os.path.realpath(p) for p in found} - {"/"})  # a variable set to / would hide everything

