"""The Hugging Face Hub as a `kb_data.store.Store`: thin calls of `huggingface_hub`, the store's rules kept by
`Store.commit`.

    store = open_store("hub", org="my-org")          # token: HF_TOKEN / `hf auth login`; endpoint: HF_ENDPOINT
    store.publish("kernelbench-v3-problems", "out/problems-v3", tag="v3")
    ds, sha = store.load("kernelbench-v3-problems", "v0.1")

- a folder is one `upload_folder(..., delete_patterns="*", parent_commit=head)` commit (the repo's
  tree becomes the folder); records are one `create_commit` of added files on top of the head;
- a commit that must not move `main` (an older version published after a newer one) is made on a
  temporary branch, tagged, and the branch deleted: the tag keeps the commit;
- revisions: `list_repo_refs`; a tag or branch resolves to its commit SHA through `repo_info`;
- loads: `datasets.load_dataset(repo_id, revision=<sha>)`, the SHA and never the tag, so an offline
  cache cannot substitute another revision; `snapshot` is `snapshot_download` at the SHA.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .folders import config_files, git_blob_sha1, match_files
from .store import DEFAULT_BRANCH, CommitPlan, Loaded, ParquetSource, PublishError, RevisionError, Store

REPO_TYPE = "dataset"
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
_HEX_RE = re.compile(r"^[0-9a-f]{4,39}$")


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
        if _HEX_RE.match(revision):  # a commit prefix the Hub does not resolve itself: search the history
            hits = {c.commit_id for head in {*refs["branches"].values(), *refs["tags"].values()}
                    for c in self.api.list_repo_commits(repo, repo_type=REPO_TYPE, revision=head)
                    if c.commit_id.startswith(revision)}
            if len(hits) == 1:
                return hits.pop()
            if len(hits) > 1:
                raise RevisionError(f"{repo}: revision {revision!r} is ambiguous: {', '.join(sorted(hits))}")
        known = "; ".join(f"{k} " + ", ".join(sorted(v)) for k, v in refs.items() if v) or "nothing"
        raise RevisionError(f"{repo}: unknown revision {revision!r} on {self.api.endpoint}; known: {known} "
                            "(or a commit SHA)")

    # --- writing
    def _remote_tree(self, repo: str, commit: str) -> dict:
        from huggingface_hub.hf_api import RepoFile

        return {f.path: f for f in self.api.list_repo_tree(repo, recursive=True, revision=commit, repo_type=REPO_TYPE)
                if isinstance(f, RepoFile)}

    @staticmethod
    def _same(remote, local: Path) -> bool:
        if remote is None:
            return False
        data = local.read_bytes()
        if remote.lfs is not None:
            return remote.lfs.sha256 == hashlib.sha256(data).hexdigest()
        return remote.blob_id == git_blob_sha1(data)

    def diff(self, name: str, commit: str | None, files: dict[str, Path]) -> tuple[list[str], list[str]]:
        remote = self._remote_tree(self.repo_id(name), commit) if commit else {}
        changed = [rel for rel, p in sorted(files.items()) if not self._same(remote.get(rel), p)]
        return changed, sorted(p for p in remote if p not in files and p != ".gitattributes")

    def _ensure(self, name: str) -> None:
        self.api.create_repo(self.repo_id(name), repo_type=REPO_TYPE, exist_ok=True, private=self.private)

    def _write_commit(self, name: str, plan: CommitPlan, on_main: bool) -> str:
        repo = self.repo_id(name)
        branch = DEFAULT_BRANCH
        if not on_main:  # a commit `main` must not point to: made on a branch of its own, kept by its tag
            branch = f"kb-publish-{plan.tag}"
            self.api.create_branch(repo, branch=branch, revision=plan.parent, repo_type=REPO_TYPE, exist_ok=False)
        try:
            return self._upload(repo, plan, branch).oid
        finally:
            if branch != DEFAULT_BRANCH:
                self.api.delete_branch(repo, branch=branch, repo_type=REPO_TYPE)

    def _upload(self, repo: str, plan: CommitPlan, branch: str):
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        if plan.replace and plan.folder is not None:
            return self.api.upload_folder(repo_id=repo, folder_path=str(plan.folder), repo_type=REPO_TYPE,
                                          revision=branch, commit_message=plan.message, parent_commit=plan.parent,
                                          ignore_patterns=[".*", "**/.*"], delete_patterns="*")
        ops = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(p)) for rel, p in sorted(plan.files.items())]
        if plan.replace and plan.parent:
            ops += [CommitOperationDelete(path_in_repo=p) for p in self.diff(repo, plan.parent, plan.files)[1]]
        return self.api.create_commit(repo, ops, commit_message=plan.message, repo_type=REPO_TYPE, revision=branch,
                                      parent_commit=plan.parent)

    def _set_tag(self, name: str, tag: str, commit: str) -> None:
        from huggingface_hub.errors import HfHubHTTPError

        try:
            self.api.create_tag(self.repo_id(name), tag=tag, revision=commit, repo_type=REPO_TYPE)
        except HfHubHTTPError as e:  # created concurrently: fine only if it names the same commit
            if self.revisions(name)["tags"].get(tag) != commit:
                raise PublishError(f"{self.repo_id(name)}: could not create tag {tag!r}: {e}") from e

    # --- reading
    def list_files(self, name: str, revision: str = DEFAULT_BRANCH) -> list[str]:
        return sorted(self._remote_tree(self.repo_id(name), self.resolve(name, revision)))

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
        repo = self.repo_id(name)
        sha = self.resolve(name, revision)
        files = config_files(self.read_text(name, sha, "README.md"), self._remote_tree(repo, sha), config, split,
                             f"{repo}@{sha[:12]}")
        return ParquetSource(self.filesystem(), [f"datasets/{repo}@{sha}/{f}" for f in files], sha)

    def snapshot(self, name: str, revision: str = DEFAULT_BRANCH, patterns: list[str] | None = None,
                 max_bytes: int | None = None) -> Path:
        """The files of the revision that `patterns` match (all without), refused before any download when their
        sizes add up past `max_bytes` (a runs dataset is someone else's: a 40 GiB file it never needed filled an
        audit's disk, red team, session 51)."""
        repo, sha = self.repo_id(name), self.resolve(name, revision)
        if max_bytes is not None:
            tree = self._remote_tree(repo, sha)
            wanted = sum(tree[p].size or 0 for p in (tree if patterns is None else match_files(patterns, tree)))
            if wanted > max_bytes:
                raise RevisionError(f"{repo}@{sha[:12]}: the files to fetch add up to {wanted / 2**30:.1f} GiB, over "
                                    f"the {max_bytes / 2**30:.1f} GiB this reads from the Hub; download what you need "
                                    "yourself and give the folder")
        return Path(self.api.snapshot_download(repo, repo_type=REPO_TYPE, revision=sha, allow_patterns=patterns))

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
