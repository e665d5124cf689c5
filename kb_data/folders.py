"""A dataset folder as the Hub serves it: its files, its card's `configs:` and which files each config names.

Shared by the stores (which read revisions) and the builders (which write folders); nothing here
writes a file.
"""
from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable


class RevisionError(ValueError, LookupError):
    """An unknown dataset, revision, config or split; the message lists what is known."""


def front_matter(readme_text: str) -> dict:
    """The YAML front matter of a card ({} when there is none), parsed by `huggingface_hub.DatasetCard`."""
    from huggingface_hub import DatasetCard

    if not readme_text.startswith("---"):
        return {}
    if "\n---" not in readme_text[3:]:
        raise ValueError("README.md: the YAML front matter is not closed by a '---' line")
    try:
        data = DatasetCard(readme_text, ignore_metadata_errors=False).data.to_dict()
    except (ValueError, RecursionError) as e:
        raise ValueError(f"README.md: the YAML front matter is not a mapping ({e})") from None
    if _expanded_size(data, {}) > CARD_MAX_VALUES:
        raise ValueError(f"README.md: the YAML front matter holds over {CARD_MAX_VALUES} values once its aliases are "
                         "expanded (or refers to itself)")
    return data


# a card's front matter, aliases expanded, past any real card's (a 582-byte "billion laughs" card made kb serve answer
# 1.5 GB of JSON to every request: red team, session 51)
CARD_MAX_VALUES = 100_000


def _expanded_size(obj, memo: dict) -> int:
    """How many values `obj` holds with every shared (aliased) part counted each time it is reached; a part that
    holds itself counts as too many. Linear in the distinct parts."""
    if not isinstance(obj, (dict, list)):
        return 1
    key = id(obj)
    if key not in memo:
        memo[key] = CARD_MAX_VALUES + 1  # while it is counted: reached again from inside, it holds itself
        try:
            memo[key] = 1 + sum(_expanded_size(x, memo) for x in (obj.values() if isinstance(obj, dict) else obj))
        except RecursionError:
            pass  # nested past Python's stack: too many all the same
    return memo[key]


@dataclass
class ConfigSpec:
    name: str
    default: bool
    splits: dict[str, list[str]] = field(default_factory=dict)  # split -> path patterns


def card_configs(readme_text: str) -> list[ConfigSpec]:
    """The `configs:` of a card as ConfigSpecs (empty when the card declares none)."""
    out = []
    for c in front_matter(readme_text).get("configs") or []:
        spec = ConfigSpec(c.get("config_name", "default"), bool(c.get("default", False)))
        files = c.get("data_files")
        if isinstance(files, str):
            files = [{"split": "train", "path": files}]
        for entry in files or []:
            paths = entry["path"]
            spec.splits.setdefault(entry.get("split", "train"), []).extend([paths] if isinstance(paths, str) else paths)
        out.append(spec)
    return out


def pick_config(configs: list[ConfigSpec], config: str | None) -> ConfigSpec:
    if not configs:
        raise ValueError("the dataset card declares no configs")
    if config is None:
        defaults = [c for c in configs if c.default] or [c for c in configs if c.name == "default"] or configs[:1]
        return defaults[0]
    for c in configs:
        if c.name == config:
            return c
    raise ValueError(f"no config {config!r}; this revision has: {', '.join(c.name for c in configs)}")


def config_files(readme_text: str, files: Iterable[str], config: str | None, split: str | None,
                 where: str) -> list[str]:
    """The files a config (and split) names among `files`; `where` names the revision in errors."""
    spec = pick_config(card_configs(readme_text), config)
    if split is not None and split not in spec.splits:
        raise RevisionError(f"{where}: config {spec.name!r} has no split {split!r}; it has {', '.join(spec.splits)}")
    patterns = spec.splits[split] if split else [p for ps in spec.splits.values() for p in ps]
    return match_files(patterns, files)


def match_files(patterns: list[str], files: Iterable[str]) -> list[str]:
    files = list(files)
    return sorted({f for p in patterns for f in files if fnmatch.fnmatchcase(f, p)})


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_blob_sha1(data: bytes) -> str:
    """The id git (and the Hub) gives a file that is not stored with LFS."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def folder_files(folder: Path) -> list[str]:
    """Relative POSIX paths of the regular files of a dataset folder of one's own, sorted; hidden entries skipped,
    links followed wherever they lead."""
    folder = Path(folder)
    return sorted(p.relative_to(folder).as_posix() for p in dataset_files(folder, root=Path("/")))


def within(path: Path, root: Path) -> bool:
    """A regular file that, links resolved, lies under `root`: a folder of someone else's data must not make this
    machine read (or publish) one of its own files, a device or a fifo (a link to /dev/zero: red team, session 51)."""
    return path.is_file() and path.resolve().is_relative_to(root.resolve())


def dataset_files(folder: Path, suffixes: tuple[str, ...] | None = None, root: Path | None = None) -> list[Path]:
    """The files of someone else's dataset folder, sorted: hidden entries skipped, each one `within` `root` (by
    default the folder, or for a snapshot of huggingface_hub's cache the repo's folder, whose blobs/ its links name)."""
    folder = Path(folder)
    if root is None:
        root = folder.parent.parent if folder.parent.name == "snapshots" else folder
    return sorted(p for p in folder.rglob("*")
                  if (suffixes is None or p.suffix in suffixes)
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts) and within(p, root))
