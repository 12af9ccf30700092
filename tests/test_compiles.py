"""analysis.compiles: what torch.compile did, read from Dynamo's own counters and log while a
small function compiles here (the eager backend: Dynamo's graph capture without code generation)."""

import torch
import torch._dynamo

from analysis.compiles import captured_compile_logs, compile_counters, recompile_limit_name


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
