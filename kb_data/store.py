"""Versioned dataset stores: the local store (the embedded default) and, with the same interface,
the Hugging Face Hub (`kb_data.hub.HubStore`).

    store = open_store("local")                       # root: $KB_STORE, else <checkout>/.kb/store
    store.publish("kernelbench-v3-problems", "out/problems-v3", tag="v3")
    store.resolve("kernelbench-v3-problems", "v3")    # -> immutable commit id
    ds, rev = store.load("kernelbench-v3-problems", "v0.1", config="all", split="level1")
    store.append_records("kernelbench-v3-runs", records)   # runs: append-only

The local store has the Hub's semantics: per dataset, content-addressed blobs, commits whose id
is a content hash of the file tree, a branch `main` (the newest publish) and tags that are never
moved. A revision is a tag, a branch, a full commit id or a unique prefix of one; anything else is
an error that lists the known revisions, never a fall back to another revision.

Layout under the root:

    <name>/objects/<sha256>         file contents (read-only)
    <name>/commits/<id>.json        {"id", "tree": {path: {"sha256", "size"}}, "message"}
    <name>/refs.json                {"branches": {"main": id}, "tags": {"v3": id, ...}}
    <name>/log.jsonl                one line per ref update (time, ref, old, new, message)
    <name>/snapshots/<id>/          a commit materialised as a dataset folder (read-only files)
    .cache/datasets/                the `datasets` cache of loads from this store
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, NamedTuple

DEFAULT_BRANCH = "main"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")
_TAG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_HEX_RE = re.compile(r"^[0-9a-f]{4,64}$")


class RevisionError(ValueError, LookupError):
    """An unknown dataset or revision; the message lists what is known."""


class PublishError(ValueError):
    """A publish that was refused (e.g. a tag that would move); nothing was changed."""


class Loaded(NamedTuple):
    """What `load` returns: the `datasets` object and the immutable id of the revision it holds."""

    dataset: Any
    revision: str


@dataclass
class PublishResult:
    dataset: str
    commit: str                      # the commit the branch (and tag) point to afterwards
    created: bool                    # a new commit was made
    tag: str | None = None
    tagged: bool = False             # the tag was created by this publish
    added: list[str] = field(default_factory=list)    # files added or changed by the commit
    deleted: list[str] = field(default_factory=list)
    rows_added: int | None = None    # runs: new records
    rows_present: int | None = None  # runs: records whose id was already published
    conflicts: list[str] = field(default_factory=list)
    store: str = ""

    def summary(self) -> str:
        what = "new commit" if self.created else "no change"
        if self.rows_added is not None:
            what += f", {self.rows_added} new record(s), {self.rows_present} already present"
        tag = f" tag {self.tag}" + (" (created)" if self.tagged else " (exists)") if self.tag else ""
        return f"{self.dataset}: {self.commit[:12]} ({what}){tag}"


class ParquetSource(NamedTuple):
    """The Parquet files of one config (and split) at one revision, for pyarrow.dataset."""

    filesystem: Any          # a pyarrow/fsspec filesystem, or None for local paths
    paths: list[str]
    revision: str


def default_store_root() -> Path:
    env = os.environ.get("KB_STORE")
    from .paths import work_dir

    return Path(env).expanduser() if env else work_dir() / "store"


def open_store(kind: str = "local", **kwargs) -> "Store":
    """`open_store("local", root=...)` or `open_store("hub", org=..., token=..., endpoint=...)`."""
    if kind == "local":
        return LocalStore(kwargs.pop("root", None), **kwargs)
    if kind == "hub":
        from .hub import HubStore

        return HubStore(**kwargs)
    raise ValueError(f"unknown store {kind!r}; use 'local' or 'hub'")


class Store:
    """What the CLI and the harness use; `LocalStore` and `kb_data.hub.HubStore` implement it."""

    kind = "?"

    # --- to implement
    def _publish_folder(self, name: str, folder: Path, files: list[str], tag: str | None, message: str) -> PublishResult:
        """Make the dataset's tree exactly `files` of `folder` (one commit), tag it; see `publish`."""
        raise NotImplementedError

    def _commit_files(self, name: str, files: dict[str, Path], message: str, parent: str | None) -> str:
        """Add/replace `files` (repo path -> local file) on top of `parent` (None: a new dataset); one commit."""
        raise NotImplementedError

    def _create_tag(self, name: str, tag: str, commit: str) -> bool:
        """Tag `commit`; False if the tag already names it; PublishError if it names another commit."""
        raise NotImplementedError

    def check_tag(self, name: str, folder: str | Path, tag: str) -> None:
        """PublishError if `tag` exists with content other than `folder` (a dry run of publish's check)."""
        raise NotImplementedError

    def resolve(self, name: str, revision: str = DEFAULT_BRANCH) -> str:
        raise NotImplementedError

    def revisions(self, name: str) -> dict:
        """{"branches": {name: id}, "tags": {name: id}}"""
        raise NotImplementedError

    def read_text(self, name: str, revision: str, path: str) -> str:
        raise NotImplementedError

    def list_files(self, name: str, revision: str = DEFAULT_BRANCH) -> list[str]:
        raise NotImplementedError

    def parquet_source(self, name: str, revision: str = DEFAULT_BRANCH, config: str | None = None,
                       split: str | None = None) -> ParquetSource:
        raise NotImplementedError

    def load(self, name: str, revision: str = DEFAULT_BRANCH, config: str | None = None, split: str | None = None,
             streaming: bool = False) -> Loaded:
        raise NotImplementedError

    def snapshot(self, name: str, revision: str = DEFAULT_BRANCH) -> Path:
        raise NotImplementedError

    def describe(self, name: str) -> str:
        return name

    # --- shared
    def publish(self, name: str, folder: str | Path, tag: str | None = None, message: str | None = None) -> PublishResult:
        """Publish a built dataset folder as one commit on `main`, and tag it.

        The folder is validated first (card configs, Parquet schema, every row); a refused folder
        changes nothing. An existing tag is never moved: the same content under the same tag is a
        no-op, other content is a PublishError. A folder of run records is appended instead
        (`append_records`): only records whose id is not yet published are added.
        """
        from kb_data.builders.common import folder_files, validate_folder
        from kb_data.schema import RunRecord

        folder = Path(folder)
        _check_tag(tag)
        info = validate_folder(folder)
        if info["record_type"] is RunRecord:
            import pyarrow.dataset as pds

            rows = pds.dataset([str(folder / f) for f in info["files"] if f.endswith(".parquet")],
                               format="parquet").to_table().to_pylist()
            return self.append_records(name, rows, message=message, tag=tag)
        return self._publish_folder(name, folder, folder_files(folder), tag,
                                    message or (f"Publish {tag}" if tag else f"Publish {name}"))

    def exists(self, name: str) -> bool:
        try:
            self.resolve(name, DEFAULT_BRANCH)
            return True
        except RevisionError:
            return False

    def read_table(self, name: str, revision: str = DEFAULT_BRANCH, config: str | None = None,
                   split: str | None = None, columns: list[str] | None = None, filter=None):
        """(pyarrow.Table, revision id) of a config/split at a revision, read with pyarrow.dataset."""
        import pyarrow.dataset as pds

        src = self.parquet_source(name, revision, config, split)
        if not src.paths:
            raise RevisionError(f"{self.describe(name)}@{src.revision[:12]}: no data files for config {config!r}")
        ds = pds.dataset(src.paths, format="parquet", filesystem=src.filesystem)
        return ds.to_table(columns=columns, filter=filter), src.revision

    def configs(self, name: str, revision: str = DEFAULT_BRANCH):
        from kb_data.builders.common import card_configs

        return card_configs(self.read_text(name, revision, "README.md"))

    def append_records(self, name: str, records, message: str | None = None, tag: str | None = None) -> PublishResult:
        """Runs: add the records whose `record_id` is not yet published, as one new shard (+ the card).

        Nothing is rewritten: existing shards stay as they are; publishing the same records again
        makes no commit. Records that fail the schema are refused (row and field named) before
        anything is written. With `tag`, the resulting head is tagged (never moving a tag).
        """
        from kb_data.builders.runs import plan_append, prepare_records

        _check_tag(tag)
        records = prepare_records(records)  # validate first: nothing is written for a bad batch
        head = self.resolve(name) if self.exists(name) else None
        if tag is not None and head is not None:
            tagged = self.revisions(name)["tags"].get(tag)
            if tagged is not None and tagged != head:
                raise PublishError(f"{self.describe(name)}: tag {tag!r} exists on {tagged[:12]} and tags are never moved")
        existing: list[dict] = []
        files = self.list_files(name, head) if head is not None else []
        if any(p.startswith("data/") and p.endswith(".parquet") for p in files):
            existing = self._read_runs(name, head)
        with tempfile.TemporaryDirectory(prefix="kb-append-") as tmp:
            plan = plan_append(existing, records, tmp)
            result = PublishResult(name, head or "", False, tag=tag, rows_added=len(plan.new),
                                   rows_present=plan.already_present, conflicts=plan.conflicts, store=self.kind)
            if not plan.empty:
                clash = [p for p in plan.files if p != "README.md" and p in set(files)]
                if clash:
                    raise PublishError(f"{self.describe(name)}: shard {clash[0]} exists already")
                result.commit = self._commit_files(name, dict(plan.files), message or f"Append {len(plan.new)} run record(s)", head)
                result.created = True
                result.added = sorted(plan.files)
        if tag is not None and result.commit:
            result.tagged = self._create_tag(name, tag, result.commit)
        return result


    def _read_runs(self, name: str, head: str) -> list[dict]:
        """Every published record, after checking each shard has the current RunRecord schema.

        A shard written under another schema version cannot be appended to: `datasets` could not
        load old and new shards together. That needs an explicit migration, not a silent append.
        """
        import pyarrow.dataset as pds

        from kb_data.builders.common import schema_diff
        from kb_data.schema import SCHEMA_VERSION, RunRecord

        src = self.parquet_source(name, head)
        ds = pds.dataset(src.paths, format="parquet", filesystem=src.filesystem)
        want = RunRecord.arrow_schema()
        for frag in ds.get_fragments():
            got = frag.physical_schema
            if not got.remove_metadata().equals(want.remove_metadata()):
                raise PublishError(f"{self.describe(name)}@{head[:12]}: shard {frag.path.rsplit('/', 1)[-1]} has another "
                                   f"schema than RunRecord {SCHEMA_VERSION} ({schema_diff(got, want)}); appending would "
                                   "make the dataset unloadable, so the records were not published (migrate the dataset first)")
        return ds.to_table().to_pylist()


