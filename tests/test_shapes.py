"""Notebook 07's stream: its lengths, the bad inputs refused with their fix, and the bucketing."""

import pytest
import torch

from helpers.errors import ParameterError
from helpers.params import check_parameters
from lesson.rmsnorm import rmsnorm_naive
from lesson.shapes import bucketed_call, check_stream, request_lengths


def test_lengths_are_seeded_and_in_range():
    lengths = request_lengths(200, 512, seed=3)
    assert lengths == request_lengths(200, 512, seed=3) and lengths != request_lengths(200, 512, seed=4)
    assert min(lengths) >= 1 and max(lengths) <= 512
    assert sum(n <= 64 for n in lengths) > sum(n > 256 for n in lengths)  # many short, few long


@pytest.mark.parametrize(
    "lengths, buckets, message, fix",
    [
        ([5, 9], [], "BUCKETS is empty", "give sizes"),
        ([5, 300], [64, 256], "largest bucket (256) is smaller than the longest request (300 tokens)", "add a bucket >= 300"),
        ([5, 0, 7], [64], "request 1 has length 0", "lengths >= 1"),
        ([5], [64, -1], "BUCKETS must be positive integers", "[64, 128, 256, 512]"),
    ],
)
def test_bad_streams_are_refused_with_the_fix(lengths, buckets, message, fix):
    with pytest.raises(ParameterError) as err:
        check_stream(lengths, buckets)
    assert message in str(err.value) and fix in err.value.fix


def test_buckets_parameter_must_be_a_list_of_sizes():
    check_parameters({"BUCKETS": [64, 128]})
    with pytest.raises(ParameterError, match="BUCKETS must be a list"):
        check_parameters({"BUCKETS": "64,128"})


def test_bucketed_call_pads_runs_and_slices():
    seen = []

    def spy(x, w, eps):
        seen.append(tuple(x.shape))
        return rmsnorm_naive(x, w, eps)

    x, w = torch.randn(5, 8), torch.randn(8)
    out = bucketed_call(spy, x, w, 1e-6, [4, 16, 32])
    assert seen == [(16, 8)] and out.shape == (5, 8)
    torch.testing.assert_close(out, rmsnorm_naive(x, w, 1e-6))  # zero rows change nothing in the others
