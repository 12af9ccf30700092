"""What every notebook does first and last: validate its parameters, choose the backend, make
its output folder, record the environment, publish its metrics, and release the device.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from analysis.contention import BUSY_WAITED_FRACTION, other_runnable_tasks, recent_pressure, spare_cpu_threads

from .backend import Backend, select_backend
from .metrics import write_metrics
from .outputs import RUNS_DIR, ensure_writable_dir, new_run_dir, write_json
from .params import check_parameters, notebook_parameters
from .plotting import set_plot_defaults


@dataclass
class NotebookSession:
    """One notebook's run: its backend, its output folder and the metrics it publishes."""

    name: str
    backend: Backend
    out_dir: Path
    parameters: dict[str, Any] = field(default_factory=dict)
    default_threads: int = 1  # PyTorch's own intra-op default here, before the series left a CPU free
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)

    def publish(self, metrics: dict[str, dict[str, Any]]) -> None:
        """Add to this notebook's metrics.json (rewritten whole each time, atomically).

        Returns nothing, so that a cell ending in `session.publish(...)` shows no stray path."""
        self.metrics.update(metrics)
        write_metrics(self.out_dir, self.name, self.backend.name, self.metrics)

    def finish(self) -> None:
        """Free this kernel's device memory.

        On Trainium the NeuronCores stay held by this kernel's process until it exits; the
        message says so, because a held core is the most common problem in workshops.
        """
        gc.collect()
        if self.backend.name == "cuda":
            torch.cuda.empty_cache()
        elif self.backend.name == "neuron":
            torch.neuron.empty_cache()
        freed = "unreferenced tensors (cpu has no cache to empty)" if self.backend.name == "cpu" else f"{self.backend.name} cache"
        print(
            f"Released this Jupyter kernel's {freed}; shut the Jupyter kernel down before the next notebook to free the rest. Results are in {self.out_dir}"
        )
        if self.backend.name == "neuron":
            print(
                "This kernel still holds its NeuronCores until it exits: shut it down "
                "(Kernel > Shut Down Kernel) before starting the next notebook."
            )


def orientation(name: str) -> list[str]:
    """What a learner reads before the first cell runs: the notebook's recorded run time (another
    machine's, named as such), and whether it is optional. The Neuron facts a notebook relies on
    are not listed here: each appears in the "On Trainium" box of the cell that uses it
    (helpers.neuron_notes.trainium_box keeps the list a notebook names, with each fact's status)."""
    from .series import CPU_SECONDS_MEASURED_ON

    info = _notebook_info(name)
    if info is None:  # a notebook outside the series table (a test's): nothing recorded for it
        return []
    lines = [
        # only what it is (a quiet run on the same machine type took 46.6 s against 26.6 s stated)
        f"Run time: {info.cpu_seconds:.1f} s in the committed reference run ({CPU_SECONDS_MEASURED_ON}); "
        "this run's own time is in its summary.md."
        if info.cpu_seconds
        else "Run time: not recorded on the series' CI machine"
    ]
    if info.appendix:
        lines.append(f"Appendix: the checks behind {', '.join(info.checks)}; off the lesson path.")
    elif info.optional:
        unless = f", unless {info.needed_when}" if info.needed_when else ""
        lines.append(f"Optional: this notebook extends the core path (00-06, then 09); skip it if time is short{unless}.")
    return lines


def _notebook_info(name: str) -> Any:
    """The series table's row for `name` (helpers.series.NOTEBOOKS), or None for a notebook outside it (a test's)."""
    from .series import NOTEBOOKS

    return next((i for i in NOTEBOOKS if i.stem == name), None)


def recorded_only(name: str) -> bool:
    """True for a notebook that only reads data recorded elsewhere (helpers.series' `recorded_only`)."""
    info = _notebook_info(name)
    return info is not None and info.recorded_only


def threads_line(threads: int, default_threads: int) -> str:
    """The start line on intra-op threads. It states the setting and why (an op split over every CPU
    ends only when its slowest thread does, so one busy process stalls every op), and points to where
    both settings are timed beside a busy process (appendix A1, section 4) without promising what that
    timing will show: on a machine busier than one process, the series' setting is flagged BUSY too.
    "in this kernel": 08's ranks are processes of their own, which this setting does not reach."""
    return (
        f"Threads: {threads} of PyTorch's default {default_threads} in this Jupyter kernel (one CPU left free unless OMP_NUM_THREADS is set: "
        "A1, section 4)"  # readers of 00, 01 and 06 found the longer line jargon on the first screen
    )


def start_session(name: str, namespace: dict[str, Any], parameters: dict[str, Any] | None = None) -> NotebookSession:
    """Validate the notebook's parameters (its UPPER_CASE globals), choose the backend, create
    `<OUT_DIR>/<name>/`, and write environment.json there.

    `parameters`: the namespace's parameters already checked (helpers.start checks them before
    torch loads); None checks them here. With OUT_DIR empty (an interactive session) the notebook
    gets a fresh folder under runs/, so re-running it never overwrites an earlier result.
    """
    if parameters is None:
        parameters = check_parameters(notebook_parameters(namespace))
    out_dir = parameters.get("OUT_DIR", "")
    set_plot_defaults()
    chosen = select_backend(parameters.get("BACKEND", "auto"))
    chosen.claim_device()
    default_threads = torch.get_num_threads()
    torch.set_num_threads(spare_cpu_threads(default_threads, os.environ.get("OMP_NUM_THREADS")))
    base = Path(out_dir) if out_dir else new_run_dir(RUNS_DIR, chosen.name, "interactive")
    nb_dir = ensure_writable_dir(base / name)
    others = other_runnable_tasks()  # the checks before any timing; each timing block checks again while it runs
    write_json(
        nb_dir / "environment.json",
        {**chosen.describe(), "intra_op_threads_default": default_threads, "other_runnable_at_start": others},
    )
    how, _, tried = chosen.reason.partition(": ") if chosen.reason.startswith("auto") else (chosen.reason, "", "")
    print(f"Backend: {chosen.name} ({how})")  # the backends auto passed over on a line of their own (00: three-deep brackets)
    if tried:
        print(f"Tried:   {tried}")
    print(f"Device:  {chosen.device_name()} ({chosen.device_count()} device(s) torch can use)")
    print(f"Output:  {nb_dir}")
    if recorded_only(name):  # 09 printed how cpu timings read beside profiles recorded on a trn2
        print("Data:    recorded elsewhere, named with its origin below; this notebook measures nothing on this machine")
    else:
        for note in chosen.notes:
            print(f"Note:    {note}")
        print(threads_line(torch.get_num_threads(), default_threads))
    if others is not None and others >= 0.5:
        print(
            f"Busy:    about {others:.1f} other task(s) were running on this machine's {os.cpu_count()} CPU(s) as this "
            "notebook started; every timing block checks whether it lost CPU time, and one that did is flagged BUSY."
        )
    pressure = recent_pressure()
    if pressure is not None and pressure >= BUSY_WAITED_FRACTION:
        print(
            f"Busy:    in the last 10 s some task on this machine waited for a CPU {pressure:.0%} of the time (an "
            "earlier notebook counts too); close what you started (a build, another notebook) for numbers you can compare."
        )
    for line in orientation(name):
        print(line)
    return NotebookSession(name=name, backend=chosen, out_dir=nb_dir, parameters=parameters, default_threads=default_threads)
