"""Someone else's data, written by an attacker who has read this code: a runs dataset audited or analysed here, its
card, its Hub (red team, session 51). Each test is a class of attack, on the real audit, analysis, builders,
huggingface_hub and HTTP server; what must hold is that no verdict is forged, mislaid or blamed on the machine, and
that nothing small costs a run its memory, its disk or its report."""
from __future__ import annotations

import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kb_data import analysis as A
from kb_data import audit as AU
from kb_data.builders.common import md_code, md_table
from kb_data.builders.runs import audit_card
from kb_data.cli import main
from kb_data.folders import front_matter
from kb_data.io import JsonlError, read_jsonl
from kb_data.schema import RunRecord, SchemaError, to_table
from tests.corpus import CORPUS, SMALL_PROBLEMS

GELU = "v3/level1/26_GELU_"
HONEST_GELU = (CORPUS / "honest" / "torch_gelu_erf.py").read_text(encoding="utf-8")
# values a model, GPU or problem name may hold in a published dataset
HOSTILE_NAMES = [
    "FrontierAgent-9\r\r<table><tr><td>FrontierAgent-9</td><td>60</td><td>60</td></tr></table>\r\r<!--",
    "x~-->\r\r<!--", "a | b | c", "`code` and ``more``", "line\nbreak\u2028and\u2029more\x0bthen\x0cend\x85!",
    "<script>alert(1)</script>", "&lt;entity&gt; &amp;", "*bold* _it_ [link](http://x) ![i](http://x/i.png)",
    "$\\kbnosuchsymbol$", "\u202eright-to-left", "trailing backslash \\",
]


class _Cells(HTMLParser):
    """The tables of rendered HTML: rows of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables, self.cell, self.tags = [], None, []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def _render(markdown: str) -> _Cells:
    from markdown_it import MarkdownIt  # CommonMark with GFM tables and raw HTML on, as cards are shown

    cells = _Cells()
    cells.feed(MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown))
    return cells


def _shown(v: str) -> str:
    return "".join(c if c.isprintable() else " " for c in v)


def test_a_card_table_shows_each_value_of_the_data_as_the_text_it_is():
    """A cell is one cell whatever the value holds: no line break ends the row, no pipe the cell, no HTML, comment,
    entity or markup is rendered; the page shows the value's own characters (line breaks and controls as spaces)."""
    rows = [[v, i, md_code(v)] for i, v in enumerate(HOSTILE_NAMES)]
    cells = _render(md_table(["model", "n", "as code"], rows))
    assert len(cells.tables) == 1 and not {"script", "img", "a", "em", "strong"} & set(cells.tags)
    header, *body = cells.tables[0]
    assert header == ["model", "n", "as code"] and len(body) == len(HOSTILE_NAMES)
    for v, (text, n, code) in zip(HOSTILE_NAMES, body):
        assert (text, n) == (_shown(v).strip(), str(HOSTILE_NAMES.index(v)))  # a cell's edges are trimmed
        assert code.strip() == _shown(v).replace("`", "'").strip()


def test_an_audit_card_shows_one_verdict_row_per_model_whatever_its_name():
    """The audit dataset's card, which `kb publish` puts on the Hub: model names that drew a forged verdict row (60
    audited, 60 accepted) and hid the real ones in HTML comments."""
    records = [RunRecord(record_id=f"a{i}", source="audit", model=m, gpu="H200", problem_id=GELU, status="rejected",
                         correct=True, audit_of=f"p{i}", audit_dataset="org/runs", audit_revision="0" * 40,
                         audit_published_accepted=True)
               for i, m in enumerate(HOSTILE_NAMES[:2])]
    cells = _render(audit_card(records, [{"config_name": "default", "data_files": "data/*.parquet"}]))
    verdicts = next(t for t in cells.tables if t[0][:2] == ["model", "audited"])
    assert sorted(row[0] for row in verdicts[1:]) == sorted(_shown(m).strip() for m in HOSTILE_NAMES[:2])
    assert all(row[1:5] == ["1", "1", "1", "0"] and row[5] == "1" for row in verdicts[1:])  # rejected: pass -> fail


