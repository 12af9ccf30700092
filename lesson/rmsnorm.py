"""The RMSNorm variants under study, their float64 reference, and their input checks.

    y = x / sqrt(mean(x^2, last dim) + eps) * weight

`rmsnorm_naive` and `rmsnorm_torch` are written in notebooks 02 and 03, in cells marked
`# @save lesson/rmsnorm.py`: those cells are their source, and tests/test_one_source.py fails if
the copies here differ. They are here for the notebooks after them, the sweep tool and the tests.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from helpers.backend import Backend
from helpers.errors import CompileError, DeviceMemoryError, InputError
from helpers.series import DTYPE_NAMES

DTYPES = {name: getattr(torch, name) for name in DTYPE_NAMES}

# Max error against the float64 reference, relative to the largest reference value: 4 units in
# the last place of the dtype. Measured here: about 1 ULP for every variant in fp32, bf16, fp16.
ULPS_ALLOWED = 4


def rmsnorm_naive(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Separate ops (float32): pow and the two muls write full-size tensors; mean reads the full-size
    squares and writes a (tokens x 1) tensor, on which add and rsqrt work."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rmsnorm_torch(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """PyTorch's own op: aten::rms_norm -> aten::_fused_rms_norm (named for that op: on cpu in torch 2.13, at float32, it runs separate ATen ops)."""
    return torch.rms_norm(x, (x.shape[-1],), weight, eps)


# Rows per block of the float64 reference and of the error against it (see rmsnorm_reference).
REFERENCE_ROWS = 256


def rmsnorm_reference(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """The naive formula in float64 on the CPU: the ground truth for error measurements.

    Computed `REFERENCE_ROWS` rows at a time into one float64 tensor, bit for bit the whole-tensor
    formula (each row's mean is its own): at 8192x4096 the whole-tensor form wrote three more
    full-size float64 temporaries, and faulting in their fresh pages took 1-2 s of every notebook
    that checks its variants' error (0.2 s in blocks, measured on the 2-core machine)."""
    x64_rows = x.detach().reshape(-1, x.shape[-1]) if x.dim() else x.detach().reshape(1, 1)
    w64 = weight.detach().to("cpu", torch.float64)
    out = torch.empty(x64_rows.shape, dtype=torch.float64)
    for start in range(0, x64_rows.shape[0], REFERENCE_ROWS):
        rows = x64_rows[start : start + REFERENCE_ROWS].to("cpu", torch.float64)
        torch.mul(rows * torch.rsqrt(rows.pow(2).mean(-1, keepdim=True) + eps), w64, out=out[start : start + REFERENCE_ROWS])
    return out.reshape(x.shape)


def compile_rmsnorm(fn: Callable[..., torch.Tensor], backend: Backend) -> Callable[..., torch.Tensor]:
    """torch.compile with the backend's compiler, fullgraph=True (a graph break is an error) and
    static shapes (each new shape compiles its own graph; Neuron rejects dynamic=True)."""
    return torch.compile(fn, backend=backend.compile_backend, fullgraph=True, dynamic=False)


def summarise_dynamo_error(text: str) -> str:
    """Dynamo's multi-line report reduced to: what broke, the op it names, and the user's line."""
    lines = [line.strip() for line in text.strip().splitlines()]
    headline = lines[0] if lines else "unknown error"
    explanation = next((line.removeprefix("Explanation:").strip() for line in lines if line.startswith("Explanation:")), "")
    where = ""
    if "from user code:" in lines:
        tail = lines[lines.index("from user code:") + 1 :]
        files = [i for i, line in enumerate(tail) if line.startswith("File ")]
        if files:
            i = files[-1]
            code = tail[i + 1] if i + 1 < len(tail) else ""
            where = f"at {tail[i]}: `{code}`"
    return ". ".join(part.rstrip(".") for part in (headline, explanation, where) if part)


def call_compiled(compiled: Callable[..., torch.Tensor], *args: object) -> torch.Tensor:
    """Call a compiled function; a compile failure or graph break becomes one clear error."""
    import torch._dynamo.exc as dynamo_exc

    try:
        return compiled(*args)
    except dynamo_exc.Unsupported as exc:
        raise CompileError(
            f"torch.compile(fullgraph=True) found a graph break: {summarise_dynamo_error(str(exc))}",
            "the op named there cannot be captured in one graph; rewrite it with tensor ops, or "
            "compile without fullgraph=True and read torch._dynamo.explain() to see each break",
        ) from exc
    except dynamo_exc.BackendCompilerFailed as exc:
        inner = getattr(exc, "inner_exception", None)
        cause = f"{type(inner).__name__}: {inner}" if inner is not None else summarise_dynamo_error(str(exc))
        raise CompileError(
            f"the torch.compile backend failed: {cause}",
            "run the function eagerly to check it works, then report the op named above",
        ) from exc


def check_inputs(x: torch.Tensor, weight: torch.Tensor, eps: float, backend: Backend) -> None:
    """Refuse inputs RMSNorm cannot take, with the fix, before torch fails deep inside."""
    if x.numel() == 0:
        raise InputError(f"the input is empty (shape {tuple(x.shape)})", "use TOKENS >= 1 and HIDDEN >= 1")
    if not x.is_floating_point():
        raise InputError(f"RMSNorm needs a floating-point input, got {x.dtype}", f"use DTYPE in {', '.join(DTYPES)}")
    if backend.name == "neuron" and x.dtype == torch.float64:
        raise InputError("float64 is not run on neuron in this series", "use DTYPE float32 or bfloat16")
    if tuple(weight.shape) != (x.shape[-1],):
        raise InputError(
            f"weight has shape {tuple(weight.shape)} but the last dimension of x is {x.shape[-1]}",
            f"make the weight torch.ones({x.shape[-1]}) (one scale per hidden unit)",
        )
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps > 0:
        raise InputError(f"eps must be > 0, got {eps!r}", "eps guards the division: use e.g. 1e-6")


def format_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n} B"


