"""Publishing to and loading from the Hub, end to end, with the real `huggingface_hub` and `datasets`
against `kb serve --writable` (the local store over the Hub's HTTP API, tests/hub_support.py)."""
from __future__ import annotations

import pytest

from tests.datasets_support import folders, root, run_records, small_rows  # noqa: F401  (fixtures)
from tests.hub_support import hub  # noqa: F401  (fixture)

from kb_data.builders import runs as rb
from kb_data.builders.common import PROBLEMS, RUNS
from kb_data.schema import SchemaError
from kb_data.builders.publish import publish_folder
from kb_data.store import PublishError, RevisionError
from kb_data.stores import open_store
from kb_data.stream import stream_problem

ORG = "kb-org"
REPO = f"{ORG}/{PROBLEMS}"
RUNS_REPO = f"{ORG}/{RUNS}"


@pytest.fixture
def published(hub, folders):
    store = open_store("hub", org=ORG)
    r1 = store.publish(PROBLEMS, folders["v0.1"], tag="v0.1")
    r3 = store.publish(PROBLEMS, folders["v3"], tag="v3")
    return store, r1, r3


def _commits(hub, name: str) -> int:
    """How many distinct commits the served store holds for a dataset (its commits are content-addressed)."""
    return len(list((hub.store.root / name / "commits").glob("*.json")))


def _ids(ds) -> list[str]:
    return sorted(pid for split in ds.values() for pid in split["problem_id"])


def test_publish_v01_then_v3_and_load_dataset_at_each_tag(published, root, hub):
    import datasets

    store, r1, r3 = published
    assert r1.created and r1.tagged and r3.created and r3.tagged
    revs = store.revisions(PROBLEMS)
    assert revs["tags"] == {"v0.1": r1.commit, "v3": r3.commit} and revs["branches"]["main"] == r3.commit
    assert _commits(hub, PROBLEMS) == 3  # the repo's initial commit + one commit per publish

    v01 = datasets.load_dataset(REPO, revision="v0.1")
    v3 = datasets.load_dataset(REPO, revision="v3")
    assert _ids(v01) == sorted(r.problem_id for r in small_rows(root, "v0.1"))
    assert _ids(v3) == sorted(r.problem_id for r in small_rows(root, "v3"))
    assert _ids(datasets.load_dataset(REPO)) == _ids(v3)  # main = newest
    # v3 does not hold v0.1's files: the second commit deleted them
    assert not any(f.endswith("level2/12_Gemm_Multiply_LeakyReLU") for f in _ids(v3))
    # through the store: the tag is resolved to its SHA first, the SHA is loaded
    ds, sha = store.load(PROBLEMS, "v0.1", config="all", split="level1")
    assert sha == r1.commit and ds["problem_id"] == ["v0.1/level1/19_ReLU", "v0.1/level1/23_Softmax"]
    ds, sha = store.load(PROBLEMS, "v3", config="H100", split="level1")
    assert sha == r3.commit and ds["problem_id"] == ["v3/level1/23_Softmax", "v3/level1/36_RMSNorm_"]
    assert store.resolve(PROBLEMS, r1.commit[:10]) == r1.commit


def test_local_folder_and_hub_give_the_same_rows(published, folders, tmp_path):
    import datasets

    local = datasets.load_dataset(str(folders["v3"]), "H100", cache_dir=str(tmp_path / "c"))
    remote = datasets.load_dataset(REPO, "H100", revision="v3")
    assert list(local) == list(remote)
    for split in local:
        assert local[split].to_list() == remote[split].to_list()


def test_streaming_at_a_revision(published):
    import datasets

    store, r1, r3 = published
    stream = datasets.load_dataset(REPO, "all", split="level1", revision=r1.commit, streaming=True)
    rows = list(stream)
    assert [r["problem_id"] for r in rows] == ["v0.1/level1/19_ReLU", "v0.1/level1/23_Softmax"]
    assert rows[0]["rules"]["suite"] == "v0.1"
    ids, sha = store.load(PROBLEMS, "v3", config="M4MAX", split="metal_level1", streaming=True)
    assert [r["problem_id"] for r in ids] == ["v3/metal_level1/alpha_compositing"] and sha == r3.commit


def test_stream_one_problem_from_the_hub(published, hub):
    store, r1, r3 = published
    before = len(hub.requests)
    hit = stream_problem("36_RMSNorm_", "v3", store=store)
    assert hit.problem_id == "v3/level1/36_RMSNorm_" and hit.revision == r3.commit and hit.store == "hub"
    assert callable(hit.problem.module.Model)
    # only the `all` config's Parquet of that SHA was read (ranged), nothing of other configs
    paths = [p for _, p, _ in hub.requests[before:] if "/resolve/" in p]
    assert paths and all(r3.commit in p for p in paths)
    assert not any("/data/H100/" in p or "/data/RTX3090/" in p for p in paths)
    assert stream_problem("23_Softmax", "v0.1", store=store).row["suite"] == "v0.1"