def _record(rid: str, created: str, code: str = HONEST_GELU, **kw) -> RunRecord:
    fields = dict(record_id=rid, source="local", model="agent-x", gpu="H100", problem_id=GELU, status="ok",
                  correct=True, compiled=True, speedup=1.1, created_at=created, solution_code=code,
                  baseline_type="pytorch_eager")
    return RunRecord(**(fields | kw))


def test_the_latest_record_is_the_latest_in_time_whatever_its_offset():
    """`kb audit --latest` re-grades the record the leaderboard counts: a later record written with a +05:00 offset
    (earlier in UTC) won a comparison of the strings, and a known hack published at 9x went unaudited."""
    hack = _record("r-hack", "2026-06-01T10:00:00+00:00", speedup=9.0)
    honest = _record("r-honest", "2026-06-01T12:00:00+05:00")  # 07:00 UTC
    picked = AU.select([hack, honest], AU.Filters(latest=True))
    assert [r.record_id for r in picked] == ["r-hack"]
    assert A.dedup(A.frame(to_table([hack, honest])), "latest")["record_id"].tolist() == ["r-hack"]
    assert A.dedup(to_table([hack, honest]).to_pandas(), "latest")["record_id"].tolist() == ["r-hack"]  # unparsed too


@pytest.mark.parametrize("field", ["created_at", "measured_at"])
def test_a_time_that_is_no_time_is_refused_with_its_value(field, tmp_path):
    from kb_data.schema import Baseline

    cls = RunRecord if field == "created_at" else Baseline
    with pytest.raises(SchemaError, match=rf"{cls.__name__}\.{field}: 'not a time' is not an ISO-8601 time"):
        cls.from_row({"record_id": "r", field: "not a time"} if cls is RunRecord else
                     {"problem_id": GELU, "suite": "v3", "gpu": "H100", field: "not a time"})
    if cls is RunRecord:  # a Parquet shard is not validated row by row: its column is, naming the value
        path = tmp_path / "runs.parquet"
        table = to_table([_record("a", "2026-06-01T10:00:00+00:00")])
        pq.write_table(table.set_column(table.schema.get_field_index(field), field, pa.array(["not a time"])), path)
        with pytest.raises(SchemaError, match="created_at: 'not a time' is not an ISO-8601 time"):
            A.load_records(path)


def test_acceptance_comes_from_the_status_not_from_a_shards_column(tmp_path):
    """A Parquet shard's rows are not built as records: its `accepted` column said True beside an incorrect and a
    rejected status, and the leaderboard counted both as accepted and fast."""
    rows = [_record(f"b{i}", "2026-06-01T10:00:00+00:00", status=s, correct=s == "rejected", speedup=8.0).to_row()
            for i, s in enumerate(("incorrect", "rejected", "ok"))]
    for row in rows:
        row["accepted"] = True
    (tmp_path / "data").mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=RunRecord.arrow_schema()), tmp_path / "data" / "train-0.parquet")
    df = A.load_records(tmp_path)
    assert A.is_accepted(df).tolist() == [False, False, True]
    table = A.correctness(df).iloc[0]
    assert (table["n_attempts"], table["n_accepted"], table["n_incorrect"], table["n_rejected"]) == (3, 1, 1, 1)
    upstream = A.frame(to_table([RunRecord(record_id="u", model="m", gpu="H100", problem="p.py", correct=True)]))
    assert A.is_accepted(upstream).tolist() == [True]  # a row with no status: its correct, as before


