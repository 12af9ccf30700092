"""The Neuron runtime's console output read back: captured around a call, and the trace events it
reports dropped (N23).

Beyond `max_events_per_nc` events per NeuronCore the runtime drops trace events and prints
`Warning: N trace events were dropped`, from C, past Python's sys.stdout; a profile read without
noticing that is truncated. lesson.neuron_profiler watches the profiler's stop with
`run_capturing_native_output` and passes the text to `report_dropped_events`. Standard library only.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from typing import Any

DROPPED_EVENTS = re.compile(r"(\d[\d,]*)\s+trace events were dropped", re.IGNORECASE)


def dropped_events(text: str) -> int:
    """Events the runtime reported dropped in its output (`Warning: N trace events were dropped`, N23)."""
    return sum(int(m.group(1).replace(",", "")) for m in DROPPED_EVENTS.finditer(text))


def report_dropped_events(text: str, max_events_per_nc: int) -> int:
    """The events the runtime reported dropped in `text`, printed with the fix (N23)."""
    dropped = dropped_events(text)
    if dropped:
        print(
            f"PROFILE TRUNCATED: the Neuron runtime dropped {dropped:,} trace events (limit "
            f"{max_events_per_nc:,} per NeuronCore). Fix: raise MAX_EVENTS_PER_NC (e.g. "
            f"`-p MAX_EVENTS_PER_NC {max_events_per_nc * 4}`), or record fewer ACTIVE steps."
        )
    return dropped


def run_capturing_native_output(fn: Any, *args: Any) -> tuple[Any, str]:
    """Call fn(*args) with file descriptors 1 and 2 sent to a file, then print what was written.

    The Neuron runtime writes its warnings from C, past Python's sys.stdout; reading them back
    is the only way to notice one (N23). The output is shown as it would have been."""

    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile(mode="w+b") as sink:
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            result = fn(*args)
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
        sink.seek(0)
        text = sink.read().decode(errors="replace")
    if text:
        print(text, end="" if text.endswith("\n") else "\n")
    return result, text
