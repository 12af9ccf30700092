"""Exceptions that carry the fix: the base the whole series raises (helpers.errors adds the
notebooks' own kinds and shows them in IPython as their message, without a traceback).

Standard library only: the kernel check imports it before torch.
"""

from __future__ import annotations


class SeriesError(Exception):
    """An error whose message names the problem and the fix."""

    def __init__(self, problem: str, fix: str = "") -> None:
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem}\n  Fix: {fix}" if fix else problem)


class TraceFileError(SeriesError, ValueError):
    """A trace file that is missing, empty, truncated or not a Chrome trace."""
