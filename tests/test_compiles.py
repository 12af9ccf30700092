"""analysis.compiles: what torch.compile did, read from Dynamo's own counters and log while a
small function compiles here (the eager backend: Dynamo's graph capture without code generation)."""

import torch
import torch._dynamo

from analysis.compiles import captured_compile_logs, cold_call_origin, compile_counters, recompile_limit_name


def double(x):
    return x * 2


def test_a_new_shape_compiles_a_graph_and_logs_the_recompile():
    torch._dynamo.reset()
    compiled = torch.compile(double, backend="eager", dynamic=False)
    before = compile_counters()
    with captured_compile_logs() as log:
        compiled(torch.ones(3))
        compiled(torch.ones(3))  # same shape: no new graph
        compiled(torch.ones(5))  # new shape, static shapes: a recompile
    after = compile_counters()
    assert after["graphs"] - before["graphs"] == 2
    assert len(log.recompile_reasons) == 1 and log.limit_warnings == []
    torch._dynamo.reset()


def test_the_recompile_limit_is_named_as_this_torch_names_it():
    import torch._dynamo.config as config

    assert hasattr(config, recompile_limit_name())


def test_generated_kernel_is_read_down_to_its_loops_buffers_and_passes_over_x():
    """Inductor's code for the naive RMSNorm at 8192 x 4096 on cpu, as notebook 04 wrote it in a run of
    this project (torch 2.13.0+cpu; tests/data/inductor_rmsnorm_cpu.py.txt): two loops over each row,
    x read in each, a per-row sum written to a buffer that is never returned, and the output."""
    from pathlib import Path

    from analysis.compiles import read_generated_kernel

    code = (Path(__file__).parent / "data" / "inductor_rmsnorm_cpu.py.txt").read_text()
    kernel = read_generated_kernel(code, (8192, 4096), (4096,))
    assert len(kernel.names) == 1
    assert kernel.reads == ["in_ptr0", "in_ptr1"] and kernel.writes == ["out_ptr0", "out_ptr1"]
    what = {pointer: (tensor, dims, text) for pointer, tensor, dims, text in kernel.pointers}
    assert what["in_ptr0"][2] == "the input x" and what["in_ptr1"][2] == "the weight"
    assert what["out_ptr0"][0].startswith("buf") and "never returned" in what["out_ptr0"][2]
    assert "returns it" in what["out_ptr1"][2]
    assert sum(line.lstrip().startswith("for ") for line in kernel.outline) >= 2
    assert kernel.x_pointer == "in_ptr0" and kernel.x_loads == 2 and kernel.reads_x_per_loop
    report = kernel.report()
    assert any("x is loaded twice" in line for line in report) and report[0].startswith("Inductor generated 1 kernel")
    # a shape that matches nothing: the input is named only as an input, never guessed to be x
    other = read_generated_kernel(code, (1, 1), (4096,))
    assert other.x_pointer is None and other.x_loads == 0


def test_the_stream_summary_counts_compiles_eager_lengths_and_the_steady_state():
    import pandas as pd

    from analysis.compiles import stream_summary

    def rows(strategy, compiled):  # lengths 4, 8, 4, 16 served twice; pass 2 compiles nothing
        lengths = [4, 8, 4, 16]
        return [
            {
                "strategy": strategy,
                "pass": p,
                "tokens": n,
                "seconds": (0.5 if c and p == 1 else 0.001) * (1 + (n == 16)),
                "compiled": bool(c and p == 1),
                "cache_hits": 0,
                "cache_misses": int(c and p == 1),
            }
            for p in (1, 2)
            for n, c in zip(lengths, compiled)
        ]

    # static with a limit of 2: the third length (16) ran eagerly; dynamic compiled once and served the rest
    calls = pd.DataFrame(rows("static", [1, 1, 0, 0]) + rows("dynamic", [1, 0, 0, 0]))
    s = stream_summary(calls)
    assert list(s.index) == ["static", "dynamic"]
    assert s.loc["static", "compiles"] == 2 and s.loc["static", "eager_fallbacks"] == 1
    assert s.loc["dynamic", "compiles"] == 1 and s.loc["dynamic", "eager_fallbacks"] == 0  # not specialised
    assert s.loc["static", "compile_s"] == 1.0 and s.loc["static", "cache_misses"] == 2
    assert s.loc["static", "us_per_token"] == (0.001 * 3 + 0.002) / 32 * 1e6  # pass 2's time over its tokens


def test_the_cold_call_origin_is_read_from_the_counters_it_changed():
    assert cold_call_origin({"graphs": 1, "cache_hits": 1, "cache_misses": 0, "cache files added": 0}).startswith("loaded")
    assert cold_call_origin({"graphs": 1, "cache_hits": 0, "cache_misses": 1}).startswith("compiled from scratch")
    assert cold_call_origin({"graphs": 1, "cache_misses": 0, "cache files added": 3}).startswith("compiled from scratch")
    assert cold_call_origin({"graphs": 1, "cache_hits": 1, "cache files added": 3}).startswith("found this graph")
    assert cold_call_origin({"graphs": 1, "cache_hits": 0, "cache_misses": 0}).startswith("no Inductor cache lookup")


def test_a_neuron_cold_call_is_read_from_the_neff_cache_files_it_added():
    from analysis.compiles import cold_call_origin

    assert cold_call_origin({"NEFF cache files added": 3}).startswith("compiled by neuronx-cc")
    assert cold_call_origin({"NEFF cache files added": 0}).startswith("no new NEFF cache files")
    assert cold_call_origin({}).startswith("no Inductor cache lookup counted")
