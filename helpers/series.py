"""The series' facts that more than one module needs, each stated once.

The notebook list, the backends, the dtypes, the RMSNorm variants and the metric key of each,
and the torch versions the series supports. Standard library only: the kernel check and the
command-line tools (which must not import torch to read a JSON file) use it too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"

BACKEND_CHOICES = ("auto", "neuron", "cuda", "cpu")
DTYPE_NAMES = ("float32", "bfloat16", "float16")
# 2.13 from requirements.txt; 2.14 with torch-neuronx 2.14.* on Trainium. A GPU machine's own
# torch may be newer: it is accepted with a warning by the kernel check, and recorded.
SUPPORTED_TORCH = ("2.13.", "2.14.")

# The RMSNorm variants in the order every table shows them, with the key that names each in
# metrics ("large_compile_over_copy"). The copy is the floor the others are measured against.
VARIANT_KEYS = {"copy": "copy", "naive": "naive", "torch.rms_norm": "rms_norm", "torch.compile": "compile"}
RMSNORM_VARIANTS = tuple(name for name in VARIANT_KEYS if name != "copy")


def notebook_paths(notebook_dir: Path | str = NOTEBOOK_DIR) -> list[Path]:
    """The series' notebooks in order: the numbered lesson (NN_*.ipynb), then the appendices
    (A<n>_*.ipynb, the checks that make the lesson's numbers trustworthy): the one place that finds them."""
    folder = Path(notebook_dir)
    return sorted(folder.glob("[0-9][0-9]_*.ipynb")) + sorted(folder.glob("A[0-9]_*.ipynb"))


def is_appendix(stem: str) -> bool:
    """True for an appendix notebook (A1_..., off the lesson path: no reading-time limit, no Trainium box)."""
    return stem[:1] == "A" and stem[1:2].isdigit()


@dataclass(frozen=True)
class NotebookInfo:
    stem: str
    topic: str
    on_neuron: str
    elsewhere: str
    # the facts of docs/NEURON_NOTES.md this notebook relies on on Trainium (its "On Trainium" box)
    neuron_facts: tuple[str, ...] = ()
    # the core path (00-06, then 09) teaches the lesson; an optional notebook extends it
    optional: bool = False
    # for an optional lesson notebook: whom it is not optional for ("your model's input shapes vary: ..."),
    # so that a reader bound for a trn2 is not told to skip what their model needs
    needed_when: str = ""
    # the lesson notebooks whose numbers an appendix checks (empty for a lesson notebook)
    checks: tuple[str, ...] = ()
    # the notebooks whose saved results, in the same run folder, this one reads (they must run first)
    reads: tuple[str, ...] = ()
    # it measures nothing on this machine, only reads data recorded elsewhere: its start lines skip
    # the backend's notes and the thread setting, which describe measurements it does not make
    recorded_only: bool = False
    # it calls torch.compile: on cpu its first compile would pay Inductor's checks of the CPU's vector
    # instructions, which `make run` copies into the run's cache first (series_tools.inductor_warmup)
    compiles: bool = False

    @property
    def appendix(self) -> bool:
        return is_appendix(self.stem)

    @property
    def cpu_seconds(self) -> float | None:
        """This notebook's run time at the default parameters in the committed cpu reference run."""
        return CPU_RUN_TIMES["seconds"].get(self.stem)


# Where and when `cpu_seconds` were measured (a `make run` at default parameters): the run times
# of the committed cpu reference run, which `make publish` writes beside it (RUN_TIMES_FILE), so
# they are never copied by hand. A notebook that shows them says so, because another machine's
# wall time is not this run's.
REFERENCE_RUNS_DIR = REPO_ROOT / "docs" / "reference-runs"
RUN_TIMES_FILE = "run_times.json"


def reference_run_times(reference_dir: Path = REFERENCE_RUNS_DIR, backend: str = "cpu") -> dict:
    """{"measured_on": ..., "seconds": {stem: s}} of the committed reference run of `backend`,
    or an empty record when none is committed (a fork, a fresh series): times then show as not
    recorded rather than as another run's."""
    found = sorted(reference_dir.glob(f"{backend}-*/{RUN_TIMES_FILE}"))
    if not found:
        return {"measured_on": f"no committed {backend} reference run", "seconds": {}}
    return json.loads(found[-1].read_text(encoding="utf-8"))


CPU_RUN_TIMES = reference_run_times()
CPU_SECONDS_MEASURED_ON = CPU_RUN_TIMES["measured_on"]


def notebook_info(stem: str) -> NotebookInfo:
    """The series table's row of one notebook; a name not in it is an error naming the known ones."""
    for info in NOTEBOOKS:
        if info.stem == stem:
            return info
    raise KeyError(f"{stem!r} is not a notebook of the series: {', '.join(i.stem for i in NOTEBOOKS)}")


NOTEBOOKS = (
    NotebookInfo(
        "00_environment_check",
        "versions, backend, devices",
        "lists NeuronCores with neuron-ls (documented, N52)",
        "lists the GPU or CPU",
    ),
    NotebookInfo(
        "01_profiler_setup",
        "profiler, schedule, synchronize, overhead",
        "the Neuron profiler set-up and its profile folder",
        "same loop; the Neuron set-up cell prints the documented call, not run",
        neuron_facts=("N6", "N9", "N10", "N11", "N19", "N20", "N22", "N23", "N27", "N29"),
    ),
    NotebookInfo(
        "02_naive_rmsnorm",
        "naive RMSNorm: ops, memory, gaps",
        "about one compiled program (NEFF) per op and shape; fewer where eager ops are fused (expected; the fusion is documented, N40)",
        "kernels on cuda, ATen ops on cpu",
        neuron_facts=("N6", "N9", "N19", "N20", "N22", "N40", "N41"),
    ),
    NotebookInfo(
        "03_fused_rms_norm",
        "torch.rms_norm",
        "one NEFF per shape (UNVERIFIED, N25)",
        "one fused kernel expected on cuda; on cpu the notebook counts the ops it runs",
        neuron_facts=("N19", "N25"),
    ),
    NotebookInfo(
        "04_torch_compile",
        "torch.compile: cold vs warm, graphs, breaks",
        "backend='neuron': one NEFF per graph (documented, N26)",
        "Inductor: generated C++ (cpu) or Triton (cuda)",
        neuron_facts=("N24", "N26"),
        compiles=True,
    ),
    NotebookInfo(
        "05_compare_variants",
        "all variants, two shapes, copy floor",
        "device time from the timer; Neuron profile per variant",
        "same table and chart",
        neuron_facts=("N6", "N19", "N31"),
        compiles=True,
    ),
    NotebookInfo(
        "06_reading_traces",
        "lanes, gaps, dispatch chain, Neuron Explorer",
        "Neuron Explorer walkthrough on the real profile",
        "Perfetto UI; what Neuron Explorer would show",
        neuron_facts=("N12", "N13", "N14", "N15", "N16", "N17", "N18", "N19", "N28", "N40", "N42", "N47"),
        compiles=True,
    ),
    NotebookInfo(
        "07_shapes_and_recompiles",
        "new shapes: recompiles, the recompile limit, bucketing, caches",
        "one neuronx-cc compile per shape; dynamic=True rejected; the NEFF cache (documented, N26, N14)",
        "recompiles and the compile cache, measured",
        neuron_facts=("N14", "N26", "N40"),
        optional=True,
        needed_when="your model's input shapes vary: the Neuron docs say each new shape compiles anew",
        compiles=True,
    ),
    NotebookInfo(
        "08_many_processes",
        "torchrun ranks, all-reduce, stragglers, a failing rank",
        "the torchrun recipe printed (documented, parts UNVERIFIED, N30); the lesson's ranks on the host CPU",
        "gloo on cpu (2 ranks), nccl on cuda",
        neuron_facts=("N27", "N30"),
        optional=True,
        needed_when="you will train on more than one NeuronCore (torchrun ranks)",
    ),
    NotebookInfo(
        "09_trainium_device_view",
        "Trainium's device view: engine lanes, DMA, HBM bytes, unfused vs fused",
        "an attention kernel's profiles (recorded on a trn2.3xlarge by the trainium-kernel-fusion project), not this run; the capture commands printed",
        "the same: it reads recorded data",
        neuron_facts=("N35", "N36", "N37", "N38", "N39", "N42", "N45"),
        recorded_only=True,
    ),
    NotebookInfo(
        "A1_timing_checks",
        "appendix: how 00-01's timings are checked (busy machine, timer against profiler, warm-up)",
        "the same checks on the NeuronCore's timings",
        "the same checks",
        optional=True,
        checks=("00_environment_check", "01_profiler_setup"),
    ),
    NotebookInfo(
        "A2_checks_naive_and_fused",
        "appendix: how 02-03's numbers are checked (memory rows, op counts, totals that must agree)",
        "the same checks",
        "the same checks",
        optional=True,
        checks=("02_naive_rmsnorm", "03_fused_rms_norm"),
        reads=("02_naive_rmsnorm",),
    ),
    NotebookInfo(
        "A3_copy_floor_checks",
        "appendix: how 04-05's numbers are checked (the copy that sets the floor, and how steady it was)",
        "the same checks",
        "the same checks",
        optional=True,
        checks=("04_torch_compile", "05_compare_variants"),
        reads=("04_torch_compile", "05_compare_variants"),
    ),
    NotebookInfo(
        "A4_trace_reconciliation",
        "appendix: how 06 and 09's readings are checked (a second trace tool, the profile's units)",
        "the same checks",
        "the same checks",
        optional=True,
        checks=("06_reading_traces", "09_trainium_device_view"),
    ),
    NotebookInfo(
        "A5_ranks_and_shapes_checks",
        "appendix: how 07-08's numbers are checked (arrival order statistics, clocks, compile counts)",
        "the same checks",
        "the same checks",
        optional=True,
        checks=("07_shapes_and_recompiles", "08_many_processes"),
        reads=("07_shapes_and_recompiles", "08_many_processes"),
        compiles=True,
    ),
)