def _check_tag(tag: str | None) -> None:
    if tag is None:
        return
    if not _TAG_RE.match(tag):
        raise PublishError(f"invalid tag {tag!r} (letters, digits, '.', '_', '-')")
    if tag == DEFAULT_BRANCH:
        raise PublishError(f"{tag!r} is the branch; choose another tag name")


# ---------------------------------------------------------------------------- the local store

def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def tree_id(tree: dict[str, dict]) -> str:
    """The commit id of a file tree: sha256 of its canonical JSON (path -> sha256), 40 hex digits."""
    return hashlib.sha256(_canonical({p: t["sha256"] for p, t in sorted(tree.items())})).hexdigest()[:40]


# The mode open() would give a new file: mkstemp makes its temp files 0600, which would leave built datasets,
# shipped data and a shared store readable by their owner only.
_UMASK = os.umask(0o022)
os.umask(_UMASK)
FILE_MODE = 0o666 & ~_UMASK


@contextlib.contextmanager
def atomic_target(path: Path, mode: int = FILE_MODE) -> Iterator[Path]:
    """A temp file beside `path` to write to: when the block ends it gets `mode` and replaces `path` (readers see
    the old file or the new one, never a part); when the block raises it is removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Write `data` to `path` through a synced temp file (atomic_target)."""
    with atomic_target(path, mode) as tmp, open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


