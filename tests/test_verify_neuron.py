"""verify-neuron: its checks against a FAKE probe (no Trainium here), its report, and its refusal
to run anywhere else. The FAKE observations are invented to exercise both verdicts; they say
nothing about real hardware."""

import json


from series_tools import verify_neuron
from series_tools.verify_neuron import CHECKS, NEEDS_TRAINIUM, Observation, main, unverified_facts, verify


class FakeProbe:
    label = "FAKE probe (contract test, not hardware)"

    def __init__(self, device_side_category=False, visible="3", default_naive_neffs=3):
        self.default_naive_neffs = default_naive_neffs
        self.device_side_category = device_side_category
        self.visible = visible
        self.calls = []

    def device_properties(self):
        return {"name": "'fake NeuronCore'", "total_memory": "25769803776"}

    def visible_cores(self):
        return self.visible

    def profile(self, variant, *, compiled=False, correlate=True, capture=None, max_events=None, deterministic=False):
        self.calls.append((variant, compiled, correlate, capture, max_events, deterministic))
        categories = {"cpu_op": "framework", "privateuse1_runtime": "runtime"}
        if self.device_side_category:
            categories["kernel"] = "unverified"
        # FAKE: the naive eager call fused into 3 NEFFs by default, 7 (one per op) in deterministic mode
        neffs = 1 if compiled or variant == "torch.rms_norm" else (7 if deterministic else self.default_naive_neffs)
        nonempty = 1 if capture in (None, self.visible) else 0  # what the NTFF count (wrongly) used to judge N28 by
        return Observation(
            variant,
            compiled,
            correlate,
            12.5 if correlate else 0.0,
            categories,
            neffs,
            1,
            nonempty,
            [],
            0.5,
            40 if max_events else 0,
            system_event_cores=self.system_cores(capture),
            dropped_seen_at=("step",) if max_events else (),
        )

    def system_cores(self, capture):
        """FAKE system events: captured (process-local nc_idx 0) only where capture names the visible core."""
        return {0: 25} if capture in (None, self.visible) else {}

    def explorer(self):
        return {
            "version": "neuron-explorer FAKE",
            "accepts": ["--output-format", "parquet"],
            "capture_inputs": "FAKE: -i, --inputs  input tensors",
        }


def test_every_unverified_fact_of_the_notes_has_a_check():
    facts = unverified_facts()
    assert facts, "the notes list no UNVERIFIED fact: the parser or the notes changed"
    missing = sorted(set(facts) - set(CHECKS))
    assert not missing, f"UNVERIFIED facts without a check in series_tools/verify_neuron.py: {missing}"


def test_unverified_facts_are_read_from_the_status_column(tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text(
        "| id | fact | source | status | hw | used |\n|---|---|---|---|---|---|\n"
        "| N1 | a | s | documented | not yet | x |\n| N2 | b UNVERIFIED in text | s | documented | no | x |\n"
        "| N3 | c | s | **UNVERIFIED** | not yet | x |\n"
    )
    assert unverified_facts(notes) == ["N3"]


def test_contract_report_against_a_fake_probe(tmp_path, capsys):
    probe = FakeProbe()
    assert main(["--out", str(tmp_path)], probe=probe) == 0
    (folder,) = tmp_path.glob("*-neuron-verify")
    report = json.loads((folder / "neuron-verification.json").read_text())
    assert report["probe"].startswith("FAKE") and report["errors"] == {}
    verdicts = {(r["fact"], r["check"]): r["holds"] for r in report["rows"]}
    assert verdicts[("N25", "torch.rms_norm lowers to one NEFF per shape and dtype")] is True
    assert verdicts[("N28", "capture_enabled_for_nc indices")] is True
    assert verdicts[("N11", "device time in key_averages(), with and without correlate_device_time")] is True
    assert {r["fact"] for r in report["rows"]} >= set(unverified_facts())
    md = (folder / "neuron-verification.md").read_text()
    assert "FAKE probe" in md and "| N29 |" in md and "assumed" in md
    assert ("naive", False, True, None, verify_neuron.PROVOKE_DROPS_MAX_EVENTS, False) in probe.calls
    assert ("naive", False, True, None, None, True) in probe.calls  # N41: the deterministic (op-by-op) run


def test_contract_an_assumption_that_fails_is_reported_as_such():
    report = verify(FakeProbe(device_side_category=True, visible="0"))
    n19 = [r for r in report.rows if r.fact == "N19"]
    assert n19 and all(r.holds is False for r in n19) and "kernel->unverified" in n19[0].observed
    (n28,) = [r for r in report.rows if r.fact == "N28"]
    assert n28.holds is None and "not distinguishable on core 0" in n28.observed


def test_a_check_that_raises_does_not_hide_the_others():
    class Broken(FakeProbe):
        def device_properties(self):
            raise RuntimeError("no properties here")

    report = verify(Broken())
    assert report.errors == {"N5": "RuntimeError: no properties here"}
    assert any(r.fact == "N25" for r in report.rows)


def test_off_trainium_it_refuses_and_writes_nothing(tmp_path, capsys):
    assert main(["--out", str(tmp_path)]) == NEEDS_TRAINIUM
    assert "needs a Trainium" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_contract_n28_is_judged_by_the_system_events_core_index_not_by_ntffs():
    """capture_enabled_for_nc enables system-trace capture per core (ring buffers), not device traces:
    in the FAKE runs below the non-empty NTFFs say "instance-wide" and the system events' nc_idx
    says "counted from 0": the core index decides."""

    class CountsFromZero(FakeProbe):
        def system_cores(self, capture):
            return {0: 25} if capture == "0" else {}

    (n28,) = [r for r in verify(CountsFromZero()).rows if r.fact == "N28"]
    assert n28.holds is False and "capture '0' -> nc_idx 0: 25 events" in n28.observed

    class NoExplorer(FakeProbe):
        def system_cores(self, capture):
            return None

    (n28,) = [r for r in verify(NoExplorer()).rows if r.fact == "N28"]
    assert n28.holds is None and "needs neuron-explorer" in n28.observed


def test_contract_n29_reports_where_the_warning_was_read():
    (n29,) = [r for r in verify(FakeProbe()).rows if r.fact == "N29"]
    assert n29.holds is True and "read at: step" in n29.observed


def test_contract_n41_compares_default_eager_with_deterministic_mode():
    """Adaptive Eager Execution (N40): the FAKE default run fused 7 ops into 3 NEFFs; deterministic mode
    (which the eager-mode FAQ says disables it) gives 7. A default with more NEFFs than the op-by-op run
    contradicts the documentation and fails."""
    (n41,) = [r for r in verify(FakeProbe()).rows if r.fact == "N41"]
    assert n41.holds is True and "default: 3 NEFF" in n41.observed and "fused" in n41.observed
    (n41,) = [r for r in verify(FakeProbe(default_naive_neffs=9)).rows if r.fact == "N41"]
    assert n41.holds is False
    (n50,) = [r for r in verify(FakeProbe()).rows if r.fact == "N50"]
    assert n50.holds is None and "FAKE" in n50.observed
