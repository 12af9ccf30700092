"""analysis.neuron_log: the Neuron runtime's console output read back. CONTRACT tests: no
Trainium here; the text is the documented warning (docs/NEURON_NOTES.md N23), written by hand."""

import pytest

from analysis.neuron_log import dropped_events, report_dropped_events

pytestmark = pytest.mark.contract


def test_dropped_event_warnings_are_counted():
    # the documented message (N23), twice in one export (one per core), and unrelated output
    text = "Warning: 1,200 trace events were dropped\nINFO other\nWarning: 34 trace events were dropped\n"
    assert dropped_events(text) == 1234
    assert dropped_events("nothing dropped here") == 0


def test_a_dropped_events_report_names_the_fix(capsys):
    assert report_dropped_events("Warning: 5,000 trace events were dropped", 1_000_000) == 5000
    out = capsys.readouterr().out
    assert "PROFILE TRUNCATED" in out and "5,000" in out and "MAX_EVENTS_PER_NC 4000000" in out
    assert report_dropped_events("all events kept", 1_000_000) == 0 and capsys.readouterr().out == ""
