"""The local store: named revisions with Hub semantics, append-only runs, streaming one problem, CLI."""
from __future__ import annotations

import json
import os
import stat

import pyarrow as pa
import pytest

from tests.datasets_support import folders, make_root, root, run_records, small_rows  # noqa: F401  (fixtures)

from kb_data.builders import problems as pb
from kb_data.builders import runs as rb
from kb_data.builders.common import PROBLEMS, RUNS, folder_files
from kb_data.schema import SchemaError
from kb_data.builders.publish import publish_folder
from kb_data.store import LocalStore, PublishError, RevisionError, default_store_root, tree_id
from kb_data.stores import open_store
from kb_data.stream import ProblemNotFound, stream_problem


@pytest.fixture
def store(tmp_path, folders):
    st = open_store("local", root=tmp_path / "store")
    st.publish(PROBLEMS, folders["v0.1"], tag="v0.1")
    st.publish(PROBLEMS, folders["v3"], tag="v3")
    return st


def _ids(ds) -> list[str]:
    return sorted(pid for split in ds.values() for pid in split["problem_id"])


def test_publish_v01_then_v3_gives_tags_and_main(store, root):
    revs = store.revisions(PROBLEMS)
    assert set(revs["tags"]) == {"v0.1", "v3"}
    assert revs["branches"] == {"main": revs["tags"]["v3"]}
    assert revs["tags"]["v0.1"] != revs["tags"]["v3"]
    v01, rev01 = store.load(PROBLEMS, "v0.1")
    v3, rev3 = store.load(PROBLEMS, "v3")
    assert _ids(v01) == sorted(r.problem_id for r in small_rows(root, "v0.1"))
    assert _ids(v3) == sorted(r.problem_id for r in small_rows(root, "v3"))
    assert (rev01, rev3) == (revs["tags"]["v0.1"], revs["tags"]["v3"])
    main, rev_main = store.load(PROBLEMS)  # main = newest = v3
    assert rev_main == rev3 and _ids(main) == _ids(v3)
    h100, _ = store.load(PROBLEMS, "v3", config="H100", split="level1")
    assert h100["problem_id"] == ["v3/level1/23_Softmax", "v3/level1/36_RMSNorm_"]


def test_commit_id_is_the_content_hash_of_the_tree(store, folders):
    from kb_data.builders.common import sha256_file

    tree = {rel: {"sha256": sha256_file(folders["v3"] / rel)} for rel in folder_files(folders["v3"])}
    assert store.resolve(PROBLEMS, "v3") == tree_id(tree)
    # a full id and any unique prefix resolve to it
    rev = store.resolve(PROBLEMS, "v3")
    assert store.resolve(PROBLEMS, rev) == rev == store.resolve(PROBLEMS, rev[:8])


def test_unknown_revision_is_an_error_listing_known_ones(store):
    with pytest.raises(RevisionError) as e:
        store.resolve(PROBLEMS, "v4")
    assert "'v4'" in str(e.value) and "v0.1" in str(e.value) and "v3" in str(e.value) and "main" in str(e.value)
    with pytest.raises(RevisionError):
        store.load(PROBLEMS, "v4")
    with pytest.raises(RevisionError, match="no dataset 'nope'"):
        store.resolve("nope", "main")
    with pytest.raises(RevisionError):
        store.resolve(PROBLEMS, "deadbeef")  # a hex string that names no commit


def test_tags_are_never_moved(store, folders):
    before = json.loads((store.root / PROBLEMS / "refs.json").read_text())
    with pytest.raises(PublishError, match="never moved"):
        store.publish(PROBLEMS, folders["v3"], tag="v0.1")
    with pytest.raises(PublishError, match="never moved"):
        store.check_tag(PROBLEMS, folders["v3"], "v0.1")
    again = store.publish(PROBLEMS, folders["v0.1"], tag="v0.1")  # same content, same tag: no-op
    assert not again.created and not again.tagged
    assert json.loads((store.root / PROBLEMS / "refs.json").read_text()) == before  # main still v3
    with pytest.raises(PublishError):
        store.publish(PROBLEMS, folders["v3"], tag="main")