def check_fits_in_memory(tokens: int, hidden: int, dtype: torch.dtype, backend: Backend, tensors: int = 5) -> int:
    """Bytes the study needs at this shape; DeviceMemoryError if more than 90% of what is free.

    `tensors` counts the input, the output and the naive chain's intermediates alive at once.
    """
    per_tensor = tokens * hidden * torch.empty((), dtype=dtype).element_size()
    need = per_tensor * tensors
    free = backend.memory_free_bytes()
    if free is not None and need > 0.9 * free:
        raise DeviceMemoryError(
            f"TOKENS x HIDDEN = {tokens} x {hidden} in {str(dtype).removeprefix('torch.')} needs about "
            f"{format_bytes(need)} on {backend.name} ({tensors} tensors of {format_bytes(per_tensor)}), "
            f"but only {format_bytes(free)} is free",
            "lower TOKENS or HIDDEN",
        )
    return need


def make_inputs(
    tokens: int, hidden: int, dtype_name: str, backend: Backend, eps: float = 1e-6, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random x (tokens x hidden) and a non-trivial weight on the backend's device, checked."""
    if dtype_name not in DTYPES:
        raise InputError(f"DTYPE {dtype_name!r} is not one this series runs", f"use one of {', '.join(DTYPES)}")
    dtype = DTYPES[dtype_name]
    check_fits_in_memory(tokens, hidden, dtype, backend)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, hidden, generator=gen).to(backend.device, dtype)
    weight = (1.0 + 0.1 * torch.randn(hidden, generator=gen)).to(backend.device, dtype)
    check_inputs(x, weight, eps, backend)
    return x, weight


def max_error(out: torch.Tensor, reference: torch.Tensor) -> float:
    """Largest absolute difference to the reference, relative to the reference's largest value.

    In blocks of `REFERENCE_ROWS` rows where the shapes match (no full-size float64 copy of `out`)."""
    out = out.detach().to("cpu")
    if out.shape != reference.shape or out.dim() < 2:
        diff = (out.to(torch.float64) - reference).abs().max().item()
        return diff / reference.abs().max().item()
    out_rows, ref_rows = out.reshape(-1, out.shape[-1]), reference.reshape(-1, reference.shape[-1])
    diff = largest = 0.0
    for start in range(0, out_rows.shape[0], REFERENCE_ROWS):
        ref_block = ref_rows[start : start + REFERENCE_ROWS]
        diff = max(diff, (out_rows[start : start + REFERENCE_ROWS].to(torch.float64) - ref_block).abs().max().item())
        largest = max(largest, ref_block.abs().max().item())
    return diff / largest


def error_tolerance(dtype: torch.dtype) -> float:
    return ULPS_ALLOWED * torch.finfo(dtype).eps


def within_tolerance(err: float, dtype: torch.dtype) -> bool:
    return math.isfinite(err) and err <= error_tolerance(dtype)
