"""The dispatch chain of one call: the nesting of ops under a label, with the device kernels each
runtime launch started (PyTorch op -> ATen op -> runtime launch -> device kernel), and where
`key_averages()` counts fewer calls than the tree shows. Built on the trace model of `analysis.traces`.
"""

from __future__ import annotations

from typing import NamedTuple

from .traces import Trace, representative_step


class CallNode(NamedTuple):
    depth: int
    name: str
    lane: str
    duration_us: float | None  # None for a device kernel listed under the launch that started it


def call_tree(trace: Trace, root: str, step: int | None = None, max_depth: int = 6) -> list[CallNode]:
    """The nesting under the first `root` op of a step (the representative one by default), in
    call order; empty where the step has no `root`.

    On cuda the device kernels launched from inside the tree follow their launch one level deeper,
    which is the dispatch chain: PyTorch op -> ATen op -> runtime launch -> device kernel.
    """
    ev = trace.events
    if step is None:
        step = representative_step(trace)
    candidates = ev[(ev["name"] == root) & (ev["step"] == step)].sort_values("ts")
    if candidates.empty:
        return []
    top = candidates.iloc[0]
    inside = ev[(ev["tid"] == top["tid"]) & (ev["ts"] >= top["ts"]) & (ev["end"] <= top["end"])]
    inside = inside.sort_values(["ts", "dur"], ascending=[True, False])
    kernels_by_corr = ev[ev["lane"] == "device"].groupby("correlation")["name"].apply(list).to_dict()
    nodes: list[CallNode] = []
    stack: list[float] = []
    for _, e in inside.iterrows():
        while stack and e["ts"] >= stack[-1]:
            stack.pop()
        depth = len(stack)
        if depth < max_depth:
            nodes.append(CallNode(depth, str(e["name"]), str(e["lane"]), float(e["dur"])))
            for k in kernels_by_corr.get(e["correlation"], []) if e["lane"] == "runtime" else []:
                nodes.append(CallNode(depth + 1, str(k), "device", None))
        stack.append(e["end"])
    return nodes


def folded_by_key_averages(nodes: list[CallNode]) -> list[str]:
    """The ops of a `call_tree` that `prof.key_averages()` counts once where the tree shows two: a
    call that is its parent's only child and has its parent's name (aten::div_ directly inside
    aten::div_). PyTorch merges such a pair into one event before counting
    (torch.autograd.profiler_util.EventList._remove_dup_nodes), so a table's call count and the
    tree's can differ; this names where."""
    path: list[int] = []  # the open nodes from the root, by index
    children = [0] * len(nodes)
    same_name: list[tuple[int, str]] = []
    for i, node in enumerate(nodes):
        del path[node.depth :]
        if path:
            children[path[-1]] += 1
            if nodes[path[-1]].name == node.name:
                same_name.append((path[-1], node.name))
        path.append(i)
    return sorted({name for parent, name in same_name if children[parent] == 1})


def dispatch_tree(
    trace: Trace, root: str, step: int | None = None, max_depth: int = 6, kernel_name=lambda name: name
) -> list[str]:
    """`call_tree` as indented lines with durations, for printing; `kernel_name` shortens the
    device kernels' names (e.g. `analysis.device_view.short_kernel_name`)."""
    if step is None:
        step = representative_step(trace)
    nodes = call_tree(trace, root, step, max_depth)
    if not nodes:
        return [f"(no '{root}' in step {step})"]
    return [
        f"{'  ' * n.depth}-> {kernel_name(n.name)}  [device]"
        if n.duration_us is None
        else f"{'  ' * n.depth}{n.name}  [{n.lane}, {n.duration_us:.1f} us]"
        for n in nodes
    ]