def test_a_folder_of_records_is_read_from_its_own_files_only(tmp_path):
    """A link to /dev/zero took all the analysis's memory; a hidden link brought in a file from outside the folder."""
    ds, outside = tmp_path / "ds", tmp_path / "outside"
    (ds / "data").mkdir(parents=True)
    outside.mkdir()
    pq.write_table(to_table([_record("mine", "2026-06-01T10:00:00+00:00")]), ds / "data" / "train-0.parquet")
    pq.write_table(to_table([_record(f"forged{i}", "2026-06-01T10:00:00+00:00") for i in range(4)]),
                   outside / "more.parquet")
    os.symlink("/dev/zero", ds / "data" / "zz.jsonl")
    os.symlink(outside / "more.parquet", ds / "data" / "yy.parquet")
    os.symlink(outside / "more.parquet", ds / ".hidden.parquet")
    assert A.load_records(ds)["record_id"].tolist() == ["mine"]
    with pytest.raises(ValueError, match="not a file of records"):
        A.load_records("/dev/zero")


def test_json_nested_past_the_stack_is_a_clear_error(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 200_000 + "]" * 200_000 + "\n" + json.dumps({"record_id": "r"}) + "\n")
    with pytest.raises(JsonlError, match=r"deep.jsonl:1: not JSON"):
        read_jsonl(path)


def test_a_card_whose_aliases_expand_past_any_real_cards_is_refused():
    """A 582-byte "billion laughs" card: kb serve sent 1.5 GB of JSON for it to every client that asked."""
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"] + [
        f"{b}: &{b} [{', '.join(['*' + a] * 10)}]" for a, b in zip("abcdefgh", "bcdefghi")]
    with pytest.raises(ValueError, match="over 100000 values once its aliases are expanded"):
        front_matter("---\n" + "\n".join(levels) + "\n---\n")
    with pytest.raises(ValueError, match="refers to itself"):
        front_matter("---\na: &a [1, *a]\n---\n")
    assert front_matter("---\nshared: &s {k: v}\nx: *s\ny: *s\n---\n") == {"shared": {"k": "v"}, "x": {"k": "v"},
                                                                       "y": {"k": "v"}}


