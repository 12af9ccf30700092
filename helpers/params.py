"""Validation of the papermill parameters cell.

papermill turns `-p HIDDEN abc` into the string "abc" without complaint; the notebook would then
fail deep inside torch. `helpers.start` passes the notebook's namespace here right after the
parameters cell: every UPPER_CASE name in it is a parameter, so a notebook never restates its
parameters, and a wrong value stops the run with the parameter's name, what it expects, and an
example.
"""

from __future__ import annotations

from typing import Any, Callable

from .errors import ParameterError
from .series import BACKEND_CHOICES, DTYPE_NAMES


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
            raise ParameterError(f"{name} must be one of {', '.join(choices)}, got {value!r}", f"e.g. `-p {name} {choices[0]}`")

    return check


def _positive_or_zero(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ParameterError(f"{name} must be a number >= 0, got {value!r}", f"e.g. `-p {name} 20`")


def _bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ParameterError(f"{name} must be True or False, got {value!r}", f"e.g. `-p {name} True`")


def _sizes(name: str, value: Any) -> None:
    if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value):
        raise ParameterError(
            f"{name} must be a list of whole numbers >= 1, got {value!r}", f"e.g. `-p {name} '[64, 128, 256, 512]'`"
        )


def _core(name: str, value: Any) -> None:
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return
    if isinstance(value, str) and value.replace("-", "").replace(",", "").isdigit():
        return  # a NEURON_RT_VISIBLE_CORES spec: "3", "2-3", "0,2"
    raise ParameterError(
        f'{name} must be "auto", a core index >= 0 or a range like "2-3", got {value!r}', f"e.g. `-p {name} 1` for NeuronCore 1"
    )


def _str(name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise ParameterError(f"{name} must be a string, got {value!r}", f'e.g. `-p {name} ""`')


# One spec for the whole series: the same name means the same thing in every notebook.
PARAMETER_SPECS: dict[str, Callable[[str, Any], None]] = {
    "BACKEND": _choice(*BACKEND_CHOICES),
    "OUT_DIR": _str,
    "TOKENS": _int(1),
    "HIDDEN": _int(1),
    "SMALL_TOKENS": _int(1),
    "SMALL_HIDDEN": _int(1),
    "DTYPE": _choice(*DTYPE_NAMES),
    "EPS": _positive_float,
    "WAIT": _int(0),
    "WARMUP": _int(1),
    "ACTIVE": _int(1),
    "REPEATS": _int(3),
    "SHOW_UNSYNCHRONIZED": _bool,
    "REQUESTS": _int(1),
    "MAX_TOKENS": _int(1),
    "SEED": _int(0),
    "BUCKETS": _sizes,  # an empty list passes here: notebook 07 refuses it with the bucketing fix
    "RECOMPILE_LIMIT": _int(1),
    "RANKS": _int(1),
    "STRAGGLER_RANK": _int(-1),
    "STRAGGLER_MS": _positive_or_zero,
    "TIMEOUT_S": _int(1),
    "MASTER_PORT": _int(0),
    "SHOW_FAILURE": _bool,
    # neuron only (helpers.neuron_runtime): ignored on cpu and cuda
    "NEURON_CORE": _core,
    "NEURON_PROFILE": _choice("auto", "device", "system"),
    "MAX_EVENTS_PER_NC": _int(1000),
}


def notebook_parameters(namespace: dict[str, Any]) -> dict[str, Any]:
    """The parameters among a notebook's globals: its UPPER_CASE names (the series' convention)."""
    return {k: v for k, v in namespace.items() if k.isupper() and not k.startswith("_")}


def check_parameters(values: dict[str, Any]) -> dict[str, Any]:
    """Raise ParameterError for the first parameter whose value does not fit its spec; return them.

    A name without a spec is an error too: a new parameter must say what values it takes.
    """
    for name, value in values.items():
        if name not in PARAMETER_SPECS:
            raise ParameterError(f"parameter {name} has no spec", f"add {name} to helpers.params.PARAMETER_SPECS")
        PARAMETER_SPECS[name](name, value)
    return values
