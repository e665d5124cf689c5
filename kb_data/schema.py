"""The one schema module: every record type of kb-data, with its pyarrow schema.

Builders, the harness, the stores and the analysis all import from here, so a field
is named, typed and validated in exactly one place. Units are in field names
(`_ms`, `_bytes`); enums are plain strings from the fixed sets below.

Rows are plain dicts (what Parquet, JSONL and `datasets` speak); the dataclasses
give them names, defaults and validation:

    rec = RunRecord(model="m", gpu="H200", ...)
    row = rec.to_row()                 # dict, JSON/Arrow friendly
    RunRecord.from_row(row) == rec     # validated on the way in
    table = to_table([rec, ...])       # pyarrow.Table with RunRecord.arrow_schema()
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable

import pyarrow as pa

SCHEMA_VERSION = "1.17"  # 1.1: timing_method on baselines and run records; 1.2: calibration on baselines;
# 1.3: the GPU-alone medians on baselines (eager_gpu_ms, compile_gpu_ms, gpu_alone_error); 1.4: run records say
# which sandbox graded them (`sandbox`), status memory_exceeded, flags check_failed and seed_independent_inputs;
# 1.5: run records say acceptance apart from numeric correctness (accepted), why a failure happened
# (failure_cause), and which record an audit re-graded (audit_of, audit_dataset, audit_revision, audit_published_accepted);
# 1.6: the side-stream flush check's bound and the CPU's timing margins in the rules (flush_slowdown,
# flush_slowdown_min_ms, timing_bound_margin_ms_cpu, reference_slowdown_min_ms_cpu); 1.7: how weights are perturbed
# (weights_perturbation) and which buffers are the problem's constants (constant_buffer_numel); 1.8: the share of
# timed batches that may exceed the timing bound (timing_bound_batch_share) and the shortest flush believed
# (flush_floor_share); 1.9: the precision floor's scale for fp16 and bf16 (precision_floor_scale_fp16,
# precision_floor_scale_bf16) and how far a claim may exceed its round trip (overclaim_factor, overclaim_ms); 1.10: the
# timing bound of a GPU batch held behind the judge's gate (timing_bound_slack_gated,
# timing_bound_margin_ms_gated, timing_bound_margin_ms_gated_batch); 1.11: the CPU's roofline share (roofline_slack_cpu);
# 1.12: the profiled call held to the timed ones (flag profile_mismatch; profile_busy_slack, profile_busy_margin_ms,
# profile_busy_margin_ms_cpu) and a CPU batch held to its share of the cores (cpu_share_slack, cpu_share_margin_ms);
# 1.13: a CPU's timed calls held to the framework time the profile's ops cover (framework_unseen_margin_ms_cpu)
# 1.14: that allowance's own slack (framework_unseen_slack_cpu), apart from the profiled call's busy-time slack
# 1.15: a CPU's timed calls held to their forward thread's CPU clock (timing_bound_slack_forward,
# timing_bound_margin_ms_forward); 1.16: and the aside thread's work past its no-work figure counted as the call's
# (timing_bound_slack_aside), and the rest of the sandbox's CPU past its own (timing_bound_margin_ms_rest); 1.17: a
# batch's paired reference counted at most this over the quickest batch (reference_batch_slack,
# reference_batch_margin_ms_cpu) and the host's interrupts while a CPU reference is timed (interrupt_storm_per_s,
# interrupt_storm_min)

SUITES = ("v0.1", "v3")
STATUSES = ("ok", "incorrect", "compile_error", "runtime_error", "timeout", "crashed", "rejected", "memory_exceeded")
# How the submission's process was isolated (kb_data.harness.sandbox): strong (namespaces, own uid, read-only
# file system), process (own uid or the caller's, limits), none (asked for explicitly)
SANDBOX_LEVELS = ("strong", "process", "none")
BASELINE_TYPES = ("pytorch_eager", "torch_compile", "pytorch")  # "pytorch": upstream's older eager-only runs
EAGER_BASELINE_TYPES = ("pytorch_eager", "pytorch")
BASELINE_SOURCES = ("measured", "derived")  # timed on the GPU by `kb baselines measure`, or from published runs
# a run record's baseline may also be "paired": the reference timed in the grading worker, trial for trial with
# the submission (eager, or on a GPU compiled as the baseline row was when that row chose torch.compile; baseline_type
# says which): what the speedup is computed from
RUN_BASELINE_SOURCES = BASELINE_SOURCES + ("paired",)
RECORD_SOURCES = ("upstream", "local", "audit")  # audit: a published record re-graded by `kb audit`
# Why a record failed: the machine it was graded on (a missing optional package, an API today's torch no longer has,
# a compiler that rejects code an older one built, no GPU for GPU code) or the submission itself.
FAILURE_CAUSES = ("environment", "solution")
# How a time was taken (kb_data.harness.timing). flush_queued: on the GPU, L2 flush, start event, call, end event
# enqueued with no host sync between (from 2026-12-01); device_synced: the device synchronized before the start
# and before the end event, so host latency is inside the time (rows from before, which lack the field);
# perf_counter: CPU wall clock.
# Times taken by different methods are not comparable: a baseline is only used for a record of its own method.
TIMING_METHODS = ("flush_queued", "device_synced", "perf_counter")
TIMING_METHOD_DOC = "how the times were taken (kb_data.schema.TIMING_METHODS); null: not recorded (upstream)"
FLAGS = (
    "output_aliases_input",
    "output_reused_memory",
    "side_stream_work",
    "timer_tampered",
    "reference_tampered",   # the submission replaced torch functions or settings the reference uses, or slowed it
    "nondeterministic",
    "no_custom_kernel",
    "calls_reference_ops",
    "precision_downgrade",
    "constant_output",
    "degenerate_problem",
    "ignores_weights",      # passes only with the default init; perturbed weights are not followed
    "input_overfit",        # passes only on the suite's (degenerate) input distribution
    "stale_output",         # an output that does not match the inputs of its call (cached, replayed, precomputed)
    "profile_mismatch",     # the profiled call did far more work than the timed calls took: it behaves differently when observed
    "lazy_output",          # a tensor subclass or deferred object instead of a plain tensor
    "exceeds_roofline",
    "excessive_speedup",
    "check_failed",         # an anti-cheat check could not run on this submission: never a pass
    "seed_independent_inputs",  # the problem's get_inputs ignores the seed: the harness varied the inputs itself
)
# Flags that only inform; every other flag fails a record unless a problem's rules say otherwise.
INFORMATIONAL_FLAGS = ("excessive_speedup", "degenerate_problem", "seed_independent_inputs")


class SchemaError(ValueError):
    """A row that does not fit its record type; the message names the field."""


def _f(arrow_type: pa.DataType, default: Any = None, *, required: bool = False, enum: tuple | None = None,
       doc: str = "", time: bool = False):
    meta = {"arrow": arrow_type, "required": required, "enum": enum, "doc": doc, "time": time}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: json.loads(json.dumps(d)), metadata=meta)
    return field(default=default, metadata=meta)


STR, I64, F64, BOOL = pa.string(), pa.int64(), pa.float64(), pa.bool_()
LIST_STR, LIST_I64 = pa.list_(pa.string()), pa.list_(pa.int64())
TENSOR_SPEC = pa.struct([("name", STR), ("shape", LIST_I64), ("dtype", STR), ("generator", STR)])
OUTPUT_SPEC = pa.struct([("shape", LIST_I64), ("dtype", STR)])
TOLERANCE = pa.struct([("precision", STR), ("atol", F64), ("rtol", F64)])
# Fixed GPU work timed next to a baseline (kb_data.harness.timing.CALIBRATION_WORK): medians from two machines
# are comparable only as far as their calibrations agree.
CALIBRATION = pa.struct([("gemm_ms", F64), ("copy_ms", F64), ("launch_ms", F64)])
RULES = pa.struct([
    ("suite", STR),
    ("candidate_class", STR),        # ModelNew (KernelBench) or Model (v3)
    ("weights", STR),                # same_seed | load_state_dict
    ("model_mode", STR),             # train | eval
    ("seeds", LIST_I64),             # correctness seeds, in order
    ("timing_seed", I64),
    ("check", STR),                  # allclose | max_abs_vs_ref_max
    ("tolerances", pa.list_(TOLERANCE)),
    ("precision_from", STR),         # how the precision class is chosen
    ("require_finite", BOOL),
    ("require_bitwise_repeat", BOOL),
    ("baseline", STR),               # eager | compile_if_faster
    ("compile_mode", STR),
    ("compile_threshold", F64),      # compile baseline used when compile_ms < threshold * eager_ms
    ("warmup", I64),
    ("trials", I64),
    ("l2_flush", BOOL),
    ("reference_after_candidate", BOOL),
    ("secret_seed", BOOL),
    ("fail_flags", LIST_STR),
    # the numbers behind the anti-cheat verdicts (schema 1.4): pinned with the rows like the tolerances
    ("tolerance_from", STR),         # what the harness's own tolerance class follows (reference_outputs)
    ("forbidden_op_families", LIST_STR),  # heavy work a candidate must not hand to the framework (kb_data.rules.OP_FAMILIES)
    ("excessive_speedup", F64),      # a speedup over this is flagged (informational)
    ("roofline_slack", F64),         # a time under this share of the physical floor fails
    ("timing_bound_slack", F64),     # the judge's clock may show this many times the claimed time ...
    ("timing_bound_margin_ms", F64),  # ... plus this (GPU) before the claim is called forged
    ("reference_slowdown_limit", F64),  # paired reference slower than alone by this factor ...
    ("reference_slowdown_min_ms", F64),  # ... and this many ms (GPU): reference_tampered
    ("precision_factor", F64),       # candidate's error to float64 over this many times the reference's ...
    ("precision_floor", F64),        # ... and over this (fp32 class; scaled for fp16 and bf16): precision_downgrade
    ("constant_rel", F64),           # outputs that move less than this across inputs while the reference's move
    ("flush_slowdown", F64),         # the L2 flush ahead of a timed call slower than in calibration by this factor ...
    ("flush_slowdown_min_ms", F64),  # ... and this many ms: work on another stream ran during it (side_stream_work)
    ("timing_bound_margin_ms_cpu", F64),     # the two margins on a CPU, whose time slices are milliseconds
    ("reference_slowdown_min_ms_cpu", F64),
    ("weights_perturbation", F64),   # perturbed weights move by this share of their mean magnitude (or factor e^x)
    ("constant_buffer_numel", I64),  # buffers up to this size (not parameters, not running statistics) are the
                                     # problem's constants (filter taps, colour matrices), never perturbed
    ("timing_bound_batch_share", F64),  # timer_tampered when more than this share of the counted batches exceed the
                                        # bound (each such batch is timed at the judge's figure in any case)
    ("flush_floor_share", F64),      # a candidate's L2 flush under this share of its calibration's did not flush
    ("precision_floor_scale_fp16", F64),  # precision_floor is the fp32 class's; the fp16 class's is this many times it
    ("precision_floor_scale_bf16", F64),  # ... and the bf16 class's this many
    ("overclaim_factor", F64),       # a batch's claimed time over this many times its round trip as the judge saw it
    ("overclaim_ms", F64),           # ... plus this is impossible: timer_tampered
    ("timing_bound_slack_gated", F64),  # a GPU batch held behind the judge's gate: its clock may show this many times
    ("timing_bound_margin_ms_gated", F64),  # ... the claimed time, plus this many ms a call
    ("timing_bound_margin_ms_gated_batch", F64),  # ... and this many a batch
    ("roofline_slack_cpu", F64),     # on a CPU, a time under this share of the floor its measured peaks give fails
    ("profile_busy_slack", F64),     # the profiled call's work (its GPU kernels, its CPU ops) over this many times
    ("profile_busy_margin_ms", F64),  # ... the timed median plus this (GPU) is profile_mismatch
    ("profile_busy_margin_ms_cpu", F64),  # ... or this (CPU)
    ("cpu_share_slack", F64),        # a CPU batch whose sandbox used more CPU than this many times its cores' share ...
    ("cpu_share_margin_ms", F64),    # ... of its round trip, plus this, is timed as its work takes on that share
    ("framework_unseen_slack_cpu", F64),  # CPU time a timed call spent in the framework's code over this many
    ("framework_unseen_margin_ms_cpu", F64),  # ... times the profile's ops x threads, plus this, is profile_mismatch
    ("timing_bound_slack_forward", F64),  # a CPU batch's claims under its forward thread's CPU clock (less a no-work
    ("timing_bound_margin_ms_forward", F64),  # call's) over this many times, plus this a call: floored, as above
    ("timing_bound_slack_aside", F64),  # ... with the copies' thread's CPU past this many times its no-work figure added
    ("timing_bound_margin_ms_rest", F64),  # the sandbox's other CPU past its no-work figure plus this a call (and past
    # what the share's other cores hold) is timed as if it ran after the call
    ("reference_batch_slack", F64),  # a batch's paired reference counts at most this many times the quickest batch's
    ("reference_batch_margin_ms_cpu", F64),  # ... plus this on a CPU (reference_slowdown_min_ms on a GPU)
    ("interrupt_storm_per_s", F64),  # a CPU reference batch in which one CPU served this many interrupts a second
    ("interrupt_storm_min", I64),    # ... over its calibration's rate, and this many: reference_tampered
])


class Record:
    """Shared behaviour of the record dataclasses."""

    _arrow_schema: ClassVar[pa.Schema | None] = None

    @classmethod
    def fields(cls) -> tuple[dataclasses.Field, ...]:
        if "_fields_cache" not in cls.__dict__:
            cls._fields_cache = dataclasses.fields(cls)
        return cls._fields_cache

    @classmethod
    def arrow_schema(cls) -> pa.Schema:
        if cls.__dict__.get("_arrow_schema") is None:
            cls._arrow_schema = pa.schema(
                [pa.field(f.name, f.metadata["arrow"], nullable=not f.metadata["required"]) for f in cls.fields()],
                metadata={b"kb_data.record": cls.__name__.encode(), b"kb_data.schema_version": SCHEMA_VERSION.encode()},
            )
        return cls._arrow_schema

    def to_row(self) -> dict:
        return {f.name: getattr(self, f.name) for f in self.fields()}

    @classmethod
    def from_row(cls, row: dict, *, where: str = ""):
        known = {f.name for f in cls.fields()}
        unknown = sorted(set(row) - known)
        if unknown:
            raise SchemaError(f"{where}{cls.__name__}: unknown field(s) {unknown}")
        obj = cls(**{k: v for k, v in row.items()})
        obj.validate(where=where)
        return obj

    def validate(self, *, where: str = "") -> None:
        for f in self.fields():
            value = getattr(self, f.name)
            where_f = f"{where}{type(self).__name__}.{f.name}"
            if value is None:
                if f.metadata["required"]:
                    raise SchemaError(f"{where_f} is required")
                continue
            _check_type(value, f.metadata["arrow"], where_f)
            if f.metadata["time"]:
                _check_time(value, where_f)
            enum = f.metadata["enum"]
            if enum is not None:
                values = value if isinstance(value, list) else [value]
                bad = [v for v in values if v not in enum]
                if bad:
                    raise SchemaError(f"{where_f}: {bad[0]!r} is not one of {list(enum)}")


def _check_time(value: str, where: str) -> None:
    """An ISO-8601 time (one without an offset is UTC, as the analysis reads it): "latest" compares these, and one
    that was no time, or that was compared as text, picked the record an audit re-graded (red team, session 51)."""
    try:
        dt.datetime.fromisoformat(value)
    except ValueError:
        raise SchemaError(f"{where}: {value!r:.80} is not an ISO-8601 time") from None


def _check_type(value: Any, t: pa.DataType, where: str) -> None:
    if pa.types.is_string(t):
        ok = isinstance(value, str)
        if ok:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as e:  # a lone surrogate, from a JSON "\ud800": no Parquet file can hold it
                raise SchemaError(f"{where}: not Unicode text (a lone surrogate at character {e.start})") from None
    elif pa.types.is_boolean(t):
        ok = isinstance(value, bool)
    elif pa.types.is_integer(t):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif pa.types.is_floating(t):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif pa.types.is_list(t):
        ok = isinstance(value, (list, tuple))
        if ok:
            for i, item in enumerate(value):
                if item is not None:
                    _check_type(item, t.value_type, f"{where}[{i}]")
    elif pa.types.is_struct(t):
        ok = isinstance(value, dict)
        if ok:
            names = {t.field(i).name for i in range(t.num_fields)}
            extra = set(value) - names
            if extra:
                raise SchemaError(f"{where}: unknown key(s) {sorted(extra)}")
            for i in range(t.num_fields):
                sub = t.field(i)
                if value.get(sub.name) is not None:
                    _check_type(value[sub.name], sub.type, f"{where}.{sub.name}")
    else:  # pragma: no cover - every field type is listed above
        ok = True
    if not ok:
        raise SchemaError(f"{where}: expected {t}, got {type(value).__name__} {value!r:.80}")


@dataclass
class Problem(Record):
    """One problem file with the metadata derived from it (a row of kernelbench-v3-problems)."""

    problem_id: str = _f(STR, required=True, doc="<suite>/<category>/<name>, derived from the path")
    suite: str = _f(STR, required=True, enum=SUITES)
    category: str = _f(STR, required=True, doc="directory: level1..level4, graphics, tile_specialized, cutile, metal_level1..4")
    level: int = _f(I64, required=True, doc="digits after 'level' in the category, else 1")
    name: str = _f(STR, required=True, doc="file stem, exactly upstream's file name without .py")
    file: str = _f(STR, required=True, doc="upstream file name, with .py")
    code: str = _f(STR, required=True, doc="full source of the problem file")
    sha256: str = _f(STR, required=True, doc="sha256 of code (utf-8)")
    op_type: str = _f(STR)
    supported_precisions: list = _f(LIST_STR, [])
    hardware_required: list = _f(LIST_STR, [])
    gpus: list = _f(LIST_STR, [], doc="GPU targets the problem is swept on")
    init_args: str = _f(STR, "[]", doc="JSON list of get_init_inputs() values")
    inputs: list = _f(pa.list_(TENSOR_SPEC), [])
    outputs: list = _f(pa.list_(OUTPUT_SPEC), [])
    flops: int = _f(I64, doc="FlopCounterMode total of one forward on meta; null when meta cannot run it")
    min_bytes: int = _f(I64, doc="bytes of inputs + outputs + state_dict tensors")
    metadata: str = _f(STR, "{}", doc="JSON of the module's metadata constants (OP_TYPE, ..., KNOWN_ISSUE)")
    known_issue: str = _f(STR, doc="an upstream defect the problem reproduces on purpose")
    quirks: list = _f(LIST_STR, [], doc="facts of the set that matter to grading (dropout in forward, ...)")
    requires: list = _f(LIST_STR, [], doc="optional extras or hardware features needed to run the reference")
    degenerate: bool = _f(BOOL, doc="output nearly constant or nearly equal to an input")
    degenerate_reason: str = _f(STR)
    rules: dict = _f(RULES, doc="the grading rules of the problem's suite")
    schema_version: str = _f(STR, SCHEMA_VERSION)


GPU_ALONE_DOC = ("median of the same calls with the host's work out of the interval: a spin kernel between the L2 flush and "
                 "the start event outlasts the host's enqueueing of the call (kb_data.harness.timing.Timer.run_gpu_alone). "
                 "Repeats within ~1% between processes where eager_ms, which holds the host's pace, moves by up to 30%; "
                 "null off a GPU and on rows measured before schema 1.3")


@dataclass
class Baseline(Record):
    """One timing of a problem's reference on one GPU and software stack."""

    problem_id: str = _f(STR, required=True)
    suite: str = _f(STR, required=True, enum=SUITES)
    gpu: str = _f(STR, required=True, doc="canonical GPU key, e.g. H200")
    gpu_name: str = _f(STR, doc="as the driver reports it")
    status: str = _f(STR, "ok", enum=("ok", "error"), doc="error: the reference failed to run or compile")
    error: str = _f(STR)
    eager_ms: float = _f(F64)
    eager_p10_ms: float = _f(F64)
    eager_p90_ms: float = _f(F64)
    compile_ms: float = _f(F64, doc="torch.compile(mode='reduce-overhead')")
    compile_p10_ms: float = _f(F64)
    compile_p90_ms: float = _f(F64)
    compile_error: str = _f(STR)
    eager_gpu_ms: float = _f(F64, doc=GPU_ALONE_DOC)
    compile_gpu_ms: float = _f(F64, doc="as eager_gpu_ms, for the torch.compile median")
    gpu_alone_error: str = _f(STR, doc="why a GPU-alone median is null on a row measured with schema 1.3 or later")
    baseline_ms: float = _f(F64)
    baseline_type: str = _f(STR, enum=BASELINE_TYPES)
    p10_ms: float = _f(F64, doc="spread of the chosen baseline")
    p90_ms: float = _f(F64)
    n_trials: int = _f(I64)
    timing_method: str = _f(STR, enum=TIMING_METHODS, doc=TIMING_METHOD_DOC)
    calibration: dict = _f(CALIBRATION, doc="fixed GPU work timed the same way in the same process, just before "
                           "(kb_data.harness.timing.CALIBRATION_WORK); null: not recorded (before 2026-12-01 or off a GPU)")
    level: int = _f(I64)
    problem: str = _f(STR, doc="upstream file name with .py")
    problem_sha256: str = _f(STR)
    torch_version: str = _f(STR)
    cuda_version: str = _f(STR)
    triton_version: str = _f(STR)
    driver_version: str = _f(STR)
    harness_version: str = _f(STR)
    problems_revision: str = _f(STR)
    measured_at: str = _f(STR, time=True, doc="ISO-8601 UTC")
    source: str = _f(STR, "measured", enum=BASELINE_SOURCES)
    n_records: int = _f(I64, doc="derived rows: how many correct run records the median is over")
    schema_version: str = _f(STR, SCHEMA_VERSION)


