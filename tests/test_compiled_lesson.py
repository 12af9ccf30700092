"""lesson.compiled: the generated kernel's writes over the input, read from a listing's pointers."""

import math

import torch

from analysis.compiles import GeneratedKernel
from lesson.compiled import written_over_input


def _kernel(pointers):
    return GeneratedKernel([], [], [], [], pointers, "in_ptr0", 2, True)


def test_written_over_input_counts_only_the_out_buffers():
    x = torch.zeros(8, 16)
    pointers = [
        ("in_ptr0", "arg0_1", ("8", "16"), "the input x"),
        ("in_ptr1", "arg1_1", ("16",), "the weight"),
        ("out_ptr0", "buf0", ("8", "1"), "one value per row"),
        ("out_ptr1", "buf1", ("8", "16"), "the output y"),
    ]
    assert written_over_input(_kernel(pointers), x) == (8 + 8 * 16) / (8 * 16)


def test_written_over_input_is_nan_without_a_listing_or_a_write():
    x = torch.zeros(4, 4)
    assert math.isnan(written_over_input(None, x))
    assert math.isnan(written_over_input(_kernel([("in_ptr0", "arg0_1", ("4", "4"), "the input x")]), x))
