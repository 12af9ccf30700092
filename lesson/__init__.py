"""The code the notebooks teach, saved by their `# @save` cells, and the programs that run it in
another process.

A function a notebook writes in a cell marked `# @save lesson/<module>.py` is copied here, character
for character (tests/test_one_source.py), so that later notebooks, the tools and the tests use the
notebook's own code. This package uses `helpers` (the plumbing) and `analysis` (the library that
reads profiles and measures); neither imports it. Notebooks import from this one namespace
(`from lesson import make_inputs, ...`); the names load their module on first use (PEP 562).

- rmsnorm:      the RMSNorm variants (source: notebooks 02 and 03), their float64 reference, inputs and checks
- naive_rmsnorm: notebook 02's allocation line, gap share line, a recorded call's idle split, the recorded calls' metrics
- compiled:     notebook 04's generated kernel's writes over the input, beside the measured allocations; its cold call and break-evens
- changed_ops:  notebook 03's join of two variants' ops (removed, added, changed form, count changed); its label and dispatch rows' own time line; the byte model at the fused rate
- neuron_profiler: notebook 01's Neuron profiler set-up (NeuronConfig, the exporter, the dropped-events watch), repeated
- published_metrics: what notebooks 01 to 04 publish (one call each)
- profiling:    the profiled loop of notebook 01, repeated by the later notebooks
- profiler_setup: notebook 01's bookkeeping outside its loop (busy check, recorded-steps lines, cost line, exercises 1 and 3)
- study:        one variant timed, profiled and checked the same way in every notebook of the case study; 05's metrics
- trainium_readings: notebook 09's published figures and the readings it states from them
- reading_traces: notebook 06's drawn-step table, its step / host-only factors and their sentence, its metrics
- shapes:       notebook 07's request stream, strategies (source: its `# @save` cell) and per-call compiles; the stream kept for A5
- shape_worker: notebook 07's second process: the same stream served in a fresh Python (`python -m`)
- rank_worker:  one rank of notebook 08 (run by torchrun; `train_step` from its `# @save` cell)
- ranks:        notebook 08's torchrun launch (checked, time-limited, nothing left running); its job read back for A5
"""

from __future__ import annotations

from analysis.facade import lazy_namespace

# The facade: module -> the names notebooks use from it.
_EXPORTS = {
    "trainium_readings": "against_spread same_work_spread spread_line device_view_claims device_view_metrics guesses_against_counters execution_start"
    " after_first_matmul_reading per_call_bounds device_view_reading counter_readings lane_not_all_work engine_opcode_counts per_engine_table burst_transfers burst_spans start_tail_opcodes start_reads",
    "naive_rmsnorm": "allocation_line call_exceptions gap_share idle_split op_around recorded_call_metrics recorded_kernel_table"
    " stamps_back_to_back",
    "compiled": "BUSY_COLD_CALL KEEP_NEFF beside_03 break_evens cold_call written_over_input speedup_lines cache_load_lines",
    "changed_ops": "change_line fused_rate_line op_changes own_time_line priced_table ratio_ends",
    "neuron_profiler": "NeuronProfilerSetup accepts_keyword neuron_profiler_setup op_by_op",
    "published_metrics": "compile_metrics fused_metrics naive_call_metrics setup_metrics byte_model_metrics",
    "profiling": "ProfileResult judge_device_time profile_steps",
    "profiler_setup": "WatchedBlock copy_shares first_call_line cost_takeaway recorded_ops first_recorded_step_us first_recorded_steps"
    " RecordedSteps recorded_steps warmup_explanation larger_hidden_answer"
    " warmup_answer queue_stand_in queue_takeaway documented_neuron_call"
    " cutoffs_line",
    "reading_traces": "HostOnlyFactors host_only_factors largest_gap_host_calls reading_traces_metrics"
    " drawn_steps host_only_share"
    " LargestShare largest_host_only_share gap_memory_line gap_memory_ops eager_fusion_lines host_only_lines host_only_us_line drawn_step_table labelled_gap_line",
    "ranks": "RankJob arrival_parts arrival_parts_line last_arrival_lines launch load_rank_job neuron_recipe_lines neuron_torchrun_recipe rank_cpu_waits ranks_contention slow_step_wait_line straggler_job_metrics"
    " torchrun_exits",
    "rmsnorm": "DTYPES call_compiled check_fits_in_memory compile_rmsnorm error_tolerance format_bytes make_inputs "
    "max_error rmsnorm_torch rmsnorm_naive rmsnorm_reference",
    "shapes": "SAME_NAMES cache_table check_stream eager_calls_line load_stream make_strategies new_process_label request_lengths rows_computed run_stream save_stream steady_state_ratios"
    " steady_state_verdicts show_verdicts stream_metrics trainium_compiles eager_call_ops expected_compiles",
    "study": "VariantReport comparison_metrics load_study newer_first quiet_note save_study shape_takeaways study_variant plot_over_copy"
    " predict_answer"
    " reference_ranking reference_reading copies_answer line_test_answer small_order_note",
}
__getattr__, __dir__, __all__ = lazy_namespace(__name__, globals(), _EXPORTS)
