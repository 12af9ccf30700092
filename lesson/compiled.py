"""Notebook 04's reading of Inductor's generated kernel beside the measured allocations.

Why: the lesson cell should show the allocation table, not the arithmetic that turns the listing's
buffers into a ratio.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from analysis.compiles import GeneratedKernel


def written_over_input(kernel: GeneratedKernel | None, x: torch.Tensor) -> float:
    """The elements the generated kernel writes (its `out_ptr` buffers) over the input's elements.

    Why: set beside the measured `alloc_over_input`, it shows that a compiled call allocates
    what its kernel writes and nothing more (no full-size intermediate).

    Args:
        kernel: `analysis.read_generated_kernel(...)`'s result, or None where the backend has no
            Inductor listing.
        x: the input the kernel was compiled for.

    Returns:
        The ratio; NaN where there is no listing or it writes no buffer.
    """
    pointers = kernel.pointers if kernel is not None else []
    written = sum(math.prod(int(d) for d in dims) for pointer, _, dims, _ in pointers if pointer.startswith("out_ptr"))
    return written / x.numel() if written else math.nan