def test_snapshot_is_read_only_and_per_commit(store):
    a = store.snapshot(PROBLEMS, "v0.1")
    b = store.snapshot(PROBLEMS, "v3")
    assert a != b and a.name == store.resolve(PROBLEMS, "v0.1")
    for rel in folder_files(a):
        assert not os.stat(a / rel).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    assert store.snapshot(PROBLEMS, "v0.1") == a


def test_stream_one_problem(store):
    hit = stream_problem("36_RMSNorm_", "v3", store=store)
    assert hit.problem_id == "v3/level1/36_RMSNorm_" and hit.revision == store.resolve(PROBLEMS, "v3")
    assert hit.rules["suite"] == "v3" and callable(hit.problem.module.get_inputs)
    assert stream_problem("v0.1/level1/23_Softmax", "v0.1", store=store).row["suite"] == "v0.1"
    assert stream_problem("23_Softmax.py", "v0.1", store=store).problem_id == "v0.1/level1/23_Softmax"
    assert stream_problem("level1/23_Softmax", "v3", store=store).problem_id == "v3/level1/23_Softmax"
    # same name, two revisions: each revision gives its own row
    assert stream_problem("23_Softmax", "v3", store=store).row["code"] != stream_problem("23_Softmax", "v0.1", store=store).row["code"]
    with pytest.raises(ProblemNotFound, match="did you mean v3/level1/36_RMSNorm_"):
        stream_problem("36_RMSNorm", "v3", store=store)
    with pytest.raises(ProblemNotFound):
        stream_problem("19_ReLU", "v3", store=store)  # a v0.1 problem is not in the v3 revision
    with pytest.raises(RevisionError):
        stream_problem("19_ReLU", "v2", store=store)


def test_stream_ambiguous_name(tmp_path, root):
    make_root(tmp_path / "r", {"v3": ["level1/23_Softmax.py"]})
    (tmp_path / "r" / "v3" / "level2").mkdir()
    (tmp_path / "r" / "v3" / "level2" / "23_Softmax.py").write_text((root / "v3/level1/23_Softmax.py").read_text())
    st = LocalStore(tmp_path / "store")
    pb.build_problems(tmp_path / "f", "v3", tmp_path / "r", cache=False)
    st.publish(PROBLEMS, tmp_path / "f", tag="v3")
    with pytest.raises(ProblemNotFound, match="ambiguous.*v3/level1/23_Softmax, v3/level2/23_Softmax"):
        stream_problem("23_Softmax", "v3", store=st)
    assert stream_problem("v3/level2/23_Softmax", "v3", store=st).problem_id == "v3/level2/23_Softmax"
    assert not (st.root / PROBLEMS / "snapshots").exists()  # streaming reads the blobs, materialises nothing


def test_runs_are_appended_never_rewritten(tmp_path):
    st = LocalStore(tmp_path / "store")
    first = rb.append_runs(st, RUNS, run_records(5))
    assert first.created and first.rows_added == 5
    files1 = st.list_files(RUNS)
    again = rb.append_runs(st, RUNS, run_records(5))
    assert not again.created and again.rows_added == 0 and again.rows_present == 5
    assert st.resolve(RUNS) == first.commit
    second = rb.append_runs(st, RUNS, run_records(8))  # 3 new ones
    assert second.created and second.rows_added == 3
    files2 = st.list_files(RUNS)
    new = sorted(set(files2) - set(files1))
    assert new == [rb.shard_path(f"local-{i:05d}" for i in range(5, 8))]
    old_tree = st._commit(RUNS, first.commit)["tree"]
    new_tree = st._commit(RUNS, second.commit)["tree"]
    assert all(new_tree[p] == old_tree[p] for p in old_tree if p != "README.md")  # shards untouched
    runs, rev = st.load(RUNS, split="train")
    assert sorted(runs["record_id"]) == [f"local-{i:05d}" for i in range(8)] and rev == second.commit
    assert "**8 records**" in st.read_text(RUNS, "main", "README.md")
    # a built folder of runs publishes the same way (append)
    rb.build_runs(run_records(10), tmp_path / "folder")
    third = publish_folder(st, RUNS, tmp_path / "folder")
    assert third.rows_added == 2 and third.rows_present == 8


