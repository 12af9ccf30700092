"""The series' analysis library: what a profile says, read the same way on any machine.

Shaped like HolisticTraceAnalysis: one analysis per module, each with a small facade whose
docstrings state arguments and returns, tested on recorded real-hardware data (`data/`).
Notebooks, `helpers` (the plumbing) and `series_tools` (the command-line tools) use it; it
imports none of them (tests/test_layering.py), so it can be read and tested on its own.

Notebooks import what they use from this one namespace (`from analysis import load_trace, ...`);
the names load their module on first use (PEP 562), so `import analysis` loads neither torch nor
pandas: helpers.environment reads analysis.contention and analysis.host before torch loads.

Modules:
- facade: the lazy namespace this package, helpers and lesson offer notebooks (standard library only)
- errors: the series' base exception, which carries the fix (standard library only)
- traces: the trace model: Chrome-trace loading, lanes, steps, which events are device operations (imports no analyzer)
- steps: per profiler step: device operations, busy time, idle gaps, launch latency, CPU ops
- call_trees: the dispatch chain of one call, and where key_averages() folds a same-name pair
- allocations: which op allocated what, from the [memory] events
- timing: the one measurement method: interleaved samples on timeit.Timer (torch.utils.benchmark's loop), paired ratios
- floor: the copy floor, the same-bytes bandwidth probe that checks it, and the one ranking of variants against it
- verdicts: the one rule for "measurable" and the one-line sentence of every comparison (paired ratios, ranges, steps)
- claims: a summary's conclusions recorded with the metrics they compare, and their check (no torch)
- contention: whether a timing lost CPU time to other work (run-queue wait, CPU pressure, steal), and the busy verdict
- neuron_profile: a Neuron profile folder checked for the documented failure signs; Neuron Explorer's exports read into tables
- neuron_export: the Neuron profiler's full JSON export read into tables, its counters checked against their data
- attention_traffic: the HBM bytes the recorded attention kernels must move, from their source
- engine_activity: per engine of a Neuron export, the time in computing instructions against the lane's whole activity
- device_view: launches, host vs device time per op, synchronize waits, idle gaps and their causes, per-step device windows
- rank_view: kernel and collective time per rank, and who waited in each collective, from several ranks' traces
- hta_view: HTA's temporal and idle-time breakdowns on the same trace files, side by side with the series' figures
- key_averages: the profiler's key_averages() table as a DataFrame, and whether its device columns were captured
- compiles: what torch.compile did in this process: graphs, FX-graph cache hits and misses, the recompile log
- host: the machine's effects on a measurement: address-layout randomization, free page reporting (standard library only)
- neuron_log: the Neuron runtime's console output read back: trace events reported dropped (standard library only)
- module_calls: every call of a module or op in a trace: its host ops, the kernels it launched, their bytes against a fused RMSNorm's
- recorded: the real A100 traces shipped in data/recorded/ and the origin label their figures carry
- figures: the series' chart conventions (palette, colour per meaning, backend in the title) and the step timeline
"""

from __future__ import annotations

from .facade import lazy_namespace

# The facade: module -> the names notebooks (and the other layers) use from it.
_EXPORTS = {
    "attention_traffic": "RECORDED_NEURON_DIR attention_hbm_traffic recorded_case",
    "claims": "Claim check_claims",
    "compiles": "CompileLog captured_compile_logs cold_call_origin compile_counters read_generated_kernel recompile_limit_name stream_summary",
    "contention": "combined contention_between machine_contention_between read_counters",
    "engine_activity": "COMPUTING_OPCODES CONTROL_OPCODES WAIT_OPCODES engine_of engine_work opcode_kind",
    "device_view": "annotation_window busy_summary device_work host_ops_during host_vs_device host_waits idle_gaps "
    "launches short_kernel_name",
    "figures": "IDLE_ALPHA MEANING_COLORS OKABE_ITO backend_title draw_lanes plot_cumulative_calls plot_rank_steps plot_timeline",
    "floor": "WIDE_SPREAD Ranking bytes_per_op check_floor copy_floor floor_probes nominal_memory_gb_per_s cannot_tell_group rank_over_floor time_with_floor triad_probe",
    "host": "address_layout free_page_reporting_kib",
    "hta_view": "run_hta side_by_side",
    "key_averages": "device_time_verdict key_averages_frame",
    "module_calls": "FUSED_CALL NAIVE_CALL RECORDED_RMSNORM TRACELENS_CAUTION at_rate call_kernels kernel_tensors call_table call_windows calls_summary device_names fused_comparison fused_rate kernel_bytes "
    "kernels_by_op op_shapes plot_call_kernels recorded_label recorded_rmsnorm_path",
    "neuron_export": "ENGINES UNIT_CHECK_TOLERANCE ExportError interval_union_ns load_export load_exports merged_intervals",
    "neuron_profile": "eager_fusion_verdict explorer_commands explorer_summary export_system_events find_neuron_artifacts",
    "rank_view": "TOGETHER_US arrival_order chance_some_rank_last collective_kernel_waits collective_waits rank_kernel_time rank_steps",
    "recorded": "ALEXNET_FORWARD RECORDED_ORIGIN load_recorded recorded_path",
    "timing": "PairedRatio Timing busy_processes p10_p90 paired_ratio time_interleaved time_once time_per_call",
    "verdicts": "CANNOT_TELL CANNOT_TELL_ALONE EDGE MIN_RANGE_SAMPLES Verdict apart_bounds counted cut_off_miss decimals_apart estimate ratio_bound judge_ranges judge_ratio judge_steps judge_timings machine_line margin_percent ranges_apart relation_of RESOLUTION "
    "verdict_table withheld",
    "traces": "Trace load_trace representative_step",
    "steps": "gap_table launch_latency per_call_summary step_ops step_summary",
    "call_trees": "call_tree dispatch_tree folded_by_key_averages",
    "allocations": "allocations_by_op innermost_op",
}
__getattr__, __dir__, __all__ = lazy_namespace(__name__, globals(), _EXPORTS)
