"""The series' analysis library: what a profile says, read the same way on any machine.

Shaped like HolisticTraceAnalysis: one analysis per module, each with a small facade whose
docstrings state arguments and returns, tested on recorded real-hardware data (`data/`).
Notebooks, `helpers` (the plumbing) and `series_tools` (the command-line tools) use it; it
imports none of them (tests/test_layering.py), so it can be read and tested on its own.

Modules:
- errors: the series' base exception, which carries the fix (standard library only)
- traces: Chrome-trace loading and per-step analysis (lanes, steps, gaps, counts, the dispatch tree)
- timing: the one measurement method: interleaved samples on torch.utils.benchmark.Timer, paired ratios
- floor: the copy floor and the same-bytes bandwidth probe that checks it
- claims: a summary's conclusions recorded with the metrics they compare, and their check (no torch)
- contention: whether a timing lost CPU time to other work (run-queue wait, CPU pressure, steal), and the busy verdict
- neuron_profile: a Neuron profile folder checked for the documented failure signs; Neuron Explorer's exports read into tables
- neuron_export: the Neuron profiler's full JSON export read into tables, its counters checked against their data
- attention_traffic: the HBM bytes the recorded attention kernels must move, from their source
- device_view: launches, host vs device time per op, synchronize waits, idle gaps and their causes, per-step device windows
- rank_view: kernel and collective time per rank, and who waited in each collective, from several ranks' traces
- hta_view: HTA's temporal and idle-time breakdowns on the same trace files, side by side with the series' figures
"""
