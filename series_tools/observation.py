"""What one profiled run on Trainium showed: the record `verify_neuron`'s checks read and
`neuron_probe` (or a test's fake probe) fills. A module of its own so that the two import it
and not each other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Observation:
    """What one profiled run of one RMSNorm variant showed."""

    variant: str
    compiled: bool
    correlate_passed: bool
    device_time_us: float | None  # sum of key_averages()' device column; None if it has none
    categories: dict[str, str]  # Chrome-trace category -> the series' lane
    neffs: int
    ntffs: int
    ntffs_nonempty: int
    layout_problems: list[str]
    first_call_s: float
    dropped_events: int
    # runtime and device events per NeuronCore index (nc_idx) in Neuron Explorer's system-event export;
    # None when the export could not be made (no neuron-explorer, no RUNTIME mode)
    system_event_cores: dict[int, int] | None = None
    dropped_seen_at: tuple[str, ...] = ()  # where the dropped-events warning was read: step, export, exit
