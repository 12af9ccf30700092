"""Sweep tokens x hidden for every RMSNorm variant and the copy floor.

    python -m series_tools.sweep [--tokens 8 64 512 4096] [--hidden 1024 4096] [--dtype float32]
                            [--backend auto] [--repeats 7] [--out runs/]

For each point it times every variant and the copy interleaved (the series' timer: one sample of
each in turn) and records the median time per call, the achieved GB/s (counting only what an
ideal RMSNorm moves: read x once, write y once), the ratio to the copy of the same size taken per
round with its p10-p90 (as notebook 05 does), and the regime. The regime uses a two-term model,
time = fixed cost + bytes / bandwidth, with each variant's fixed cost estimated by its cheapest
call anywhere in the sweep (robust to one noisy small point): a point is *overhead-bound* where
that fixed cost is more than half its time, otherwise *memory-bound*. Writes sweep.csv and
sweep.png into a new folder under --out.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from series_tools.cli import OneLineParser
from helpers.errors import SeriesError
from helpers.outputs import RUNS_DIR, ensure_writable_dir, new_run_dir, write_atomic
from helpers.series import VARIANT_KEYS

VARIANT_NAMES = tuple(VARIANT_KEYS)  # copy, naive, torch.rms_norm, torch.compile


SWEEP_FLAGS = {
    "TOKENS": "--tokens",
    "HIDDEN": "--hidden",
    "DTYPE": "--dtype",
    "BACKEND": "--backend",
    "REPEATS": "--repeats",
    "OUT_DIR": "--out",
}


def in_sweep_flags(exc: SeriesError) -> SeriesError:
    """`exc` with the notebooks' parameters (`-p TOKENS 4`, `BACKEND=cpu`, OUT_DIR) named as this
    tool's flags (`--tokens 4`, `--backend cpu`, --out): a printed fix must be one the sweep takes."""

    def flags(text: str) -> str:
        names = "|".join(SWEEP_FLAGS)
        return re.sub(rf"(?:-p )?\b({names})\b(=)?", lambda m: SWEEP_FLAGS[m.group(1)] + (" " if m.group(2) else ""), text)

    return type(exc)(flags(exc.problem), flags(exc.fix))


def run_sweep(
    tokens: list[int], hidden: list[int], dtype: str, backend_name: str, repeats: int, variants: tuple[str, ...] = VARIANT_NAMES
):
    if "copy" not in variants:
        raise SeriesError("the sweep needs the copy variant", "keep `copy` in --variants: it is the floor")
    import pandas as pd
    import torch

    from helpers.backend import select_backend
    from analysis.floor import copy_floor
    from analysis.timing import paired_ratio, time_interleaved
    from lesson.rmsnorm import call_compiled, compile_rmsnorm, make_inputs, rmsnorm_torch, rmsnorm_naive

    backend = select_backend(backend_name)
    compiled = compile_rmsnorm(rmsnorm_naive, backend)
    fns = {
        "copy": lambda x, w: copy_floor(x),
        "naive": lambda x, w: rmsnorm_naive(x, w, 1e-6),
        "torch.rms_norm": lambda x, w: rmsnorm_torch(x, w, 1e-6),
        "torch.compile": lambda x, w: call_compiled(compiled, x, w, 1e-6),
    }
    rows = []
    points = sorted((t, h) for t in tokens for h in hidden)
    for i, (t, h) in enumerate(points, 1):
        x, w = make_inputs(t, h, dtype, backend)
        moved = 2 * x.numel() * x.element_size()
        print(f"[{i}/{len(points)}] {t} x {h}", flush=True)
        with torch.no_grad():  # the warm-up calls compile torch.compile's graph for this shape, untimed
            timings = time_interleaved(
                {name: (lambda name=name, x=x, w=w: fns[name](x, w)) for name in variants}, backend, repeats=repeats
            )
        for name, timing in timings.items():
            ratio = paired_ratio(timings, name, "copy")
            rows.append(
                {
                    "variant": name,
                    "tokens": t,
                    "hidden": h,
                    "bytes_moved": moved,
                    "median_us": timing.median_us,
                    "p10_us": timing.p10_us,
                    "p90_us": timing.p90_us,
                    "GB_per_s": moved / (timing.median_us * 1e-6) / 1e9,
                    "over_copy": ratio.median,
                    "over_copy_p10": ratio.p10,
                    "over_copy_p90": ratio.p90,
                }
            )
        del x, w
    df = pd.DataFrame(rows)
    fixed = df.groupby("variant")["median_us"].min()
    df["fixed_cost_share"] = df["variant"].map(fixed) / df["median_us"]
    df["regime"] = ["overhead-bound" if s > 0.5 else "memory-bound" for s in df["fixed_cost_share"]]
    return backend, df


def plot_sweep(df, backend: str, dtype: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analysis.figures import backend_title
    from helpers.plotting import set_plot_defaults

    set_plot_defaults()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, part in df.groupby("variant", sort=False):
        part = part.sort_values("bytes_moved")
        style = {"ls": "--", "color": "black"} if name == "copy" else {}
        ax1.plot(part["bytes_moved"] / 2**20, part["median_us"], marker="o", label=name, **style)
        ax2.plot(part["bytes_moved"] / 2**20, part["GB_per_s"], marker="o", label=name, **style)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("bytes an ideal RMSNorm moves (MiB, log)")
    ax1.set_yscale("log")
    ax1.set_ylabel("median time per call (us, log)")
    ax2.set_ylabel("achieved GB/s (read x + write y)")
    ax1.legend()
    fig.suptitle(backend_title(f"RMSNorm shape sweep ({dtype}): time and bandwidth", backend))
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m series_tools.sweep", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[8, 64, 512, 4096])
    parser.add_argument("--hidden", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--variants", nargs="+", default=list(VARIANT_NAMES), choices=VARIANT_NAMES)
    parser.add_argument("--out", default=str(RUNS_DIR), help="parent of the new sweep folder (default: runs/)")
    args = parser.parse_args(argv)
    from helpers.environment import configure_allocator

    configure_allocator()  # the notebooks' host-memory settings, before torch is imported
    try:
        from helpers.params import check_parameters

        for v in args.tokens:
            check_parameters({"TOKENS": v})
        for v in args.hidden:
            check_parameters({"HIDDEN": v})
        check_parameters({"DTYPE": args.dtype, "REPEATS": args.repeats, "BACKEND": args.backend})
        ensure_writable_dir(args.out)  # before the sweep's minutes, not after them
        backend, df = run_sweep(args.tokens, args.hidden, args.dtype, args.backend, args.repeats, tuple(args.variants))
        out = new_run_dir(Path(args.out), backend.name, "sweep")
    except SeriesError as exc:
        print(f"error: {in_sweep_flags(exc)}", file=sys.stderr)
        return 2
    write_atomic(out / "sweep.csv", df.to_csv(index=False))
    plot_sweep(df, backend.name, args.dtype, out / "sweep.png")
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"\nwrote {out / 'sweep.csv'} and {out / 'sweep.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
