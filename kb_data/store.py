"""Versioned dataset stores: the interface, and the local store (the embedded default).

    store = open_store("local")                       # kb_data.stores; root: $KB_STORE, else <checkout>/.kb/store
    store.publish("kernelbench-v3-problems", "out/problems-v3", tag="v3")
    store.resolve("kernelbench-v3-problems", "v3")    # -> immutable commit id
    ds, rev = store.load("kernelbench-v3-problems", "v0.1", config="all", split="level1")

A store takes a ready commit (`CommitPlan`: files, parent, tag) and knows nothing of what the
files hold: validating a folder and planning an append of run records is the builders' work.
The rules every store keeps, implemented once here in `Store.commit`:
- tags are never moved: the same content under an existing tag is a no-op, other content is a
  PublishError;
- `main` serves the newest version: a commit tagged with a version (`v0.1`, `v3`, ...) older than
  a version tag the dataset already has is tagged but does not move `main`.

The local store has the Hub's semantics: per dataset, content-addressed blobs, commits whose id
is a content hash of the file tree, branches (`main`) and tags. A revision is a tag, a branch, a
full commit id or a unique prefix of one; anything else is an error that lists the known
revisions, never a fall back to another revision. `kb serve` (kb_data.serve) serves it over the
Hub's HTTP API. Layout under the root:

    <name>/objects/<sha256>         file contents (read-only)
    <name>/commits/<id>.json        {"id", "tree": {path: {"sha256", "size"}}, "message"}
    <name>/refs.json                {"branches": {"main": id}, "tags": {"v3": id, ...}}
    <name>/log.jsonl                one line per ref update (time, ref, old, new, message)
    <name>/snapshots/<id>/          a commit materialised as a dataset folder (read-only files)
    .cache/datasets/                the `datasets` cache of loads from this store
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from .folders import RevisionError, card_configs, config_files, folder_files, sha256_file
from .io import FILE_MODE, append_jsonl, file_lock, write_bytes_atomic  # noqa: F401  (FILE_MODE: the stores' file mode)

DEFAULT_BRANCH = "main"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")
_TAG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_HEX_RE = re.compile(r"^[0-9a-f]{4,64}$")
_HEX_NAME_RE = re.compile(r"^[0-9a-f]{7,64}$")  # a ref named so would read as a commit id
_VERSION_RE = re.compile(r"^v?(\d+(?:\.\d+)*)$")

__all__ = ["DEFAULT_BRANCH", "CommitPlan", "LocalStore", "Loaded", "ParquetSource", "PublishError", "PublishResult",
           "RevisionError", "Store", "default_store_root", "tree_id"]


class IntegrityError(RuntimeError):
    """A stored blob whose bytes no longer hash to the id its commit records: nothing is read from it."""


class PublishError(ValueError):
    """A publish that was refused (e.g. a tag that would move); nothing was changed."""


class Loaded(NamedTuple):
    """What `load` returns: the `datasets` object and the immutable id of the revision it holds."""

    dataset: Any
    revision: str


@dataclass
class CommitPlan:
    """One commit, ready to make: `files` (repo path -> local file) replace the parent's tree (`replace=True`: the
    tree becomes exactly `files`) or are added on top of it; `parent` is the head of `main` the plan was made
    against (None: a new dataset), and the commit is refused if `main` moved since."""

    files: dict[str, Path]
    message: str
    parent: str | None = None
    replace: bool = True
    tag: str | None = None
    folder: Path | None = None       # the folder `files` come from, when the plan is a whole folder

    @classmethod
    def of_folder(cls, folder: str | Path, message: str, tag: str | None = None) -> "CommitPlan":
        folder = Path(folder)
        return cls({rel: folder / rel for rel in folder_files(folder)}, message, tag=tag, folder=folder)


@dataclass
class PublishResult:
    dataset: str
    commit: str                      # the commit the tag (and main, unless `main_moved` is False) points to
    created: bool                    # a new commit was made
    tag: str | None = None
    tagged: bool = False             # the tag was created by this publish
    main_moved: bool = False
    added: list[str] = field(default_factory=list)    # files added or changed by the commit
    deleted: list[str] = field(default_factory=list)
    rows_added: int | None = None    # runs: new records
    rows_present: int | None = None  # runs: records whose id was already published
    conflicts: list[str] = field(default_factory=list)
    store: str = ""

    def summary(self) -> str:
        what = "new commit" if self.created else "no change"
        if self.created and not self.main_moved:
            what += ", main stays on the newer version"
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
    from .paths import work_dir

    env = os.environ.get("KB_STORE")
    return Path(env).expanduser() if env else work_dir() / "store"


def check_tag_name(tag: str | None) -> None:
    if tag is None:
        return
    if not _TAG_RE.match(tag):
        raise PublishError(f"invalid tag {tag!r} (letters, digits, '.', '_', '-')")
    if tag == DEFAULT_BRANCH:
        raise PublishError(f"{tag!r} is the branch; choose another tag name")


def check_ref_name(kind: str, ref: str, refs: dict) -> None:
    """A new branch or tag: a tag's characters, never the name of a ref of the other kind (a branch named like a tag
    would take over what the tag resolves to) nor hex digits (a commit id's prefix)."""
    what, other, other_kind = ("tag", "branch", "branches") if kind == "tags" else ("branch", "tag", "tags")
    if kind == "tags":
        check_tag_name(ref)
    elif not _TAG_RE.match(ref):
        raise PublishError(f"invalid branch {ref!r} (letters, digits, '.', '_', '-')")
    if _HEX_NAME_RE.match(ref):
        raise PublishError(f"invalid {what} {ref!r}: hex digits would read as a commit id")
    if ref in refs[other_kind]:
        raise PublishError(f"{ref!r} is a {other}; a {what} cannot share its name")


def check_tree_path(path: str) -> None:
    """A file of a commit: a relative path of plain names (it becomes a file under a snapshot folder)."""
    parts = path.split("/")
    if not path or "\\" in path or "\0" in path or any(p in ("", ".", "..") for p in parts):
        raise PublishError(f"invalid file path {path!r} in a commit (relative, '/'-separated names, no '..')")


def version_key(tag: str) -> tuple[int, ...] | None:
    """`v0.1` -> (0, 1), `v3` -> (3,); None for a tag that is not a version."""
    m = _VERSION_RE.match(tag)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def moves_main(tag: str | None, tags: dict[str, str]) -> bool:
    """Whether a commit tagged `tag` becomes `main`: not when the dataset has a newer version tag."""
    key = version_key(tag) if tag else None
    return key is None or not any((k := version_key(t)) is not None and k > key for t in tags if t != tag)


class Store:
    """What the CLI and the harness use; `LocalStore` and `kb_data.hub.HubStore` implement it."""

    kind = "?"

    # --- to implement
    def revisions(self, name: str) -> dict:
        """{"branches": {name: id}, "tags": {name: id}}; RevisionError for an unknown dataset."""
        raise NotImplementedError

    def resolve(self, name: str, revision: str = DEFAULT_BRANCH) -> str:
        raise NotImplementedError

    def diff(self, name: str, commit: str | None, files: dict[str, Path]) -> tuple[list[str], list[str]]:
        """(paths of `files` that differ from `commit`'s tree, paths of the tree that `files` lacks)."""
        raise NotImplementedError

    def _write_commit(self, name: str, plan: CommitPlan, on_main: bool) -> str:
        """Make the commit of `plan` (checked against `plan.parent`); move `main` to it if `on_main`; its id."""
        raise NotImplementedError

    def _set_tag(self, name: str, tag: str, commit: str) -> None:
        """Create the tag (it does not exist yet)."""
        raise NotImplementedError

    def _ensure(self, name: str) -> None:
        """Create the dataset if it does not exist (before its first commit)."""

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

    def snapshot(self, name: str, revision: str = DEFAULT_BRANCH, patterns: list[str] | None = None,
                 max_bytes: int | None = None) -> Path:
        """The revision as a dataset folder. `patterns` (fnmatch) and `max_bytes` bound what a store that downloads
        (the Hub) fetches; a local store's snapshot is all of its files, already on this disk."""
        raise NotImplementedError

    def describe(self, name: str) -> str:
        return name

    # --- shared: the rules every store keeps
    def commit(self, name: str, plan: CommitPlan) -> PublishResult:
        """Make `plan`'s commit (none when nothing changes), tag it, and move `main` unless a newer version is
        tagged. An existing tag is never moved (see the module docstring)."""
        check_tag_name(plan.tag)
        self._ensure(name)
        refs = self.revisions(name) if self.exists(name, any_ref=True) else {"branches": {}, "tags": {}}
        head = refs["branches"].get(DEFAULT_BRANCH)
        if plan.parent is not None and plan.parent != head:
            raise PublishError(f"{self.describe(name)}: main moved from {plan.parent[:12]} to {str(head)[:12]} "
                               "while the commit was planned; nothing was changed, retry")
        tagged = refs["tags"].get(plan.tag) if plan.tag else None
        result = PublishResult(name, "", False, tag=plan.tag, store=self.kind)
        if tagged is not None:
            changed, deleted = self.diff(name, tagged, plan.files)
            if not plan.replace:  # added on top of the head: the same content only if the tag is on the head
                deleted = [] if tagged == head else [f"(tag not on main {str(head)[:12]})"]
            if changed or deleted:
                raise PublishError(f"{self.describe(name)}: tag {plan.tag!r} exists on {tagged[:12]} with other content "
                                   f"({', '.join((changed + deleted)[:3])} differ) and tags are never moved. "
                                   "Publish it under a new tag.")
            result.commit = tagged
            return result  # the same content under the same tag: nothing to do
        on_main = moves_main(plan.tag, refs["tags"])
        changed, deleted = self.diff(name, head, plan.files) if head else (sorted(plan.files), [])
        if not plan.replace:
            deleted = []
        if changed or deleted or head is None:
            plan = CommitPlan(plan.files, plan.message, head, plan.replace, plan.tag, plan.folder)
            result.commit = self._write_commit(name, plan, on_main)
            result.created, result.main_moved = True, on_main
            result.added, result.deleted = changed, deleted
        else:
            result.commit = head
        if plan.tag is not None:
            self._set_tag(name, plan.tag, result.commit)
            result.tagged = True
        return result

    def publish(self, name: str, folder: str | Path, tag: str | None = None, message: str | None = None) -> PublishResult:
        """Publish a built dataset folder (validated by its builder) as one commit whose tree is exactly the folder."""
        return self.commit(name, CommitPlan.of_folder(folder, message or (f"Publish {tag}" if tag else f"Publish {name}"),
                                                      tag))

    def check_tag(self, name: str, folder: str | Path, tag: str) -> None:
        """PublishError if `tag` exists with content other than `folder` (a dry run of the tag rule)."""
        if not self.exists(name, any_ref=True):
            return
        tagged = self.revisions(name)["tags"].get(tag)
        if tagged is None:
            return
        folder = Path(folder)
        changed, deleted = self.diff(name, tagged, {rel: folder / rel for rel in folder_files(folder)})
        if changed or deleted:
            raise PublishError(f"{self.describe(name)}: tag {tag!r} exists on {tagged[:12]} with other content "
                               f"({', '.join((changed + deleted)[:3])} differ) and tags are never moved. "
                               "Publish under a new tag, or use another store.")

    def exists(self, name: str, any_ref: bool = False) -> bool:
        """The dataset has a `main` (with `any_ref`: the dataset exists at all)."""
        try:
            revs = self.revisions(name)
        except RevisionError:
            return False
        return any_ref or DEFAULT_BRANCH in revs["branches"]

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
        return card_configs(self.read_text(name, revision, "README.md"))


# ---------------------------------------------------------------------------- the local store

def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def tree_id(tree: dict[str, dict]) -> str:
    """The commit id of a file tree: sha256 of its canonical JSON (path -> sha256), 40 hex digits."""
    return hashlib.sha256(_canonical({p: t["sha256"] for p, t in sorted(tree.items())})).hexdigest()[:40]


class LocalStore(Store):
    kind = "local"

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root).expanduser() if root is not None else default_store_root()
        self._verified: set = set()

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def describe(self, name: str) -> str:
        return f"{name} (local store {self.root})"

    # --- paths
    def _dir(self, name: str) -> Path:
        if not _NAME_RE.match(name) or ".." in name or (
                "/" in name and (self.root / name.split("/")[0] / "refs.json").exists()):
            raise ValueError(f"invalid dataset name {name!r} (letters, digits, '.', '_', '-'; optionally org/name, "
                             "where org is not a dataset)")
        return self.root / name

    def datasets(self) -> list[str]:
        if not self.root.is_dir():
            return []
        out = [refs.parent.name for refs in self.root.glob("*/refs.json")]
        out += [f"{refs.parent.parent.name}/{refs.parent.name}" for refs in self.root.glob("*/*/refs.json")]
        return sorted(out)

    def _refs(self, name: str) -> dict:
        path = self._dir(name) / "refs.json"
        if not path.is_file():
            known = self.datasets()
            raise RevisionError(f"no dataset {name!r} in the local store {self.root}"
                                + (f"; it holds: {', '.join(known)}" if known else " (it is empty; run `kb build`)"))
        refs = json.loads(path.read_text(encoding="utf-8"))
        return {"branches": dict(refs.get("branches", {})), "tags": dict(refs.get("tags", {}))}

    def _commit(self, name: str, commit: str) -> dict:
        return json.loads((self._dir(name) / "commits" / f"{commit}.json").read_text(encoding="utf-8"))

    # --- revisions
    def revisions(self, name: str) -> dict:
        return self._refs(name)

    def resolve(self, name: str, revision: str = DEFAULT_BRANCH) -> str:
        refs = self._refs(name)
        revision = revision or DEFAULT_BRANCH
        for kind, prefix in (("branches", "refs/heads/"), ("tags", "refs/tags/")):
            ref = revision[len(prefix):] if revision.startswith(prefix) else revision
            if ref in refs[kind]:
                return refs[kind][ref]
        if _HEX_RE.match(revision):
            hits = [p.stem for p in (self._dir(name) / "commits").glob(f"{revision}*.json")]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                raise RevisionError(f"{name}: revision {revision!r} is ambiguous: {', '.join(sorted(hits))}")
        raise RevisionError(f"{name}: unknown revision {revision!r} in the local store {self.root}; "
                            f"known: {_known(refs)}")

    # --- writing
    def diff(self, name: str, commit: str | None, files: dict[str, Path]) -> tuple[list[str], list[str]]:
        tree = self._commit(name, commit)["tree"] if commit else {}
        changed = [rel for rel, p in sorted(files.items()) if tree.get(rel, {}).get("sha256") != sha256_file(p)]
        return changed, sorted(p for p in tree if p not in files)

    def _write_commit(self, name: str, plan: CommitPlan, on_main: bool) -> str:
        base = {} if plan.replace or plan.parent is None else self._commit(name, plan.parent)["tree"]
        tree = dict(base)
        for rel, src in sorted(plan.files.items()):
            tree[rel] = self.put_blob(name, Path(src).read_bytes())
        return self.commit_tree(name, tree, plan.message, DEFAULT_BRANCH if on_main else None, plan.parent)

    def commit_tree(self, name: str, tree: dict[str, dict], message: str, branch: str | None,
                    expect: str | None | bool = False) -> str:
        """Store the commit of `tree` (path -> {"sha256", "size"} of stored blobs); move `branch` to it if given,
        refusing when the branch is not at `expect` (a commit id, or None for "no branch yet")."""
        ddir = self._dir(name)
        for path in tree:
            check_tree_path(path)
        commit = tree_id(tree)
        cpath = ddir / "commits" / f"{commit}.json"
        if not cpath.exists():
            write_bytes_atomic(cpath, json.dumps({"id": commit, "tree": dict(sorted(tree.items())), "message": message},
                                                 indent=1, sort_keys=True).encode())
        if branch is not None:
            with self._lock(name):
                refs = self._read_refs(name)
                old = refs["branches"].get(branch)
                if expect is not False and old != expect:
                    raise PublishError(f"{name}: {branch} moved from {str(expect)[:12]} to {str(old)[:12]} "
                                       "during the publish; nothing was changed, retry")
                if old is None:
                    check_ref_name("branches", branch, refs)
                if old != commit:
                    refs["branches"][branch] = commit
                    self._write_refs(name, refs, [(f"branches/{branch}", old, commit)], message)
        return commit

    def put_blob(self, name: str, data: bytes) -> dict:
        sha = hashlib.sha256(data).hexdigest()
        dst = self._dir(name) / "objects" / sha
        if not dst.exists():
            write_bytes_atomic(dst, data, mode=0o444)
        return {"sha256": sha, "size": len(data)}

    def _set_tag(self, name: str, tag: str, commit: str) -> None:
        self.set_ref(name, "tags", tag, commit, create_only=True)

    def set_ref(self, name: str, kind: str, ref: str, commit: str | None, create_only: bool = False) -> None:
        """Create, move or (commit None) delete a branch or tag under the lock; `create_only`: refuse an existing ref
        (the race where another process created the same tag first)."""
        with self._lock(name):
            refs = self._read_refs(name)
            old = refs[kind].get(ref)
            if old is None and commit is not None:
                check_ref_name(kind, ref, refs)
            if create_only and old is not None:
                if old == commit:
                    return
                raise PublishError(f"{name}: {kind[:-1] if kind == 'tags' else 'branch'} {ref!r} exists on {old[:12]}"
                                   + (" and tags are never moved" if kind == "tags" else ""))
            if commit is None:
                refs[kind].pop(ref, None)
            else:
                refs[kind][ref] = commit
            self._write_refs(name, refs, [(f"{kind}/{ref}", old, commit)], f"{kind} {ref}")

    def create(self, name: str) -> None:
        """An empty dataset (no revision yet), as a Hub repo is right after its creation."""
        with self._lock(name):
            if not (self._dir(name) / "refs.json").exists():
                self._write_refs(name, {"branches": {}, "tags": {}}, [], "create")

    def _lock(self, name: str):
        return file_lock(self._dir(name) / ".lock")

    def _read_refs(self, name: str) -> dict:
        path = self._dir(name) / "refs.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"branches": {}, "tags": {}}

    def _write_refs(self, name: str, refs: dict, updates: list, message: str) -> None:
        """Call with the lock held."""
        ddir = self._dir(name)
        write_bytes_atomic(ddir / "refs.json", json.dumps(refs, indent=1, sort_keys=True).encode())
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        append_jsonl(ddir / "log.jsonl", [{"time": now, "ref": ref, "old": old, "new": new, "message": message}
                                          for ref, old, new in updates])

    # --- reading
    def tree(self, name: str, revision: str) -> tuple[str, dict]:
        """(commit id, path -> {"sha256", "size"}) of a revision."""
        commit = self.resolve(name, revision)
        return commit, self._commit(name, commit)["tree"]

    def blob_path(self, name: str, sha256: str) -> Path:
        return self._dir(name) / "objects" / sha256

    def verified_blob(self, name: str, info: dict) -> Path:
        """The blob of a tree entry, after checking its size and sha256 (once per process and file state)."""
        path = self.blob_path(name, info["sha256"])
        try:
            st = path.stat()
        except FileNotFoundError:
            raise IntegrityError(f"{name}: blob {info['sha256'][:12]} is missing from the store") from None
        key = (str(path), st.st_size, st.st_mtime_ns, st.st_ino)
        if key not in self._verified:
            if st.st_size != info.get("size", st.st_size) or sha256_file(path) != info["sha256"]:
                raise IntegrityError(f"{name}: blob {info['sha256'][:12]} does not match its recorded sha256 "
                                     f"(the store at {self.root} was modified outside kb-data); nothing was read")
            self._verified.add(key)
        return path

    def list_files(self, name: str, revision: str = DEFAULT_BRANCH) -> list[str]:
        return sorted(self.tree(name, revision)[1])

    def read_text(self, name: str, revision: str, path: str) -> str:
        commit, tree = self.tree(name, revision)
        if path not in tree:
            raise FileNotFoundError(f"{name}@{commit[:12]}: no file {path}")
        return self.verified_blob(name, tree[path]).read_text(encoding="utf-8")

    def snapshot(self, name: str, revision: str = DEFAULT_BRANCH, patterns: list[str] | None = None,
                 max_bytes: int | None = None) -> Path:
        """The revision as a dataset folder under the store (files read-only); made once per commit."""
        commit, tree = self.tree(name, revision)
        snaps = self._dir(name) / "snapshots"
        final = snaps / commit
        if final.is_dir():
            for rel, info in tree.items():  # a snapshot shares its files with the blobs: verify them on every use
                self.verified_blob(name, info)
            return final
        snaps.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=snaps, prefix=f".{commit}."))
        try:
            for rel, info in sorted(tree.items()):
                check_tree_path(rel)  # a commit stored before paths were checked
                dst = tmp / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                blob = self.verified_blob(name, info)
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
        commit, tree = self.tree(name, revision)
        if "README.md" not in tree:
            raise RevisionError(f"{name}@{commit[:12]}: no README.md (no dataset card)")
        readme = self.verified_blob(name, tree["README.md"]).read_text(encoding="utf-8")
        files = config_files(readme, tree, config, split, f"{name}@{commit[:12]}")
        return ParquetSource(None, [str(self.verified_blob(name, tree[f])) for f in files], commit)

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