def test_unknown_revision_and_repo(published):
    store, _, _ = published
    with pytest.raises(RevisionError) as e:
        store.resolve(PROBLEMS, "v4")
    assert "'v4'" in str(e.value) and "v0.1" in str(e.value) and "v3" in str(e.value)
    with pytest.raises(RevisionError, match="no dataset repo"):
        store.resolve("kernelbench-v3-nothing", "main")
    with pytest.raises(RevisionError):
        stream_problem("23_Softmax", "v4", store=store)


def test_tags_are_never_moved_on_the_hub(published, folders, hub):
    store, r1, r3 = published
    n = _commits(hub, PROBLEMS)
    again = store.publish(PROBLEMS, folders["v0.1"], tag="v0.1")  # same content, same tag: nothing
    assert not again.created and not again.tagged and again.commit == r1.commit
    with pytest.raises(PublishError, match="never moved"):
        store.publish(PROBLEMS, folders["v3"], tag="v0.1")
    with pytest.raises(PublishError, match="never moved"):
        store.check_tag(PROBLEMS, folders["v3"], "v0.1")
    refs = hub.store.revisions(PROBLEMS)
    assert _commits(hub, PROBLEMS) == n and refs["tags"]["v0.1"] == r1.commit and refs["branches"]["main"] == r3.commit
    # the same content as main under a new tag: no new commit, just the tag
    extra = store.publish(PROBLEMS, folders["v3"], tag="v3-final")
    assert not extra.created and extra.tagged and extra.commit == r3.commit


def test_runs_append_on_the_hub(hub, tmp_path):
    import datasets

    store = open_store("hub", org=ORG)
    first = rb.append_runs(store, RUNS, run_records(5))
    assert first.created and first.rows_added == 5
    again = rb.append_runs(store, RUNS, run_records(5))
    assert not again.created and again.rows_added == 0 and again.rows_present == 5
    n = _commits(hub, RUNS)
    files1 = set(store.list_files(RUNS))
    rb.build_runs(run_records(9), tmp_path / "folder")
    second = publish_folder(store, RUNS, tmp_path / "folder")  # a runs folder is appended
    assert second.created and second.rows_added == 4 and second.rows_present == 5
    files2 = set(store.list_files(RUNS))
    assert files2 - files1 == {rb.shard_path(f"local-{i:05d}" for i in range(5, 9))}
    assert _commits(hub, RUNS) == n + 1
    old_tree, new_tree = (hub.store.tree(RUNS, c)[1] for c in (first.commit, second.commit))
    assert all(new_tree[p] == old_tree[p] for p in old_tree if p.startswith("data/"))  # shards never rewritten
    runs = datasets.load_dataset(RUNS_REPO, split="train", revision=second.commit)
    assert sorted(runs["record_id"]) == [f"local-{i:05d}" for i in range(9)]
    # re-publishing the same records adds nothing
    third = publish_folder(store, RUNS, tmp_path / "folder")
    assert not third.created and _commits(hub, RUNS) == n + 1
    bad = run_records(12)
    bad[10]["correct"] = "yes"
    with pytest.raises(SchemaError, match="row 10: RunRecord.correct"):
        rb.append_runs(store, RUNS, bad)
    assert _commits(hub, RUNS) == n + 1


def test_cli_publish_and_pull_hub(hub, root, tmp_path, capsys):
    from kb_data.cli import main

    assert main(["publish", "problems", "--suite", "v3", "--problems", str(root), "--store", "hub", "--org", ORG,
                 "--no-cache"]) == 0
    assert "tag v3 (new commit)" in capsys.readouterr().out
    sha = hub.store.revisions(PROBLEMS)["tags"]["v3"]
    assert main(["pull", "problems", "--revision", "v3", "--store", "hub", "--org", ORG,
                 "--out", str(tmp_path / "pulled")]) == 0
    out = capsys.readouterr().out
    assert f"= {sha}" in out and "config H100: level1=2 level2=1" in out
    assert main(["publish", "problems", "--folder", str(tmp_path / "pulled"), "--tag", "v3", "--store", "hub",
                 "--repo", REPO]) == 0
    assert "(no change)" in capsys.readouterr().out


def test_an_older_suite_published_last_does_not_move_main_on_the_hub(hub, folders, root):
    import datasets

    store = open_store("hub", org=ORG)
    r3 = store.publish(PROBLEMS, folders["v3"], tag="v3")
    r1 = store.publish(PROBLEMS, folders["v0.1"], tag="v0.1")
    assert r1.created and r1.tagged and not r1.main_moved and r1.commit != r3.commit
    revs = store.revisions(PROBLEMS)
    # the commit was made on a branch of its own, kept by its tag, and the branch is gone
    assert revs["branches"] == {"main": r3.commit} and revs["tags"] == {"v0.1": r1.commit, "v3": r3.commit}
    assert _ids(datasets.load_dataset(REPO)) == sorted(r.problem_id for r in small_rows(root, "v3"))
    assert _ids(datasets.load_dataset(REPO, revision="v0.1")) == sorted(r.problem_id for r in small_rows(root, "v0.1"))
