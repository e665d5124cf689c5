"""End-to-end tests of tests/hub_emulator.py with the REAL huggingface_hub and datasets clients.

Most tests run the clients in this process: the `hub` fixture starts an emulator and calls
`hub.configure_clients(monkeypatch, home=...)`, which sets HF_ENDPOINT / HF_TOKEN /
HF_HUB_DISABLE_XET=1 / HF_HOME / HF_DATASETS_CACHE ... AND rewrites the copies both libraries took
at import time (huggingface_hub.constants, datasets.config, the module-level HfApi/HfFileSystem);
monkeypatch undoes all of it at teardown. `test_subprocess_uses_env_only` checks the other way,
a fresh interpreter configured by environment variables alone (`hub.subprocess_env()`).
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.hub_emulator import HubEmulator  # noqa: E402

from huggingface_hub import HfApi, HfFileSystem, hf_hub_download  # noqa: E402
from huggingface_hub.errors import (  # noqa: E402
    EntryNotFoundError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

REPO = "kb-org/problems"
README = """---
configs:
- config_name: default
  data_files:
  - split: train
    path: data/*.parquet
---
# Test dataset
"""
# huggingface_hub's LFS upload passes a file object as `data=`, which httpx2 flags as deprecated
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")

ROWS_V01 = {"name": ["a", "b", "c"], "level": [1, 1, 2]}
ROWS_V3 = {"name": ["d", "e"], "level": [3, 3]}


@pytest.fixture
def hub(tmp_path, monkeypatch):
    with HubEmulator(tmp_path / "hub") as h:
        h.configure_clients(monkeypatch, home=tmp_path / "hf_home")
        yield h


def _write_version(folder: Path, rows: dict) -> bytes:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text(README)
    pq.write_table(pa.table(rows), folder / "data" / "train.parquet")
    return (folder / "data" / "train.parquet").read_bytes()


@pytest.fixture
def published(hub, tmp_path):
    """REPO with two versions: tag v0.1 (ROWS_V01) and tag v3 = main (ROWS_V3)."""
    api = HfApi()
    api.create_repo(REPO, repo_type="dataset")
    folder = tmp_path / "upload"
    bytes_v01 = _write_version(folder, ROWS_V01)
    c1 = api.upload_folder(repo_id=REPO, repo_type="dataset", folder_path=folder, commit_message="v0.1")
    api.create_tag(REPO, tag="v0.1", repo_type="dataset")
    bytes_v3 = _write_version(folder, ROWS_V3)
    c2 = api.upload_folder(repo_id=REPO, repo_type="dataset", folder_path=folder, commit_message="v3")
    api.create_tag(REPO, tag="v3", repo_type="dataset")
    return {"api": api, "c1": c1.oid, "c2": c2.oid, "v01": bytes_v01, "v3": bytes_v3}


# 1. HfApi: repos, commits, tags, refs, info
def test_hfapi_create_upload_tag_and_refs(hub, published):
    api, c1, c2 = published["api"], published["c1"], published["c2"]
    assert c1 != c2

    refs = api.list_repo_refs(REPO, repo_type="dataset")
    assert {b.name: b.target_commit for b in refs.branches} == {"main": c2}
    assert {t.name: t.target_commit for t in refs.tags} == {"v0.1": c1, "v3": c2}
    assert {t.ref for t in refs.tags} == {"refs/tags/v0.1", "refs/tags/v3"}

    with pytest.raises(HfHubHTTPError) as exc:
        api.create_tag(REPO, tag="v0.1", revision=c2, repo_type="dataset")
    assert exc.value.response.status_code == 409
    api.create_tag(REPO, tag="v0.1", revision=c2, repo_type="dataset", exist_ok=True)  # no-op
    assert {t.name: t.target_commit for t in api.list_repo_refs(REPO, repo_type="dataset").tags}["v0.1"] == c1

    info = api.repo_info(REPO, repo_type="dataset", revision="v0.1")
    assert info.sha == c1
    assert info.id == REPO and info.private is False
    assert sorted(s.rfilename for s in info.siblings) == [".gitattributes", "README.md", "data/train.parquet"]
    assert info.card_data is not None and info.card_data.to_dict()["configs"][0]["config_name"] == "default"
    assert api.repo_info(REPO, repo_type="dataset").sha == c2
    assert api.repo_info(REPO, repo_type="dataset", revision=c1).sha == c1
    siblings = {s.rfilename: s for s in api.dataset_info(REPO, revision="v3", files_metadata=True).siblings}
    assert siblings["data/train.parquet"].size == len(published["v3"])
    assert siblings["data/train.parquet"].lfs is not None  # *.parquet is in the LFS patterns of .gitattributes
    assert siblings["README.md"].lfs is None and siblings["README.md"].size == len(README)

    # creating an existing repo: 409, or the URL again with exist_ok=True
    with pytest.raises(HfHubHTTPError) as exc:
        api.create_repo(REPO, repo_type="dataset")
    assert exc.value.response.status_code == 409
    url = api.create_repo(REPO, repo_type="dataset", exist_ok=True)
    assert url.repo_id == REPO and url.repo_type == "dataset" and url.endpoint == hub.endpoint

    # history, newest first; the Hub-like "initial commit" comes from create_repo
    commits = api.list_repo_commits(REPO, repo_type="dataset")
    assert [c.commit_id for c in commits[:2]] == [c2, c1]
    assert [c.title for c in commits] == ["v3", "v0.1", "initial commit"]
    assert [c.commit_id for c in api.list_repo_commits(REPO, repo_type="dataset", revision="v0.1")][0] == c1

    # the second upload only changed the parquet file (README unchanged -> skipped by the client)
    state = hub.repo_state(REPO)
    assert [c["id"] for c in state["commits"]][-2:] == [c1, c2]
    assert state["commits"][-1]["tree"]["README.md"] == state["commits"][-2]["tree"]["README.md"]

    # parent_commit mismatch is refused, a correct one accepted
    with pytest.raises(HfHubHTTPError) as exc:
        api.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt", repo_id=REPO, repo_type="dataset",
                        parent_commit=c1)
    assert exc.value.response.status_code == 412
    c3 = api.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt", repo_id=REPO, repo_type="dataset",
                         parent_commit=c2).oid
    api.delete_file("x.txt", repo_id=REPO, repo_type="dataset", parent_commit=c3)
    assert "x.txt" not in api.list_repo_files(REPO, repo_type="dataset")

    # delete a tag; branches
    api.delete_tag(REPO, tag="v3", repo_type="dataset")
    assert [t.name for t in api.list_repo_refs(REPO, repo_type="dataset").tags] == ["v0.1"]
    api.create_branch(REPO, branch="dev", revision="v0.1", repo_type="dataset")
    assert api.repo_info(REPO, repo_type="dataset", revision="dev").sha == c1

    # storage persists: a new emulator on the same directory serves the same repo
    with HubEmulator(hub.root) as again:
        fresh = HfApi(endpoint=again.endpoint, token=again.token)
        assert fresh.repo_info(REPO, repo_type="dataset", revision="v0.1").sha == c1


# 2. hf_hub_download at a tag and at a commit sha
def test_hf_hub_download_at_tag_and_sha(hub, published):
    api, c1, c2 = published["api"], published["c1"], published["c2"]
    for rev, expected in (("v0.1", "v01"), (c1, "v01"), ("v3", "v3"), (c2, "v3"), (None, "v3")):
        path = hf_hub_download(REPO, "data/train.parquet", repo_type="dataset", revision=rev)
        assert Path(path).read_bytes() == published[expected], rev
        assert Path(path).parent.parent.name == (c1 if expected == "v01" else c2)  # snapshots/<sha>/data/...
    # a revision that needs URL-encoding
    api.create_tag(REPO, tag="release/2024-q1+rc", revision=c1, repo_type="dataset")
    path = hf_hub_download(REPO, "data/train.parquet", repo_type="dataset", revision="release/2024-q1+rc")
    assert Path(path).read_bytes() == published["v01"]
    with pytest.raises(EntryNotFoundError):
        hf_hub_download(REPO, "data/missing.parquet", repo_type="dataset", revision="v0.1")


# 3. datasets.load_dataset at tags / sha, eager and streaming
def test_load_dataset_at_revisions(hub, published):
    import datasets

    c1 = published["c1"]
    assert datasets.load_dataset(REPO, revision="v0.1", split="train").to_dict() == ROWS_V01
    assert datasets.load_dataset(REPO, revision="v3", split="train").to_dict() == ROWS_V3
    assert datasets.load_dataset(REPO, revision=c1, split="train").to_dict() == ROWS_V01
    assert datasets.load_dataset(REPO, split="train").to_dict() == ROWS_V3  # main
    for rev, rows in (("v0.1", ROWS_V01), ("v3", ROWS_V3)):
        stream = datasets.load_dataset(REPO, revision=rev, split="train", streaming=True)
        assert [r["name"] for r in stream] == rows["name"]
    # the streamed parquet was read with HTTP Range requests
    assert any(status == 206 for _, _, status in hub.requests)


# 4. unknown repo / revision / file -> the clients' own exceptions
def test_unknown_repo_and_revision(hub, published):
    import datasets

    api = published["api"]
    with pytest.raises(RepositoryNotFoundError):
        api.repo_info("kb-org/nope", repo_type="dataset")
    with pytest.raises(RepositoryNotFoundError):
        api.repo_info(REPO)  # right name, wrong type (model)
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download("kb-org/nope", "README.md", repo_type="dataset")
    with pytest.raises(RevisionNotFoundError):
        api.repo_info(REPO, repo_type="dataset", revision="v9")
    with pytest.raises(RevisionNotFoundError):
        api.repo_info(REPO, repo_type="dataset", revision="0" * 40)
    with pytest.raises(RevisionNotFoundError):
        hf_hub_download(REPO, "README.md", repo_type="dataset", revision="v9")
    with pytest.raises(RevisionNotFoundError):
        list(api.list_repo_tree(REPO, repo_type="dataset", revision="v9"))
    with pytest.raises(EntryNotFoundError):
        list(api.list_repo_tree(REPO, "no/such/dir", repo_type="dataset"))
    assert api.repo_exists(REPO, repo_type="dataset") and not api.repo_exists("kb-org/nope", repo_type="dataset")
    assert api.revision_exists(REPO, "v0.1", repo_type="dataset")
    assert not api.revision_exists(REPO, "v9", repo_type="dataset")
    assert api.file_exists(REPO, "README.md", repo_type="dataset", revision="v0.1")
    assert not api.file_exists(REPO, "nope.md", repo_type="dataset", revision="v0.1")
    with pytest.raises(datasets.exceptions.DatasetNotFoundError, match="Revision"):
        datasets.load_dataset(REPO, revision="v9", split="train")
    with pytest.raises(datasets.exceptions.DatasetNotFoundError):
        datasets.load_dataset("kb-org/nope", split="train")


def test_tree_pagination_paths_info_and_hffs(tmp_path, monkeypatch):
    # upload_mode="lfs": even these small text files go through the git-LFS batch/PUT/verify flow
    with HubEmulator(tmp_path / "hub", tree_page_size=2, commits_page_size=2, upload_mode="lfs") as hub:
        hub.configure_clients(monkeypatch, home=tmp_path / "hf_home")
        api = HfApi()
        api.create_repo(REPO, repo_type="dataset")
        for i in range(3):
            api.upload_file(path_or_fileobj=f"file {i}\n".encode(), path_in_repo=f"d/sub/f{i}.txt",
                            repo_id=REPO, repo_type="dataset", commit_message=f"add f{i}")
        files = sorted(api.list_repo_files(REPO, repo_type="dataset"))
        assert files == [".gitattributes", "d/sub/f0.txt", "d/sub/f1.txt", "d/sub/f2.txt"]
        assert any("cursor=" in p for _, p, _ in hub.requests)  # really paginated
        assert sorted(e.path for e in api.list_repo_tree(REPO, "d", repo_type="dataset")) == ["d/sub"]
        assert len(api.list_repo_commits(REPO, repo_type="dataset")) == 4  # paginated too

        infos = api.get_paths_info(REPO, ["d/sub/f1.txt", "d", "missing"], repo_type="dataset", expand=True)
        by_path = {i.path: i for i in infos}
        assert set(by_path) == {"d/sub/f1.txt", "d"}
        assert by_path["d/sub/f1.txt"].size == len(b"file 1\n")
        assert by_path["d/sub/f1.txt"].lfs is not None and by_path["d/sub/f1.txt"].lfs.size == len(b"file 1\n")
        assert by_path["d/sub/f1.txt"].last_commit.title == "add f1"
        assert by_path["d"].last_commit.title == "add f2"

        fs = HfFileSystem()
        assert fs.ls(f"datasets/{REPO}/d/sub", detail=False) == [f"datasets/{REPO}/d/sub/f{i}.txt" for i in range(3)]
        with fs.open(f"datasets/{REPO}/d/sub/f2.txt", "rb", block_size=4) as f:
            f.seek(5)
            assert f.read(1) == b"2"
        assert fs.cat(f"datasets/{REPO}/d/sub/f0.txt") == b"file 0\n"

        # create_pr opens refs/pr/1 without touching main
        info = api.upload_file(path_or_fileobj=b"pr", path_in_repo="pr.txt", repo_id=REPO, repo_type="dataset",
                               create_pr=True)
        assert info.pr_revision == "refs/pr/1"
        assert hf_hub_download(REPO, "pr.txt", repo_type="dataset", revision="refs/pr/1")
        assert "pr.txt" not in api.list_repo_files(REPO, repo_type="dataset")


def test_model_repo_and_auth(hub):
    api = HfApi()
    url = api.create_repo("kb-org/tiny-model", private=True)
    assert url.repo_type == "model"
    api.upload_file(path_or_fileobj=b'{"a": 1}', path_in_repo="config.json", repo_id="kb-org/tiny-model")
    assert json.loads(Path(hf_hub_download("kb-org/tiny-model", "config.json")).read_text()) == {"a": 1}
    assert api.model_info("kb-org/tiny-model").private is True
    # private repos are invisible without a token; a wrong token is refused
    with pytest.raises(RepositoryNotFoundError):
        HfApi(token=False).model_info("kb-org/tiny-model")
    with pytest.raises(HfHubHTTPError) as exc:
        HfApi(token="hf_wrong").model_info("kb-org/tiny-model")
    assert exc.value.response.status_code == 401
    # writes need a token
    with pytest.raises(HfHubHTTPError):
        HfApi(token=False).create_repo("kb-org/other", repo_type="dataset")
    # user namespace defaults to the emulator's user
    assert api.whoami()["name"] == hub.user
    assert api.create_repo("solo", repo_type="dataset").repo_id == f"{hub.user}/solo"
    api.delete_repo("solo", repo_type="dataset")
    with pytest.raises(RepositoryNotFoundError):
        api.repo_info(f"{hub.user}/solo", repo_type="dataset")


def test_regular_upload_mode(tmp_path, monkeypatch):
    """upload_mode="regular": every file, Parquet included, travels base64-inline in the commit."""
    with HubEmulator(tmp_path / "hub", upload_mode="regular") as hub:
        hub.configure_clients(monkeypatch, home=tmp_path / "hf_home")
        api = HfApi()
        api.create_repo(REPO, repo_type="dataset")
        data = _write_version(tmp_path / "up", ROWS_V01)
        api.upload_folder(repo_id=REPO, repo_type="dataset", folder_path=tmp_path / "up")
        assert hub.repo_state(REPO)["commits"][-1]["lfs"] == []
        assert not any(".git/info/lfs" in path for _, path, _ in hub.requests)
        assert Path(hf_hub_download(REPO, "data/train.parquet", repo_type="dataset")).read_bytes() == data


def test_datasets_push_to_hub(hub):
    """`Dataset.push_to_hub` (LFS upload of Parquet shards, README/config merge) to main and to a branch."""
    import datasets

    ds1 = datasets.Dataset.from_dict(ROWS_V01)
    ds3 = datasets.Dataset.from_dict(ROWS_V3)
    ds1.push_to_hub(REPO, config_name="level1", split="train")
    ds3.push_to_hub(REPO, config_name="level3", split="train")
    api = HfApi()
    api.create_branch(REPO, branch="next", repo_type="dataset")
    datasets.DatasetDict({"train": ds3, "test": ds1}).push_to_hub(REPO, config_name="level1", revision="next")
    api.create_tag(REPO, tag="v1", repo_type="dataset")

    assert datasets.load_dataset(REPO, "level1", split="train").to_dict() == ROWS_V01
    assert datasets.load_dataset(REPO, "level3", split="train").to_dict() == ROWS_V3
    assert datasets.load_dataset(REPO, "level1", split="train", revision="next").to_dict() == ROWS_V3
    assert datasets.load_dataset(REPO, "level1", split="test", revision="next").to_dict() == ROWS_V01
    assert datasets.get_dataset_config_names(REPO, revision="next") == ["level1", "level3"]
    files = api.list_repo_files(REPO, repo_type="dataset", revision="next")
    assert "level1/test-00000-of-00001.parquet" in files and "level3/train-00000-of-00001.parquet" in files


@pytest.mark.slow
def test_subprocess_uses_env_only(hub, published, tmp_path):
    """A fresh interpreter configured by environment variables alone sees the same revisions."""
    # (streaming is covered in process: here it would only add a torch import to the runtime)
    script = textwrap.dedent(f"""
        import json, datasets, huggingface_hub
        from huggingface_hub import HfApi, hf_hub_download
        out = {{
            "endpoint": huggingface_hub.constants.ENDPOINT,
            "v01": datasets.load_dataset({REPO!r}, revision="v0.1", split="train").to_dict(),
            "v3_file": hf_hub_download({REPO!r}, "data/train.parquet", repo_type="dataset", revision="v3"),
            "tags": sorted(t.name for t in HfApi().list_repo_refs({REPO!r}, repo_type="dataset").tags),
        }}
        print(json.dumps(out))
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=hub.subprocess_env(home=tmp_path / "sub_home"),
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["endpoint"] == hub.endpoint
    assert out["v01"] == ROWS_V01
    assert Path(out["v3_file"]).read_bytes() == published["v3"]
    assert Path(out["v3_file"]).is_relative_to(tmp_path / "sub_home" / "hub")  # caches went where env() said
    assert out["tags"] == ["v0.1", "v3"]