def test_malformed_records_publish_nothing(tmp_path):
    st = LocalStore(tmp_path / "store")
    rb.append_runs(st, RUNS, run_records(3))
    refs = (st.root / RUNS / "refs.json").read_bytes()
    bad = run_records(6)
    bad[4]["status"] = "fine"
    with pytest.raises(SchemaError, match=r"row 4: RunRecord.status"):
        rb.append_runs(st, RUNS, bad)
    assert (st.root / RUNS / "refs.json").read_bytes() == refs


def test_bad_folder_publishes_nothing(tmp_path, folders):
    import shutil

    import pyarrow.parquet as pq

    st = LocalStore(tmp_path / "store")
    bad = tmp_path / "bad"
    shutil.copytree(folders["v3"], bad)
    shard = bad / "data" / "all" / "level1-00000-of-00001.parquet"
    os.chmod(shard, 0o644)
    t = pq.read_table(shard)
    pq.write_table(t.drop_columns(["code"]), shard)
    with pytest.raises(SchemaError, match="'code' is missing"):
        publish_folder(st, PROBLEMS, bad, tag="v3")
    assert not (st.root / PROBLEMS).exists()


def test_default_root_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("KB_STORE", str(tmp_path / "x"))
    assert default_store_root() == tmp_path / "x" and open_store("local").root == tmp_path / "x"
    monkeypatch.delenv("KB_STORE")
    assert default_store_root().parts[-2:] == (".kb", "store")


def test_cli_build_publish_pull(tmp_path, root, capsys):
    from kb_data.cli import main

    store_root = tmp_path / "store"
    assert main(["build", "problems", "--problems", str(root), "--store-root", str(store_root), "--no-cache"]) == 0
    out = capsys.readouterr().out
    st = LocalStore(store_root)
    revs = st.revisions(PROBLEMS)
    assert revs["branches"]["main"] == revs["tags"]["v3"]
    assert f"{PROBLEMS} v0.1: 3 rows -> {revs['tags']['v0.1'][:12]} tag v0.1 (new commit)" in out
    assert f"v0.1 = {revs['tags']['v0.1']}" in out
    # again: nothing changes
    assert main(["build", "problems", "--problems", str(root), "--store-root", str(store_root)]) == 0
    assert "(unchanged)" in capsys.readouterr().out and st.revisions(PROBLEMS) == revs

    assert main(["pull", "problems", "--revision", "v0.1", "--store-root", str(store_root), "--out", str(tmp_path / "pulled")]) == 0
    out = capsys.readouterr().out
    assert revs["tags"]["v0.1"] in out and "config all (default): level1=2 level2=1" in out
    assert folder_files(tmp_path / "pulled") == folder_files(st.snapshot(PROBLEMS, "v0.1"))

    records = tmp_path / "records.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in run_records(4)))
    assert main(["publish", "runs", "--records", str(records), "--no-upstream", "--store-root", str(store_root)]) == 0
    assert "4 new" in capsys.readouterr().out
    assert main(["publish", "runs", "--records", str(records), "--no-upstream", "--store-root", str(store_root)]) == 0
    assert "0 new, 4 already published" in capsys.readouterr().out

    assert main(["pull", "problems", "--revision", "v9", "--store-root", str(store_root)]) == 2
    assert "unknown revision 'v9'" in capsys.readouterr().err
    assert main(["revisions", "problems", "--store-root", str(store_root)]) == 0
    assert f"tag\tv3\t{revs['tags']['v3']}" in capsys.readouterr().out