UPSTREAM_RUN_COLUMNS = (
    "model", "gpu", "level", "problem", "compiled", "correct", "speedup", "ref_ms", "sol_ms", "turns",
    "total_tokens", "estimated_cost_usd", "op_type", "baseline_type", "precision_used", "run_dir",
    "solution_link", "baseline_link",
)


@dataclass
class RunRecord(Record):
    """One graded submission. The first 18 fields are upstream KernelBench-v3's runs table, same names and meanings."""

    model: str = _f(STR, doc="who wrote the submission")
    gpu: str = _f(STR, doc="canonical GPU key")
    level: int = _f(I64)
    problem: str = _f(STR, doc="problem file name with .py, as upstream")
    compiled: bool = _f(BOOL)
    correct: bool = _f(BOOL, doc="numeric correctness under the suite's rules (upstream's meaning); a record can be correct "
                        "and still not accepted (see accepted)")
    speedup: float = _f(F64, doc="ref_ms / sol_ms; null unless correct. For baseline_source 'paired': the median over "
                        "the paired trials of reference time / submission time (within noise of ref_ms / sol_ms)")
    ref_ms: float = _f(F64, doc="baseline median")
    sol_ms: float = _f(F64, doc="submission median")
    turns: int = _f(I64)
    total_tokens: int = _f(I64)
    estimated_cost_usd: float = _f(F64)
    op_type: str = _f(STR)
    baseline_type: str = _f(STR, enum=BASELINE_TYPES)
    precision_used: str = _f(STR)
    run_dir: str = _f(STR)
    solution_link: str = _f(STR)
    baseline_link: str = _f(STR)
    # kb-data fields
    record_id: str = _f(STR, required=True, doc="stable id: re-importing or re-publishing adds nothing")
    schema_version: str = _f(STR, SCHEMA_VERSION)
    source: str = _f(STR, "local", enum=RECORD_SOURCES)
    suite: str = _f(STR, enum=SUITES)
    problem_id: str = _f(STR)
    problems_revision: str = _f(STR)
    problem_sha256: str = _f(STR)
    status: str = _f(STR, enum=STATUSES)
    accepted: bool = _f(BOOL, doc="passes every check of the grader that made the record: status is ok (derived from "
                        "status; rows without a status, and rows before schema 1.5, take it from correct)")
    failure_cause: str = _f(STR, enum=FAILURE_CAUSES, doc="why a record that is not accepted failed, where known: the "
                            "grading machine's toolchain or the submission")
    error: str = _f(STR)
    max_abs_err: float = _f(F64)
    max_rel_err: float = _f(F64)
    atol: float = _f(F64)
    rtol: float = _f(F64)
    seeds: list = _f(LIST_I64)
    sol_p10_ms: float = _f(F64)
    sol_p90_ms: float = _f(F64)
    n_trials: int = _f(I64)
    timing_method: str = _f(STR, enum=TIMING_METHODS, doc=TIMING_METHOD_DOC)
    baseline_source: str = _f(STR, enum=RUN_BASELINE_SOURCES)
    eager_ms: float = _f(F64, doc="the baseline row's eager median")
    compile_ms: float = _f(F64, doc="the baseline row's torch.compile median")
    ref_alone_ms: float = _f(F64, doc="paired baselines: the paired reference (eager or compiled, as baseline_type) "
                                      "timed alone in the worker before the submission was loaded (the guard against "
                                      "a submission slowing the reference)")
    flags: list = _f(LIST_STR, enum=FLAGS)
    flag_details: str = _f(STR, doc="JSON: evidence behind each flag")
    solution_sha256: str = _f(STR)
    solution_code: str = _f(STR)
    gpu_name: str = _f(STR)
    device_index: int = _f(I64, doc="which local GPU graded it")
    host: str = _f(STR)
    torch_version: str = _f(STR)
    cuda_version: str = _f(STR)
    triton_version: str = _f(STR)
    driver_version: str = _f(STR)
    harness_version: str = _f(STR)
    harness_seconds: str = _f(STR, doc="JSON: wall seconds per grading stage, and of the whole worker")
    sandbox: str = _f(STR, enum=SANDBOX_LEVELS, doc="how the submission's process was isolated (SECURITY.md); "
                                                   "null: not graded here (upstream rows)")
    created_at: str = _f(STR, time=True, doc="ISO-8601 UTC")
    # audit records (source "audit"): a published record's solution re-graded here
    audit_of: str = _f(STR, doc="record_id of the record this audit re-graded")
    audit_dataset: str = _f(STR, doc="the dataset holding that record: a Hub repo id, local:<store name> or a folder")
    audit_revision: str = _f(STR, doc="immutable revision of that dataset (commit SHA, or content hash of a folder)")
    audit_published_accepted: bool = _f(BOOL, doc="that record's verdict as published (its accepted)")

    @classmethod
    def from_row(cls, row: dict, *, where: str = ""):
        obj = super().from_row(row, where=where)
        given = row.get("accepted")
        if given is not None and obj.accepted is not None and given != obj.accepted:
            raise SchemaError(f"{where}RunRecord.accepted is {given} but status is {obj.status!r}: accepted means "
                              "status 'ok'")
        return obj

    def derived_accepted(self) -> bool | None:
        """status == "ok"; without a status (upstream-only rows), correct."""
        if self.status is not None:
            return self.status == "ok"
        return self.correct

    def validate(self, *, where: str = "") -> None:
        # derived, not trusted: the harness sets the status late and never sets accepted
        self.accepted = self.derived_accepted()
        super().validate(where=where)

    def to_row(self) -> dict:
        self.accepted = self.derived_accepted()
        return super().to_row()