@contextlib.contextmanager
def _locked(path: Path, timeout: float = 60.0) -> Iterator[None]:
    """An exclusive lock on `path` (fcntl.flock; a lock file elsewhere)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: O_EXCL lock file
        deadline = time.monotonic() + timeout
        while True:
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                break
            except FileExistsError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{path}: locked by another process")
                time.sleep(0.05)
        try:
            yield
        finally:
            os.close(fd)
            os.unlink(path)
        return
    with open(path, "a+") as f:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{path}: locked by another process for {timeout:.0f} s")
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


class LocalStore(Store):
    kind = "local"

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root).expanduser() if root is not None else default_store_root()

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def describe(self, name: str) -> str:
        return f"{name} (local store {self.root})"

    # --- paths
    def _dir(self, name: str) -> Path:
        if not _NAME_RE.match(name) or ".." in name:
            raise ValueError(f"invalid dataset name {name!r} (letters, digits, '.', '_', '-'; optionally org/name)")
        return self.root / name

    def datasets(self) -> list[str]:
        if not self.root.is_dir():
            return []
        out = []
        for refs in self.root.glob("*/refs.json"):
            out.append(refs.parent.name)
        for refs in self.root.glob("*/*/refs.json"):
            out.append(f"{refs.parent.parent.name}/{refs.parent.name}")
        return sorted(out)

    def _refs(self, name: str) -> dict:
        path = self._dir(name) / "refs.json"
        if not path.is_file():
            known = self.datasets()
            raise RevisionError(f"no dataset {name!r} in the local store {self.root}"
                                + (f"; it holds: {', '.join(known)}" if known else " (it is empty; run `kb build`)"))
        return json.loads(path.read_text(encoding="utf-8"))

    def _commit(self, name: str, commit: str) -> dict:
        return json.loads((self._dir(name) / "commits" / f"{commit}.json").read_text(encoding="utf-8"))

    # --- revisions
    def revisions(self, name: str) -> dict:
        refs = self._refs(name)
        return {"branches": dict(refs.get("branches", {})), "tags": dict(refs.get("tags", {}))}

    def resolve(self, name: str, revision: str = DEFAULT_BRANCH) -> str:
        refs = self._refs(name)
        revision = revision or DEFAULT_BRANCH
        for kind in ("branches", "tags"):
            if revision in refs.get(kind, {}):
                return refs[kind][revision]
        if _HEX_RE.match(revision):
            ids = [p.stem for p in (self._dir(name) / "commits").glob("*.json")]
            hits = [c for c in ids if c.startswith(revision)]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                raise RevisionError(f"{name}: revision {revision!r} is ambiguous: {', '.join(sorted(hits))}")
        raise RevisionError(f"{name}: unknown revision {revision!r} in the local store {self.root}; "
                            f"known: {_known(refs)}")

    # --- publishing
    def _publish_folder(self, name: str, folder: Path, files: list[str], tag: str | None, message: str) -> PublishResult:
        return self._publish_tree(name, {rel: folder / rel for rel in files}, tag, message)

    def _publish_tree(self, name: str, files: dict[str, Path], tag: str | None, message: str,
                      base: dict | None = None, expect_main: str | None | bool = False) -> PublishResult:
        """Write blobs and the commit object, then move refs under the lock (main; tag if given).

        `expect_main` (a commit id or None for "no dataset yet"): refuse if main is elsewhere.
        """
        ddir = self._dir(name)
        tree = dict(base or {})
        for rel, src in sorted(files.items()):
            tree[rel] = self._put_blob(name, src)
        commit = tree_id(tree)
        cpath = ddir / "commits" / f"{commit}.json"
        if not cpath.exists():
            write_bytes_atomic(cpath, json.dumps({"id": commit, "tree": dict(sorted(tree.items())), "message": message},
                                            indent=1, sort_keys=True).encode())
        with _locked(ddir / ".lock"):
            refs = self._read_refs(name)
            main = refs["branches"].get(DEFAULT_BRANCH)
            if expect_main is not False and main != expect_main:
                raise PublishError(f"{name}: main moved from {str(expect_main)[:12]} to {str(main)[:12]} "
                                   "during the publish; nothing was changed, retry")
            result = PublishResult(name, commit, False, tag=tag, store=self.kind)
            if tag is not None and tag in refs["tags"]:
                if refs["tags"][tag] != commit:
                    raise PublishError(f"{name}: tag {tag!r} exists on {refs['tags'][tag][:12]} and tags are never "
                                       f"moved; this content is {commit[:12]}. Publish it under a new tag.")
                return result  # the same content under the same tag: nothing to do
            prev = self._commit(name, main)["tree"] if main else {}
            result.added = sorted(p for p in tree if prev.get(p, {}).get("sha256") != tree[p]["sha256"])
            result.deleted = sorted(p for p in prev if p not in tree)
            updates = []
            if main != commit:
                refs["branches"][DEFAULT_BRANCH] = commit
                result.created = True
                updates.append((f"branches/{DEFAULT_BRANCH}", main, commit))
            if tag is not None:
                refs["tags"][tag] = commit
                result.tagged = True
                updates.append((f"tags/{tag}", None, commit))
            self._write_refs(name, refs, updates, message)
            return result

    def check_tag(self, name: str, folder: str | Path, tag: str) -> None:
        from kb_data.builders.common import folder_files, sha256_file

        if not (self._dir(name) / "refs.json").exists():
            return
        old = self._read_refs(name)["tags"].get(tag)
        if old is None:
            return
        folder = Path(folder)
        commit = tree_id({rel: {"sha256": sha256_file(folder / rel)} for rel in folder_files(folder)})
        if commit != old:
            raise PublishError(f"{name}: tag {tag!r} exists on {old[:12]} with other content ({commit[:12]}) and tags "
                               "are never moved. Publish under a new tag, or use another store root (KB_STORE).")

    def _read_refs(self, name: str) -> dict:
        path = self._dir(name) / "refs.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"branches": {}, "tags": {}}

    def _write_refs(self, name: str, refs: dict, updates: list, message: str) -> None:
        """Call with the lock held."""
        if not updates:
            return
        ddir = self._dir(name)
        write_bytes_atomic(ddir / "refs.json", json.dumps(refs, indent=1, sort_keys=True).encode())
        with open(ddir / "log.jsonl", "a", encoding="utf-8") as f:
            for ref, old, new in updates:
                f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "ref": ref,
                                    "old": old, "new": new, "message": message}) + "\n")

    def _commit_files(self, name: str, files: dict[str, Path], message: str, parent: str | None) -> str:
        base = self._commit(name, parent)["tree"] if parent else {}
        return self._publish_tree(name, files, None, message, base=base, expect_main=parent).commit

    def _create_tag(self, name: str, tag: str, commit: str) -> bool:
        with _locked(self._dir(name) / ".lock"):
            refs = self._read_refs(name)
            old = refs["tags"].get(tag)
            if old == commit:
                return False
            if old is not None:
                raise PublishError(f"{name}: tag {tag!r} exists on {old[:12]} and tags are never moved")
            refs["tags"][tag] = commit
            self._write_refs(name, refs, [(f"tags/{tag}", None, commit)], f"Tag {tag}")
            return True

    def _put_blob(self, name: str, src: Path) -> dict:
        data = Path(src).read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        dst = self._dir(name) / "objects" / sha
        if not dst.exists():
            write_bytes_atomic(dst, data, mode=0o444)
        return {"sha256": sha, "size": len(data)}

    # --- reading
    def _tree(self, name: str, revision: str) -> tuple[str, dict]:
        commit = self.resolve(name, revision)
        return commit, self._commit(name, commit)["tree"]

    def list_files(self, name: str, revision: str = DEFAULT_BRANCH) -> list[str]:
        return sorted(self._tree(name, revision)[1])

    def read_text(self, name: str, revision: str, path: str) -> str:
        commit, tree = self._tree(name, revision)
        if path not in tree:
            raise FileNotFoundError(f"{name}@{commit[:12]}: no file {path}")
        return (self._dir(name) / "objects" / tree[path]["sha256"]).read_text(encoding="utf-8")

    def snapshot(self, name: str, revision: str = DEFAULT_BRANCH) -> Path:
        """The revision as a dataset folder under the store (files read-only); made once per commit."""
        commit, tree = self._tree(name, revision)
        snaps = self._dir(name) / "snapshots"
        final = snaps / commit
        if final.is_dir():
            return final
        snaps.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=snaps, prefix=f".{commit}."))
        try:
            for rel, info in sorted(tree.items()):
                dst = tmp / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                blob = self._dir(name) / "objects" / info["sha256"]
                try:
                    os.link(blob, dst)  # blobs are read-only and never rewritten: sharing them is safe
                except OSError:
                    shutil.copyfile(blob, dst)
                    os.chmod(dst, 0o444)
            try:
                os.replace(tmp, final)
            except OSError:
                if not final.is_dir():  # another process made it first otherwise
                    raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return final

    def parquet_source(self, name: str, revision: str = DEFAULT_BRANCH, config: str | None = None,
                       split: str | None = None) -> ParquetSource:
        """The config's Parquet files at the revision: the content-addressed blobs themselves (no snapshot)."""
        from kb_data.builders.common import card_configs, match_files, pick_config

        commit, tree = self._tree(name, revision)
        objects = self._dir(name) / "objects"
        if "README.md" not in tree:
            raise RevisionError(f"{name}@{commit[:12]}: no README.md (no dataset card)")
        spec = pick_config(card_configs((objects / tree["README.md"]["sha256"]).read_text(encoding="utf-8")), config)
        if split is not None and split not in spec.splits:
            raise RevisionError(f"{name}@{commit[:12]}: config {spec.name!r} has no split {split!r}; "
                                f"it has {', '.join(spec.splits)}")
        patterns = spec.splits[split] if split else [p for ps in spec.splits.values() for p in ps]
        return ParquetSource(None, [str(objects / tree[f]["sha256"]) for f in match_files(patterns, tree)], commit)

    def load(self, name: str, revision: str = DEFAULT_BRANCH, config: str | None = None, split: str | None = None,
             streaming: bool = False) -> Loaded:
        """`datasets.load_dataset(<snapshot folder>, config, split=...)` at exactly that revision."""
        import datasets

        commit = self.resolve(name, revision)
        folder = self.snapshot(name, commit)
        ds = datasets.load_dataset(str(folder), config, split=split, streaming=streaming,
                                   cache_dir=str(self.root / ".cache" / "datasets"))
        return Loaded(ds, commit)


def _known(refs: dict) -> str:
    tags = sorted(refs.get("tags", {}))
    branches = sorted(refs.get("branches", {}))
    parts = []
    if branches:
        parts.append("branches " + ", ".join(branches))
    if tags:
        parts.append("tags " + ", ".join(tags))
    return "; ".join(parts) + " (or a commit id)" if parts else "nothing (no publish yet)"