def test_append_refuses_shards_of_another_schema(tmp_path):
    import pyarrow.parquet as pq

    st = LocalStore(tmp_path / "store")
    rb.build_runs(run_records(3), tmp_path / "old")
    shard = next((tmp_path / "old" / "data").glob("*.parquet"))
    pq.write_table(pq.read_table(shard).drop_columns(["host"]), shard)  # as if written by an older schema
    st.publish(RUNS, tmp_path / "old")  # the store takes any folder; only publish_folder validates
    refs = (st.root / RUNS / "refs.json").read_bytes()
    with pytest.raises(PublishError, match="'host' is missing.*kb migrate runs"):
        rb.append_runs(st, RUNS, run_records(5))
    assert (st.root / RUNS / "refs.json").read_bytes() == refs


def test_kb_migrate_rewrites_older_shards_keeping_every_record_then_appends_work(tmp_path, capsys):
    """A runs dataset published under an older schema (columns missing, schema_version 1.3) is rewritten in the
    current schema as one commit: the same record ids and values, the missing fields at their defaults and
    `accepted` from the status; after it, appending works; a second migrate does nothing."""
    import pyarrow.parquet as pq

    from kb_data.cli import main
    from kb_data.schema import SCHEMA_VERSION

    root = tmp_path / "store"
    st = LocalStore(root)
    rb.build_runs(run_records(3), tmp_path / "old")
    shard = next((tmp_path / "old" / "data").glob("*.parquet"))
    old = pq.read_table(shard)
    old = old.drop_columns([c for c in ("sandbox", "accepted", "failure_cause", "audit_of") if c in old.column_names])
    old = old.set_column(old.column_names.index("schema_version"), "schema_version",
                         pa.array(["1.3"] * len(old), pa.string()))
    pq.write_table(old, shard)
    st.publish(RUNS, tmp_path / "old")
    before = st.revisions(RUNS)["branches"]["main"]
    assert main(["migrate", "runs", "--store-root", str(root)]) == 0
    assert "3 record(s) rewritten in schema" in capsys.readouterr().out
    table, _ = st.read_table(RUNS, "main")
    rows = {r["record_id"]: r for r in table.to_pylist()}
    assert sorted(rows) == sorted(r["record_id"] for r in old.to_pylist())
    for r in old.to_pylist():
        assert rows[r["record_id"]]["model"] == r["model"] and rows[r["record_id"]]["speedup"] == r["speedup"]
        assert rows[r["record_id"]]["accepted"] == (r["status"] == "ok")
    assert {r["schema_version"] for r in rows.values()} == {SCHEMA_VERSION}
    assert st.resolve(RUNS, before) == before  # the old commit stays reachable
    assert rb.append_runs(st, RUNS, run_records(5)).rows_added == 2
    assert main(["migrate", "runs", "--store-root", str(root)]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_a_modified_blob_is_refused_by_every_read_and_by_kb_pull(tmp_path, store, capsys):
    """A blob whose bytes no longer hash to the id its commit records (a store edited by hand, a bad disk) is never
    read: text, snapshots, Parquet sources and `kb pull` refuse it, and pull copies nothing."""
    from kb_data.cli import main
    from kb_data.store import IntegrityError

    commit, tree = store.tree(PROBLEMS, "v0.1")
    shard = next(p for p in tree if p.endswith(".parquet"))
    blob = store.blob_path(PROBLEMS, tree[shard]["sha256"])
    assert store.read_text(PROBLEMS, "v0.1", "README.md").startswith("---")  # intact: read as usual
    os.chmod(blob, 0o644)
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, one byte flipped
    blob.write_bytes(bytes(data))
    fresh = LocalStore(store.root)  # verification is cached per process and file state: a new reader checks again
    with pytest.raises(IntegrityError, match="does not match its recorded sha256"):
        fresh.parquet_source(PROBLEMS, "v0.1")
    with pytest.raises(IntegrityError):
        fresh.snapshot(PROBLEMS, "v0.1")
    out = tmp_path / "pulled"
    assert main(["pull", "problems", "--revision", "v0.1", "--store-root", str(store.root), "--out", str(out)]) != 0
    assert "does not match its recorded sha256" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())
    assert fresh.read_text(PROBLEMS, "v3", "README.md").startswith("---")  # another revision's blobs still read


