"""RMSNorm variants: they agree with the float64 reference, and bad input gets a clear message."""

import pytest
import torch

from helpers.errors import CompileError, DeviceMemoryError, InputError
from lesson.rmsnorm import (
    DTYPES,
    call_compiled,
    check_inputs,
    compile_rmsnorm,
    error_tolerance,
    make_inputs,
    max_error,
    rmsnorm_torch,
    rmsnorm_naive,
    rmsnorm_reference,
    within_tolerance,
)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("fn", [rmsnorm_naive, rmsnorm_torch], ids=["naive", "torch_rms_norm"])
def test_variants_match_reference(cpu_backend, fn, dtype):
    x, w = make_inputs(16, 256, dtype, cpu_backend)
    err = max_error(fn(x, w, 1e-6), rmsnorm_reference(x, w, 1e-6))
    assert within_tolerance(err, DTYPES[dtype]), err


def test_tolerance_catches_a_wrong_result(cpu_backend):
    x, w = make_inputs(16, 256, "float32", cpu_backend)
    wrong = rmsnorm_naive(x, w, 1e-6) * 1.001  # a 0.1% error is far above 4 ULPs of fp32
    assert not within_tolerance(max_error(wrong, rmsnorm_reference(x, w, 1e-6)), torch.float32)
    assert error_tolerance(torch.bfloat16) > error_tolerance(torch.float32)


@pytest.mark.parametrize("shape", [(600, 64), (2, 3, 64), (64,)], ids=["rows-past-two-blocks", "3-d", "1-d"])
def test_the_blocked_reference_and_error_equal_the_whole_tensor_formula(shape):
    """rmsnorm_reference and max_error work REFERENCE_ROWS rows at a time for speed: the same bits
    as the whole-tensor formula, and an error in the last block's last row is found."""
    x, w = torch.randn(*shape, dtype=torch.float32), 1 + 0.1 * torch.randn(shape[-1])
    x64, w64 = x.double(), w.double()
    whole = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + 1e-6) * w64
    assert torch.equal(rmsnorm_reference(x, w, 1e-6), whole)
    out = rmsnorm_naive(x, w, 1e-6).clone()
    expected = ((out.double() - whole).abs().max() / whole.abs().max()).item()
    assert max_error(out, whole) == expected
    out.reshape(-1, shape[-1])[-1, -1] += 1.0
    assert max_error(out, whole) == ((out.double() - whole).abs().max() / whole.abs().max()).item() > 0.1


def test_compiled_matches_and_is_one_graph(cpu_backend):
    x, w = make_inputs(8, 128, "float32", cpu_backend)
    compiled = compile_rmsnorm(rmsnorm_naive, cpu_backend)
    out = call_compiled(compiled, x, w, 1e-6)
    assert within_tolerance(max_error(out, rmsnorm_reference(x, w, 1e-6)), torch.float32)
    assert torch._dynamo.explain(rmsnorm_naive)(x, w, 1e-6).graph_break_count == 0


def test_graph_break_names_the_op_and_line(cpu_backend):
    def with_print(x, weight, eps):
        y = rmsnorm_naive(x, weight, eps)
        print("inside the graph")
        return y

    x, w = make_inputs(8, 128, "float32", cpu_backend)
    with pytest.raises(CompileError) as err:
        call_compiled(compile_rmsnorm(with_print, cpu_backend), x, w, 1e-6)
    msg = str(err.value)
    assert "graph break" in msg and "`print`" in msg and 'print("inside the graph")' in msg
    assert "Fix:" in msg


def test_weight_of_wrong_size(cpu_backend):
    with pytest.raises(InputError, match=r"weight has shape \(100,\) but the last dimension of x is 64"):
        check_inputs(torch.ones(4, 64), torch.ones(100), 1e-6, cpu_backend)


def test_integer_dtype(cpu_backend):
    with pytest.raises(InputError, match="floating-point"):
        check_inputs(torch.ones(4, 64, dtype=torch.int32), torch.ones(64), 1e-6, cpu_backend)


def test_unknown_dtype_name(cpu_backend):
    with pytest.raises(InputError, match="use one of float32, bfloat16, float16"):
        make_inputs(4, 64, "float8", cpu_backend)


def test_float64_refused_on_neuron():
    from helpers.backend import make_backend

    with pytest.raises(InputError, match="float64 is not run on neuron"):
        check_inputs(
            torch.ones(4, 8, dtype=torch.float64), torch.ones(8, dtype=torch.float64), 1e-6, make_backend("neuron", "test")
        )


def test_empty_tensor(cpu_backend):
    with pytest.raises(InputError, match="empty"):
        check_inputs(torch.ones(0, 64), torch.ones(64), 1e-6, cpu_backend)


@pytest.mark.parametrize("eps", [0, -1e-6, float("nan")])
def test_eps_must_be_positive(cpu_backend, eps):
    with pytest.raises(InputError, match="eps must be > 0"):
        check_inputs(torch.ones(4, 64), torch.ones(64), eps, cpu_backend)


def test_shape_too_large_says_how_much(cpu_backend, monkeypatch):
    monkeypatch.setattr(type(cpu_backend), "memory_free_bytes", lambda self: 1 * 2**30)
    with pytest.raises(DeviceMemoryError) as err:
        make_inputs(65536, 65536, "float32", cpu_backend)
    msg = str(err.value)
    assert "needs about 80.0 GiB" in msg and "only 1.0 GiB is free" in msg and "lower TOKENS or HIDDEN" in msg
