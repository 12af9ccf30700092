"""The parameters cell's validation names the parameter and what it expects."""

import pytest

from helpers.errors import ParameterError
from helpers.params import check_parameters, notebook_parameters


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({"HIDDEN": "abc"}, "HIDDEN must be an integer >= 1, got 'abc' (str)"),
        ({"HIDDEN": 4096.0}, "HIDDEN must be an integer"),
        ({"TOKENS": True}, "TOKENS must be an integer"),
        ({"ACTIVE": 0}, "ACTIVE must be >= 1, got 0"),
        ({"WARMUP": -1}, "WARMUP must be >= 1"),
        ({"WAIT": -2}, "WAIT must be >= 0"),
        ({"DTYPE": "float64"}, "DTYPE must be one of float32, bfloat16, float16"),
        ({"BACKEND": "tpu"}, "BACKEND must be one of auto, neuron, cuda, cpu"),
        ({"EPS": 0}, "EPS must be a number > 0"),
        ({"SHOW_UNSYNCHRONIZED": "yes"}, "SHOW_UNSYNCHRONIZED must be True or False"),
        ({"OUT_DIR": 5}, "OUT_DIR must be a string"),
    ],
)
def test_bad_values_are_named(kwargs, expected):
    with pytest.raises(ParameterError) as err:
        check_parameters(kwargs)
    assert expected in str(err.value)
    assert "-p " in str(err.value)  # the fix shows the papermill spelling


def test_good_values_pass():
    good = dict(
        BACKEND="cpu",
        HIDDEN=8,
        TOKENS=1,
        DTYPE="bfloat16",
        WAIT=0,
        WARMUP=1,
        ACTIVE=1,
        EPS=1e-6,
        SHOW_UNSYNCHRONIZED=False,
        OUT_DIR="",
    )
    assert check_parameters(good) == good


def test_a_parameter_without_spec_is_refused_with_the_fix():
    with pytest.raises(ParameterError, match="parameter NOT_A_PARAMETER has no spec") as err:
        check_parameters({"NOT_A_PARAMETER": 1})
    assert "PARAMETER_SPECS" in str(err.value)


def test_parameters_are_the_upper_case_names_of_the_namespace():
    namespace = {"BACKEND": "cpu", "HIDDEN": 8, "session": object(), "_HIDDEN": 1, "In": [], "x": 1}
    assert notebook_parameters(namespace) == {"BACKEND": "cpu", "HIDDEN": 8}