def _raw(url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None) -> tuple[int, bytes]:
    """A request as a hostile client sends it (huggingface_hub would refuse some of these paths itself)."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _commit_body(files: dict[str, bytes]) -> bytes:
    import base64

    lines = [json.dumps({"key": "header", "value": {"summary": "c"}})]
    lines += [json.dumps({"key": "file", "value": {"path": p, "encoding": "base64",
                                                   "content": base64.b64encode(d).decode()}}) for p, d in files.items()]
    return "\n".join(lines).encode()


def test_a_writable_serve_refuses_paths_and_refs_that_would_escape_or_shadow(tmp_path):
    """A client of `kb serve --writable` cannot commit a file whose path climbs out of the dataset (a later pull or
    audit wrote it outside the store), cannot make a branch that takes over a tag or a commit id, nor a tag named
    main; a malformed request gets an answer, and the store holds what it held."""
    from kb_data.serve import serving

    with serving(tmp_path / "store", writable=True) as srv:
        api = f"{srv.url}/api/datasets/local"
        assert _raw(f"{srv.url}/api/repos/create", "POST", json.dumps({"type": "dataset", "name": "ds"}).encode())[0] == 200
        ok, _ = _raw(f"{api}/ds/commit/main", "POST", _commit_body({"README.md": b"---\n---\n", "data.csv": b"a\n1\n"}))
        assert ok == 200
        main = srv.store.resolve("ds", "main")
        assert _raw(f"{api}/ds/tag/main", "POST", json.dumps({"tag": "v1"}).encode())[0] == 200
        for path in ("d/../../../../../escaped", "a/./b", "a//b", "..", "a\\..\\b"):
            status, body = _raw(f"{api}/ds/commit/main", "POST", _commit_body({path: b"x"}))
            assert status == 400 and b"invalid file path" in body, (path, status, body)
        for branch in ("v1", main, main[:12]):  # a tag's name, a commit id, a commit id's prefix
            status, body = _raw(f"{api}/ds/branch/{branch}", "POST", b"{}")
            assert status == 409, (branch, status, body)
        assert _raw(f"{api}/ds/tag/main", "POST", json.dumps({"tag": "main"}).encode())[0] == 409
        for bad in (b'{"tag": ["x"]}', b"[1, 2]", b"[" * 100000):
            assert _raw(f"{api}/ds/tag/main", "POST", bad)[0] == 400
        assert _raw(f"{api}/ds/commit/main", "POST", b"")[0] == 400
        assert _raw(f"{api}/ds/commit/main", "POST", b"x", {"Content-Length": str(1 << 41)})[0] == 413
        refs = srv.store.revisions("ds")
        assert refs == {"branches": {"main": main}, "tags": {"v1": main}}
    assert not (tmp_path / "escaped").exists() and not list(tmp_path.rglob("escaped"))


def test_the_store_never_writes_a_commit_path_outside_a_snapshot(tmp_path):
    """A commit whose tree names a path outside (written into the store before paths were checked) is refused when
    the snapshot is made: nothing lands outside the store."""
    store = LocalStore(tmp_path / "store")
    store.create("ds")
    blob = store.put_blob("ds", b"outside")
    with pytest.raises(PublishError, match="invalid file path"):
        store.commit_tree("ds", {"../../../escaped": blob}, "c", "main", expect=None)
    commit = tree_id({"a/../../../../escaped": blob})  # planted by hand, as an older store could hold it
    (store.root / "ds" / "commits").mkdir(parents=True, exist_ok=True)
    (store.root / "ds" / "commits" / f"{commit}.json").write_text(json.dumps({"id": commit, "tree": {
        "a/../../../../escaped": blob}, "message": "old"}))
    with pytest.raises(PublishError, match="invalid file path"):
        store.snapshot("ds", commit)
    assert not list(tmp_path.rglob("escaped"))
