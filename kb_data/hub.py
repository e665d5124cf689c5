"""The Hugging Face Hub as a `kb_data.store.Store`: same operations, same semantics as the local store.

    store = open_store("hub", org="my-org")          # token: HF_TOKEN / `hf auth login`; endpoint: HF_ENDPOINT
    store.publish("kernelbench-v3-problems", "out/problems-v3", tag="v3")
    ds, sha = store.load("kernelbench-v3-problems", "v0.1")

- publish: creates the dataset repo if missing, uploads the folder as ONE commit on `main` (files
  that changed are added, files the folder no longer has are deleted), then creates the tag. An
  existing tag is never moved: same content -> no-op, other content -> PublishError.
- resolve: tag/branch -> commit SHA via `repo_info(revision=...)`; an unknown revision is a
  RevisionError listing the repo's branches and tags.
- load: `datasets.load_dataset(repo_id, revision=<sha>)`, the SHA and never the tag, so an offline
  cache cannot substitute another revision.
- runs: `append_records` (shared with the local store) reads the record ids already published and
  commits only a new shard (plus the re-rendered card); nothing existing is rewritten.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .store import DEFAULT_BRANCH, Loaded, ParquetSource, PublishError, PublishResult, RevisionError, Store

REPO_TYPE = "dataset"
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
_HEX_RE = re.compile(r"^[0-9a-f]{4,39}$")


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class HubStore(Store):
    kind = "hub"

    def __init__(self, org: str | None = None, token: str | None = None, endpoint: str | None = None,
                 private: bool = False):
        from huggingface_hub import HfApi

        self.api = HfApi(endpoint=endpoint, token=token)
        self.org = org
        self.token = token
        self.private = private
        self._namespace: str | None = None

    def __repr__(self) -> str:
        return f"HubStore(endpoint={self.api.endpoint!r}, org={self.org!r})"

    def describe(self, name: str) -> str:
        return f"{self.repo_id(name)} (Hub {self.api.endpoint})"

    def repo_id(self, name: str) -> str:
        """`org/name` as given, else `<org>/<name>` (org: the store's, else the token's user)."""
        if "/" in name:
            return name
        if self.org is None and self._namespace is None:
            self._namespace = self.api.whoami()["name"]
        return f"{self.org or self._namespace}/{name}"

    # --- revisions
    def revisions(self, name: str) -> dict:
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            refs = self.api.list_repo_refs(self.repo_id(name), repo_type=REPO_TYPE)
        except RepositoryNotFoundError:
            raise RevisionError(f"no dataset repo {self.describe(name)}") from None
        return {"branches": {b.name: b.target_commit for b in refs.branches},
                "tags": {t.name: t.target_commit for t in refs.tags}}

    def resolve(self, name: str, revision: str = DEFAULT_BRANCH) -> str:
        from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

        repo = self.repo_id(name)
        revision = revision or DEFAULT_BRANCH
        try:
            sha = self.api.repo_info(repo, repo_type=REPO_TYPE, revision=revision).sha
        except RepositoryNotFoundError:
            raise RevisionError(f"no dataset repo {self.describe(name)}") from None
        except RevisionNotFoundError:
            sha = None
        if sha and (not _SHA_RE.match(revision) or sha == revision):
            return sha
        refs = self.revisions(name)
        if _HEX_RE.match(revision) or _SHA_RE.match(revision):
            hits = set()
            for head in {*refs["branches"].values(), *refs["tags"].values()}:
                for c in self.api.list_repo_commits(repo, repo_type=REPO_TYPE, revision=head):
                    if c.commit_id.startswith(revision):
                        hits.add(c.commit_id)
            if len(hits) == 1:
                return hits.pop()
            if len(hits) > 1:
                raise RevisionError(f"{repo}: revision {revision!r} is ambiguous: {', '.join(sorted(hits))}")
        known = "; ".join(f"{k} " + ", ".join(sorted(v)) for k, v in refs.items() if v) or "nothing"
        raise RevisionError(f"{repo}: unknown revision {revision!r} on {self.api.endpoint}; known: {known} "
                            "(or a commit SHA)")

    # --- publishing
    def _remote_tree(self, repo: str, commit: str) -> dict:
        from huggingface_hub.hf_api import RepoFile

        return {f.path: f for f in self.api.list_repo_tree(repo, recursive=True, revision=commit, repo_type=REPO_TYPE)
                if isinstance(f, RepoFile)}

    @staticmethod
    def _same(remote, local: Path) -> bool:
        if remote is None:
            return False
        data = local.read_bytes()
        if getattr(remote, "lfs", None):
            lfs = remote.lfs
            sha = lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)
            return sha == hashlib.sha256(data).hexdigest()
        return remote.blob_id == git_blob_sha1(data)

    def _diff(self, repo: str, commit: str | None, files: dict[str, Path]) -> tuple[list[str], list[str]]:
        remote = self._remote_tree(repo, commit) if commit else {}
        adds = [rel for rel, p in sorted(files.items()) if not self._same(remote.get(rel), p)]
        deletes = sorted(p for p in remote if p not in files and p != ".gitattributes")
        return adds, deletes

    def check_tag(self, name: str, folder: str | Path, tag: str) -> None:
        from kb_data.builders.common import folder_files

        try:
            tagged = self.revisions(name)["tags"].get(tag)
        except RevisionError:
            return
        if tagged is None:
            return
        folder = Path(folder)
        adds, deletes = self._diff(self.repo_id(name), tagged, {rel: folder / rel for rel in folder_files(folder)})
        if adds or deletes:
            raise PublishError(f"{self.repo_id(name)}: tag {tag!r} exists on {tagged[:12]} with other content "
                               f"({', '.join((adds + deletes)[:3])} differ) and tags are never moved")

    def _ensure_repo(self, repo: str) -> None:
        self.api.create_repo(repo, repo_type=REPO_TYPE, exist_ok=True, private=self.private)

    def _publish_folder(self, name: str, folder: Path, files: list[str], tag: str | None, message: str) -> PublishResult:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        repo = self.repo_id(name)
        self._ensure_repo(repo)
        refs = self.revisions(name)
        local = {rel: folder / rel for rel in files}
        result = PublishResult(name, "", False, tag=tag, store=self.kind)
        if tag is not None and tag in refs["tags"]:
            tagged = refs["tags"][tag]
            adds, deletes = self._diff(repo, tagged, local)
            if adds or deletes:
                raise PublishError(f"{repo}: tag {tag!r} exists on {tagged[:12]} with other content "
                                   f"({', '.join((adds + deletes)[:3])} differ) and tags are never moved. "
                                   "Publish it under a new tag.")
            result.commit = tagged
            return result
        head = refs["branches"].get(DEFAULT_BRANCH)
        adds, deletes = self._diff(repo, head, local)
        if adds or deletes:
            ops = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(local[rel])) for rel in adds]
            ops += [CommitOperationDelete(path_in_repo=p) for p in deletes]
            info = self.api.create_commit(repo, ops, commit_message=message, repo_type=REPO_TYPE,
                                          revision=DEFAULT_BRANCH, parent_commit=head)
            result.commit, result.created, result.added, result.deleted = info.oid, True, adds, deletes
        else:
            result.commit = head
        if tag is not None:
            result.tagged = self._create_tag(name, tag, result.commit)
        return result

    def _commit_files(self, name: str, files: dict[str, Path], message: str, parent: str | None) -> str:
        from huggingface_hub import CommitOperationAdd

        repo = self.repo_id(name)
        if parent is None:
            self._ensure_repo(repo)
            parent = self.resolve(name)
            present = [f for f in self._remote_tree(repo, parent) if f.startswith("data/")]
            if present:
                raise PublishError(f"{repo}: data appeared while publishing ({present[0]}); nothing was changed, retry")
        ops = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(p)) for rel, p in sorted(files.items())]
        info = self.api.create_commit(repo, ops, commit_message=message, repo_type=REPO_TYPE,
                                      revision=DEFAULT_BRANCH, parent_commit=parent)
        return info.oid

    def _create_tag(self, name: str, tag: str, commit: str) -> bool:
        from huggingface_hub.errors import HfHubHTTPError

        repo = self.repo_id(name)
        old = self.revisions(name)["tags"].get(tag)
        if old == commit:
            return False
        if old is not None:
            raise PublishError(f"{repo}: tag {tag!r} exists on {old[:12]} and tags are never moved")
        try:
            self.api.create_tag(repo, tag=tag, revision=commit, repo_type=REPO_TYPE)
        except HfHubHTTPError as e:  # created concurrently: fine only if it names the same commit
            old = self.revisions(name)["tags"].get(tag)
            if old == commit:
                return False
            raise PublishError(f"{repo}: could not create tag {tag!r}: {e}") from e
        return True

    # --- reading
    def list_files(self, name: str, revision: str = DEFAULT_BRANCH) -> list[str]:
        sha = self.resolve(name, revision)
        return sorted(self._remote_tree(self.repo_id(name), sha))

    def read_text(self, name: str, revision: str, path: str) -> str:
        sha = self.resolve(name, revision)
        local = self.api.hf_hub_download(self.repo_id(name), path, repo_type=REPO_TYPE, revision=sha)
        return Path(local).read_text(encoding="utf-8")

    def filesystem(self):
        from huggingface_hub import HfFileSystem

        return HfFileSystem(endpoint=self.api.endpoint, token=self.token)

    def parquet_source(self, name: str, revision: str = DEFAULT_BRANCH, config: str | None = None,
                       split: str | None = None) -> ParquetSource:
        """The config's Parquet files at the resolved SHA, as `HfFileSystem` paths (ranged reads)."""
        from kb_data.builders.common import card_configs, match_files, pick_config

        repo = self.repo_id(name)
        sha = self.resolve(name, revision)
        spec = pick_config(card_configs(self.read_text(name, sha, "README.md")), config)
        if split is not None and split not in spec.splits:
            raise RevisionError(f"{repo}@{sha[:12]}: config {spec.name!r} has no split {split!r}; "
                                f"it has {', '.join(spec.splits)}")
        patterns = spec.splits[split] if split else [p for ps in spec.splits.values() for p in ps]
        files = match_files(patterns, self._remote_tree(repo, sha))
        return ParquetSource(self.filesystem(), [f"datasets/{repo}@{sha}/{f}" for f in files], sha)

    def snapshot(self, name: str, revision: str = DEFAULT_BRANCH) -> Path:
        sha = self.resolve(name, revision)
        return Path(self.api.snapshot_download(self.repo_id(name), repo_type=REPO_TYPE, revision=sha))

    def load(self, name: str, revision: str = DEFAULT_BRANCH, config: str | None = None, split: str | None = None,
             streaming: bool = False) -> Loaded:
        """`datasets.load_dataset(repo_id, config, revision=<resolved SHA>)`.

        `datasets` reads its endpoint from HF_ENDPOINT, not from this store: a store opened with
        another endpoint is refused rather than silently loading from a different Hub.
        """
        import datasets

        ds_endpoint = str(datasets.config.HF_ENDPOINT).rstrip("/")
        if ds_endpoint != self.api.endpoint.rstrip("/"):
            raise ValueError(f"this store talks to {self.api.endpoint} but `datasets` to {ds_endpoint}; "
                             "set HF_ENDPOINT instead of passing endpoint=")
        sha = self.resolve(name, revision)
        ds = datasets.load_dataset(self.repo_id(name), config, split=split, revision=sha, streaming=streaming,
                                   token=self.token)
        return Loaded(ds, sha)