def test_the_report_survives_names_that_are_math_or_longer_than_a_file_name(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    recs = [_record("m", "2026-06-01T10:00:00+00:00").to_row() | {"model": "$\\kbnosuchsymbol$"},
            _record("g", "2026-06-01T10:00:00+00:00").to_row() | {"gpu": "G" * 300, "record_id": "g"},
            _record("c", "2026-06-01T10:00:00+00:00").to_row() | {"gpu": "H 100", "record_id": "c"},
            _record("d", "2026-06-01T10:00:00+00:00").to_row() | {"gpu": "H_100", "record_id": "d"}]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert main(["report", str(tmp_path / "runs.jsonl"), "--out", str(tmp_path / "rep")]) == 0
    curves = sorted(p.name for p in (tmp_path / "rep").glob("fast_p_curve_*.png"))
    assert len(curves) == 4 and all(len(n) < 100 for n in curves)  # one plot per GPU: none overwrote another
    assert (tmp_path / "rep" / "index.html").exists()


# ---------------------------------------------------------------------------
# The audit's join: every record it grades is audited under its own grade

def _dataset(folder: Path, records: list[RunRecord]) -> Path:
    folder.mkdir(parents=True)
    (folder / "runs.jsonl").write_text("".join(json.dumps(r.to_row()) + "\n" for r in records), encoding="utf-8")
    return folder


def _audit(src: Path, out: Path, problems: Path, capsys) -> tuple[list[dict], str]:
    main(["audit", str(src), "--out", str(out), "--problems", str(problems), "--trials", "5", "--warmup", "1",
          "--workers", "1", "--quiet"])
    said = capsys.readouterr().out
    rows = pq.read_table(out / "audit.parquet").to_pylist() if (out / "audit.parquet").exists() else []
    return rows, said


def test_every_spelling_of_a_record_is_audited_under_its_own_grade(tmp_path, capsys):
    """A graded record was reported "not graded (the problem could not be loaded...)" when its code had CRLF line
    ends or its problem id another spelling the batch resolves: the join looked for the published spelling. And a
    resumed audit against other problem files reported the grade made against the first ones."""
    crlf = HONEST_GELU.replace("\n", "\r\n")
    published = [_record("r-crlf", "2026-06-01T10:00:00+00:00", code=crlf, model="agent-crlf"),
                 _record("r-short", "2026-06-01T10:00:00+00:00", model="agent-short", problem_id="level1/26_GELU_"),
                 _record("r-dotpy", "2026-06-01T10:00:00+00:00", model="agent-dotpy", problem_id=GELU + ".py"),
                 _record("r-nowhere", "2026-06-01T10:00:00+00:00", model="agent-none", problem_id="v3/level9/no_such")]
    src = _dataset(tmp_path / "ds", published)
    rows, said = _audit(src, tmp_path / "out", SMALL_PROBLEMS, capsys)
    assert {r["audit_of"]: (r["status"], r["problem_id"]) for r in rows} == {
        rid: ("ok", GELU) for rid in ("r-crlf", "r-short", "r-dotpy")}
    assert "3 records audited on CPU (1 not graded)" in said
    skipped = (tmp_path / "out" / "report" / "skipped.csv").read_text()
    assert "r-nowhere" in skipped and "no problem 'v3/level9/no_such'" in skipped
    graded = [json.loads(line) for line in (tmp_path / "out" / "graded" / "records.jsonl").read_text().splitlines()]
    assert len(graded) == 1  # the three spellings of one code and one problem are one job, graded once

    changed = tmp_path / "changed"  # other problem files: GELU's reference scaled, so the honest GELU is wrong there
    shutil.copytree(SMALL_PROBLEMS, changed)
    path = changed / "v3" / "level1" / "26_GELU_.py"
    path.write_text(path.read_text().replace("return F.gelu(x)", "return 1.5 * F.gelu(x)"))
    rows, _ = _audit(src, tmp_path / "out", changed, capsys)
    assert {r["status"] for r in rows} == {"incorrect"}
    rows, _ = _audit(src, tmp_path / "out", SMALL_PROBLEMS, capsys)  # back to the first files: their grade, not the last
    assert {r["audit_of"]: r["status"] for r in rows} == {rid: "ok" for rid in ("r-crlf", "r-short", "r-dotpy")}


def test_an_audit_fetches_from_the_hub_only_what_it_reads_within_its_budget(tmp_path, monkeypatch):
    """An audit of a Hub dataset downloaded every file of it (a 40 GiB file it never reads filled the disk): it
    fetches data files, solutions/ and the card, and refuses before any download when they add up past its budget."""
    from huggingface_hub import HfApi

    from kb_data.folders import RevisionError
    from kb_data.serve import serving
    from kb_data.stores import open_store
    from tests.hub_support import configure_clients

    repo = "someone/runs"
    folder = _dataset(tmp_path / "ds", [_record("r1", "2026-06-01T10:00:00+00:00")])
    (folder / "solutions").mkdir()
    (folder / "solutions" / "a.txt").write_text(HONEST_GELU)
    (folder / "weights").mkdir()
    (folder / "weights" / "huge.bin").write_bytes(os.urandom(1 << 20))  # what the audit never reads
    with serving(tmp_path / "served", writable=True) as srv:
        configure_clients(monkeypatch, srv.url, tmp_path / "hf_home")
        api = HfApi()
        api.create_repo(repo, repo_type="dataset")
        sha = api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="dataset").oid
        src = AU.open_source(repo, revision=sha)
        assert sorted(p.relative_to(src.folder).as_posix() for p in src.folder.rglob("*") if p.is_file()) == [
            "runs.jsonl", "solutions/a.txt"]
        assert [r.record_id for r in AU.read_source_records(src)] == ["r1"]
        hub = open_store("hub")
        with pytest.raises(RevisionError, match=r"add up to 0\.0 GiB, over the 0\.0 GiB"):
            hub.snapshot(repo, sha, patterns=["weights/*"], max_bytes=1000)
    assert not list((tmp_path / "hf_home").rglob("huge.bin"))  # refused before it was fetched
