"""Validation of the papermill parameters cell.

papermill turns `-p HIDDEN abc` into the string "abc" without complaint; the notebook would then
fail deep inside torch. Every notebook passes its parameters through `check_parameters` right
after the parameters cell, so a wrong value stops the run with the parameter's name, what it
expects, and an example.
"""
from __future__ import annotations

from typing import Any, Callable

from .errors import ParameterError

DTYPE_CHOICES = ("float32", "bfloat16", "float16")


def _int(minimum: int) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError(
                f"{name} must be an integer >= {minimum}, got {value!r} ({type(value).__name__})",
                f"pass a whole number, e.g. `-p {name} {max(minimum, 4)}`",
            )
        if value < minimum:
            raise ParameterError(f"{name} must be >= {minimum}, got {value}", f"e.g. `-p {name} {max(minimum, 4)}`")

    return check


def _positive_float(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ParameterError(f"{name} must be a number > 0, got {value!r}", f"e.g. `-p {name} 1e-6`")


def _choice(*choices: str) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if value not in choices:
            raise ParameterError(
                f"{name} must be one of {', '.join(choices)}, got {value!r}", f"e.g. `-p {name} {choices[0]}`"
            )

    return check


def _bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ParameterError(f"{name} must be True or False, got {value!r}", f"e.g. `-p {name} True`")


def _str(name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise ParameterError(f"{name} must be a string, got {value!r}", f'e.g. `-p {name} ""`')


# One spec for the whole series: the same name means the same thing in every notebook.
PARAMETER_SPECS: dict[str, Callable[[str, Any], None]] = {
    "BACKEND": _choice("auto", "neuron", "cuda", "cpu"),
    "OUT_DIR": _str,
    "TOKENS": _int(1),
    "HIDDEN": _int(1),
    "SMALL_TOKENS": _int(1),
    "SMALL_HIDDEN": _int(1),
    "DTYPE": _choice(*DTYPE_CHOICES),
    "EPS": _positive_float,
    "WAIT": _int(0),
    "WARMUP": _int(1),
    "ACTIVE": _int(1),
    "REPEATS": _int(3),
    "SHOW_UNSYNCHRONIZED": _bool,
}


def check_parameters(**values: Any) -> None:
    """Raise ParameterError for the first parameter whose value does not fit its spec."""
    for name, value in values.items():
        if name not in PARAMETER_SPECS:
            raise KeyError(f"{name} has no spec in helpers.params.PARAMETER_SPECS")
        PARAMETER_SPECS[name](name, value)
