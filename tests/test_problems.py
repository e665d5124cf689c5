"""The problem model and the `kb ls` / `kb validate` commands."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from kb_data.cli import main
from kb_data.meta import analyze_on_meta
from kb_data.problems import (ProblemError, ProblemSet, level_of, load_problem, load_source, problem_id_from_path,
                              problem_row, validate_path)
from kb_data.schema import Problem

REPO = Path(__file__).resolve().parents[1]
SOFTMAX = REPO / "problems" / "v3" / "level1" / "23_Softmax.py"


def _write(root: Path, rel: str, code: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(code)
    return p


def test_id_level_and_hash_from_the_path():
    lp = load_problem(SOFTMAX)
    assert lp.problem_id == "v3/level1/23_Softmax" and lp.name == "23_Softmax" and lp.file == "23_Softmax.py"
    assert lp.level == 1 and level_of("tile_specialized") == 1 and level_of("metal_level3") == 3
    import hashlib

    assert lp.sha256 == hashlib.sha256(SOFTMAX.read_bytes()).hexdigest()
    assert lp.metadata["OP_TYPE"] == "softmax" and lp.rules["seeds"] == [42, 123, 456, 789, 1337]
    assert load_source(SOFTMAX.read_text(), lp.problem_id).sha256 == lp.sha256


@pytest.mark.parametrize("code,needle", [
    ("def broken(:\n", "syntax error at line 1"),
    ("import torch\nclass Model: pass\n", "does not define get_inputs, get_init_inputs"),
    ("raise ImportError('needs foo')\n", "importing the problem raised ImportError: needs foo"),
])
def test_broken_problem_files_name_the_file_and_the_fault(tmp_path, code, needle):
    p = _write(tmp_path, "v3/level1/x.py", code)
    with pytest.raises(ProblemError) as e:
        load_problem(p, tmp_path)
    assert str(p) in str(e.value) and needle in str(e.value)


def test_bad_paths_and_duplicates(tmp_path):
    with pytest.raises(ProblemError, match="unknown suite"):
        problem_id_from_path(_write(tmp_path / "other", "v9/level1/a.py", ""), tmp_path / "other")
    code = SOFTMAX.read_text()
    _write(tmp_path, "v0.1/level1/23_Softmax.py", code)
    _write(tmp_path, "v0.1/level2/23_Softmax.py", code)
    with pytest.raises(ProblemError, match="duplicate problem name '23_Softmax' in suite v0.1"):
        ProblemSet(tmp_path)


def test_resolve_by_name_file_or_id_and_suggest_on_typos():
    ps = ProblemSet()
    assert ps.resolve("23_Softmax", "v3") == "v3/level1/23_Softmax"
    assert ps.resolve("23_Softmax.py", "v3") == "v3/level1/23_Softmax"
    assert ps.resolve("v0.1/level1/23_Softmax") == "v0.1/level1/23_Softmax"
    with pytest.raises(ProblemError, match="ambiguous"):
        ps.resolve("23_Softmax")
    with pytest.raises(ProblemError, match="did you mean .*23_Softmax"):
        ps.resolve("23_Sofmax", "v3")


def test_meta_analysis_computes_nothing_and_gets_shapes_flops_bytes():
    lp = load_problem(REPO / "problems" / "v3" / "level1" / "1_Square_matrix_multiplication_.py")
    m = analyze_on_meta(lp)
    assert m.device == "meta" and m.error is None
    assert m.outputs == [{"shape": [2048, 2048], "dtype": "float32"}]
    assert m.flops == 2 * 2048 ** 3 and m.min_bytes == 3 * 2048 * 2048 * 4
    assert m.trace == ["aten.mm.default(f32[2048, 2048], f32[2048, 2048])->f32[2048, 2048]"]
    assert [i["generator"] for i in m.inputs] == ["randn", "randn"]


def test_the_meta_kernel_memo_changes_no_fact_of_a_recurrent_problem(tmp_path, monkeypatch):
    """The meta analysis replays the output metadata of an op it has seen with the same argument metadata instead of
    running its (Python) meta kernel again: an LSTM's trace, FLOPs, shapes and bytes are those of the plain run. The
    forward also changes metadata in place (unsqueeze_, squeeze_, t_) and takes views, which the memo must run every time."""
    import contextlib

    from kb_data import meta

    (tmp_path / "v0.1" / "level3").mkdir(parents=True)
    path = tmp_path / "v0.1" / "level3" / "1_TinyLSTM.py"
    path.write_text("""import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        out, _ = self.lstm(x)
        y = self.fc(out[:, -1, :])
        a, b = y.clone(), y.clone()
        a.unsqueeze_(0)
        b.unsqueeze_(0)  # the same in-place op on the same metadata again: it must run again
        c = b.clone().squeeze_().t_()
        return torch.cat([torch.cat([a, b]).flatten(), c.flatten(), out.transpose(0, 1)[0].sigmoid().sum(0)])


