"""One rank of notebook 08's data-parallel step, run by torchrun (`python -m torch.distributed.run`).

    python -m torch.distributed.run --nproc-per-node 2 -m lesson.rank_worker --out DIR [...]

`train_step` is written in notebook 08, in a cell marked `# @save lesson/rank_worker.py`: that
cell is its source (tests/test_one_source.py). The rest is plumbing: the process group, the
profiled loop (the series' schedule, one trace per rank), the timestamps of every phase on a
clock all ranks share, and an error file per rank, so that a rank that fails is reported by rank.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import traceback
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from analysis.contention import contention_between, read_counters


def train_step(model, x, straggle_s: float) -> dict[str, int]:
    """Forward, backward, extra work on a slow rank, then the all-reduce of the gradients.
    Returns when each phase ended (time.monotonic_ns; Linux: one clock for every process of a machine)."""

    def now():  # the clock is read once the device has finished its queued work
        if x.device.type in ("cuda", "neuron"):  # both queue work asynchronously (docs/NEURON_NOTES.md N6)
            getattr(torch, x.device.type).synchronize()  # torch.cuda.synchronize(), torch.neuron.synchronize()
        return time.monotonic_ns()

    marks = {"start": now()}
    with record_function("compute"):
        model(x).pow(2).mean().backward()
    if straggle_s:
        with record_function("straggler work"):
            end = time.perf_counter() + straggle_s
            while time.perf_counter() < end:  # this rank is slower: the others will wait for it
                pass
    marks["compute_end"] = now()
    with record_function("all_reduce"):
        grads = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(grads)  # gloo (cpu) blocks here until the slowest rank arrives; on cuda/neuron, now() may wait instead
    marks["collective_end"] = now()
    for p in model.parameters():
        p.grad = None
    return marks


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The worker's options. `--device neuron` is for Trainium's recipe (notebook 08 prints it):
    UNVERIFIED, never run here; cpu and cuda are the paths the series runs."""
    parser = argparse.ArgumentParser(prog="python -m lesson.rank_worker")
    parser.add_argument("--out", required=True)
    parser.add_argument("--backend", default="gloo")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda", "neuron"))
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--wait", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--active", type=int, default=5)
    parser.add_argument("--straggler-rank", type=int, default=-1)
    parser.add_argument("--straggler-ms", type=float, default=0.0)
    parser.add_argument("--fail-rank", type=int, default=-1)
    parser.add_argument("--timeout-s", type=float, default=30.0)
    return parser.parse_args(argv)


def rank_device(name: str, local_rank: int) -> torch.device:
    """This rank's device: its own GPU on cuda; on neuron the one NeuronCore TorchNeuron's backend
    leaves visible to it (NEURON_RT_VISIBLE_CORES = LOCAL_RANK, docs/NEURON_NOTES.md N30), so no
    index is given (UNVERIFIED: never run here)."""
    if name == "cuda":
        return torch.device("cuda", local_rank)
    return torch.device(name)


def _stopped_by_launcher(signum: int, frame: object) -> None:
    """torchrun stops the other ranks with SIGTERM when one fails; raised here, the stop reaches the error file
    below like any failure (a rank stopped before gloo reported the closed connection wrote none: 08 then listed one
    rank where two failed, in one CI run)."""
    raise SystemExit(f"stopped by its launcher (signal {signum}), as torchrun stops the other ranks when one fails")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rank = int(os.environ["RANK"])
    out = Path(args.out)
    signal.signal(signal.SIGTERM, _stopped_by_launcher)
    try:
        torch.set_num_threads(1)  # one core per rank: ranks must not fight over the same cores
        dist.init_process_group(args.backend, timeout=timedelta(seconds=args.timeout_s))
        device = rank_device(args.device, int(os.environ["LOCAL_RANK"]))
        if device.type == "cuda":
            torch.cuda.set_device(device)
        torch.manual_seed(0)  # every rank starts from the same weights, as data parallelism requires
        model = torch.nn.Sequential(torch.nn.RMSNorm(args.hidden), torch.nn.Linear(args.hidden, args.hidden)).to(device)
        x = torch.randn(args.tokens, args.hidden, generator=torch.Generator().manual_seed(rank)).to(device)  # its own batch
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        straggle_s = args.straggler_ms / 1000 if rank == args.straggler_rank else 0.0
        steps = []  # the straggler works extra on odd steps only: "on" and "off" alternate, step by step
        with profile(
            activities=activities,
            schedule=schedule(wait=args.wait, warmup=args.warmup, active=args.active, repeat=1),
            on_trace_ready=lambda p: p.export_chrome_trace(str(out / f"rank{rank}.trace.json")),
        ) as prof:
            for step in range(args.wait + args.warmup + args.active):
                if step == args.wait + args.warmup:  # this rank's own CPU counters, around its profiled steps
                    counters = read_counters()
                if rank == args.fail_rank and step == args.wait + args.warmup:
                    raise RuntimeError(f"rank {rank} failed on purpose at step {step} (--fail-rank)")
                marks = train_step(model, x, straggle_s if step % 2 else 0.0)
                steps.append({"step": step, "recorded": step >= args.wait + args.warmup, "straggling": bool(step % 2), **marks})
                prof.step()
        contention = vars(contention_between(counters, read_counters()))  # did a thread of this rank wait for a CPU?
        (out / f"rank{rank}.json").write_text(json.dumps({"rank": rank, "steps": steps, "contention": contention}))
        dist.barrier()  # no rank tears its connections down while another may still be using them
        dist.destroy_process_group()
        return 0
    except BaseException as exc:
        (out / f"rank{rank}.error.txt").write_text(f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}")
        raise


if __name__ == "__main__":
    code = main()  # a failure raises: its traceback prints and the rank exits non-zero as usual
    # After a clean finish, leave without the interpreter's teardown. In one CI run a rank aborted after writing its
    # results, with no Python traceback ("terminate called without an active exception", SIGABRT: a C++ thread
    # destroyed while still running), in destroy_process_group or at exit; the barrier above and this exit are the
    # two mitigations. Everything it wrote is closed; flush what it printed and go.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