RECORD_TYPES = {"problem": Problem, "baseline": Baseline, "run": RunRecord}


def to_table(records: Iterable[Record], record_type: type[Record] | None = None) -> pa.Table:
    """Records (or row dicts, with record_type) to a pyarrow table with the type's schema."""
    rows, cls = [], record_type
    for rec in records:
        if isinstance(rec, Record):
            cls = cls or type(rec)
            rows.append(rec.to_row())
        else:
            rows.append(rec)
    if cls is None:
        raise SchemaError("to_table: no records and no record_type")
    return pa.Table.from_pylist([_clean_floats(r) for r in rows], schema=cls.arrow_schema())


def from_table(table: pa.Table, record_type: type[Record]) -> list:
    return [record_type.from_row(r, where=f"row {i}: ") for i, r in enumerate(table.to_pylist())]


def _clean_floats(row: dict) -> dict:
    # NaN is not a value anywhere in these schemas: a missing number is null.
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}


def schema_markdown(record_type: type[Record]) -> str:
    """A Markdown table of a record type's fields (used in dataset cards)."""
    lines = ["| field | type | meaning |", "|---|---|---|"]
    for f in record_type.fields():
        doc = f.metadata["doc"]
        if f.metadata["enum"]:
            doc = (doc + "; " if doc else "") + "one of " + ", ".join(f"`{e}`" for e in f.metadata["enum"])
        lines.append(f"| `{f.name}` | {f.metadata['arrow']} | {doc} |")
    return "\n".join(lines)