def get_inputs():
    return [torch.randn(3, 40, 8)]


def get_init_inputs():
    return []
""")
    lp = load_problem(path, tmp_path)
    seen = []
    real = meta.MetaKernelMemo

    class Counting(real):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(len(self.seen))
            return super().__torch_dispatch__(func, types, args, kwargs)

    monkeypatch.setattr(meta, "MetaKernelMemo", Counting)
    memo = meta.analyze_on(lp, "meta", with_trace=True)
    monkeypatch.setattr(meta, "MetaKernelMemo", contextlib.nullcontext)
    plain = meta.analyze_on(lp, "meta", with_trace=True)
    assert memo.error is None and memo == plain
    assert memo.outputs == [{"shape": [24 + 12 + 16], "dtype": "float32"}] and memo.flops > 0
    assert len(seen) > 10 * max(seen)  # most ops were replayed, not run


def test_input_generators_survive_reused_ids():
    """An input's generator label follows the tensor, not its id: temporaries of get_inputs die and their ids are
    reused by later tensors (v3/graphics/particles gave `randn` for its scalar `dt` in one build of four)."""
    import weakref

    from kb_data.meta import _FactoryRecorder

    rec, x, other = _FactoryRecorder(), torch.zeros(1), torch.zeros(1)
    rec.produced[id(x)] = (weakref.ref(other), "randn")  # what a dead temporary with x's id would have left
    assert rec.generator_of(x) is None
    rec.produced[id(x)] = (weakref.ref(x), "rand")
    assert rec.generator_of(x) == "rand"
    lp = load_problem(REPO / "problems" / "v3" / "graphics" / "particles.py")
    labels = {tuple(i["generator"] for i in analyze_on_meta(lp, with_trace=False).inputs) for _ in range(12)}
    assert labels == {("derived(rand)", "derived(randn)", None, None)}


def test_problem_row_is_a_valid_record():
    row = problem_row(load_problem(REPO / "problems" / "v3" / "level1" / "40_LayerNorm.py"))
    Problem.from_row(row.to_row())
    assert row.inputs == [{"name": "x", "shape": [16, 64, 256, 256], "dtype": "float32", "generator": "randn"}]
    assert row.gpus == ["RTX3090", "H100", "B200"] and json.loads(row.init_args) == [[64, 256, 256]]
    assert row.rules["suite"] == "v3" and row.flops == 0


def test_known_issue_is_not_a_validation_failure():
    ps = ProblemSet()
    v = validate_path(ps.paths["v3/level4/1_DeepSeek_MLA"], ps.root)
    assert v.status == "known_issue" and "meta run fails as documented" in v.message
    assert validate_path(SOFTMAX, ps.root).status == "ok"


def test_kb_ls_counts(capsys):
    assert main(["ls", "--suite", "v0.1", "--ids-only"]) == 0
    ids = capsys.readouterr().out.split()
    counts = {c: sum(i.split("/")[1] == c for i in ids) for c in ("level1", "level2", "level3", "level4")}
    assert counts == {"level1": 100, "level2": 100, "level3": 50, "level4": 20}
    assert main(["ls", "--suite", "v3", "--ids-only"]) == 0
    v3 = capsys.readouterr().out.split()
    assert len(v3) == 86 and sum("/metal_" in i for i in v3) == 26
    for gpu, n in (("H100", 54), ("RTX3090", 43), ("B200", 58), ("M4MAX", 26)):
        assert main(["ls", "--suite", "v3", "--gpu", gpu, "--ids-only"]) == 0
        assert len(capsys.readouterr().out.split()) == n, gpu
    assert main(["ls", "--suite", "v3", "--gpu", "B200", "--ids-only"]) == 0
    b200 = capsys.readouterr().out.split()
    assert "v3/level4/9_FP4_BlockScaled_Matmul" in b200 and not any("graphics" in i for i in b200)
    assert main(["ls", "--suite", "v3", "--category", "level1"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("v3/level1/23_Softmax"))
    assert "op_type=softmax" in line and "gpus=RTX3090,H100,B200" in line


def test_kb_validate_fails_with_a_list(tmp_path, capsys):
    _write(tmp_path, "v3/level1/23_Softmax.py", SOFTMAX.read_text())
    _write(tmp_path, "v3/level1/bad.py", "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                                          "        return x.item()\ndef get_inputs():\n    return [torch.randn(2)]\n"
                                          "def get_init_inputs():\n    return []\n")
    assert main(["validate", "--problems", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "v3/level1/bad" in err and "23_Softmax" not in err
