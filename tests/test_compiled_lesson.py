"""lesson.compiled: the generated kernel's writes over the input, read from a listing's pointers."""

import math

import torch

from analysis.compiles import GeneratedKernel
from lesson.compiled import ColdCall, written_over_input


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


def _verdict(kind, p10=math.nan, p90=math.nan, median=0.375):
    from types import SimpleNamespace

    sentence = "this run cannot tell torch.compile and naive apart: the p10-p90 holds 1"
    return SimpleNamespace(kind=kind, sentence=sentence, median=median, p10=p10, p90=p90)


def test_break_evens_price_the_first_compile_and_give_the_later_one_only_its_time():
    from types import SimpleNamespace

    from lesson.compiled import break_evens

    naive = SimpleNamespace(median_us=80_000.0)
    cold = ColdCall({"seconds": 9.0, "cache files added": 36}, {".cpp": 12, ".so": 12, ".py": 4, "in locks/": 8})
    after = ColdCall({"seconds": 0.6, "cache files added": 6, "cache_misses": 1}, {".py": 1, "in locks/": 5})
    paid_back, basis, setup, later = break_evens(cold, after, naive, _verdict("faster"), 4096, 1024)
    assert paid_back.kind == "estimate" and paid_back.median == 179.0  # (9 s - one 80 ms naive call) / 50 ms, rounded up
    assert paid_back.sentence.startswith(
        "break-even: about 179 warm calls (estimated), each 50.0 ms faster than naive\n"  # the headline first
        "  of the process's first compile (9.0 s) against naive, rounded up to whole calls\n"
        "  that compile is expected to include Inductor's start-up (not measured)"
    )
    assert "over the saving at HIDDEN = 4096" in basis and basis.startswith("  its basis:")  # its own line
    assert "per-round ratio's p10-p90" not in paid_back.sentence  # no spread given: none printed
    # the setup named by its evidence, and what one run cannot split
    # the kinds of the files the first added beyond the later one, only those it added more of
    assert (
        setup
        == "which setup ran (not its cost): the first compile added 36 cache files, the later one 6; the 30 more: 12 .cpp, 12 .so (compiled code), 3 .py, 3 in locks/ (file locks)"
    )
    # a compile at HIDDEN = 1024 over the saving at 4096 answered no real question: only its time
    assert later.kind == "withheld"
    # called a compile only with its evidence beside it (the first's is its origin line)
    assert "a later compile at HIDDEN = 1024 (cache_misses 1) took 600 ms; its break-even: withheld" in later.sentence
    loaded = ColdCall({"seconds": 0.6, "cache files added": 6, "cache_misses": 0})
    assert (
        "a later cold call at HIDDEN = 1024 took 600 ms"
        in break_evens(cold, loaded, naive, _verdict("faster"), 4096, 1024)[3].sentence
    )
    # the two cold calls' ratio measured neither the setup nor a compile, yet read as the setup's cost: not printed
    assert "x the first" not in later.sentence
    # "so most of the first may be setup" claimed beyond the evidence; the ratio says it does not price it
    assert "most of the first" not in later.sentence
    assert "that shape's saving was not timed" in later.sentence
    assert "4096" not in later.sentence and "about" not in later.sentence  # no number priced with the other shape


def test_the_first_break_even_says_setup_included_and_no_evidence_line_without_cache_counts():
    """The only break-even printed included the setup while a later compile took 0.07x of it."""
    from types import SimpleNamespace

    from lesson.compiled import break_evens

    naive = SimpleNamespace(median_us=80_000.0)
    lines = break_evens(ColdCall({"seconds": 9.0}), ColdCall({"seconds": 6.0}), naive, _verdict("faster"), 4096, 1024)
    paid_back, later = lines[0], lines[-1]
    assert "(9.0 s) against naive" in paid_back.sentence
    assert "most of the first" not in later.sentence and later.kind == "withheld"
    assert len(lines) == 3  # no cache-file counts given: no setup-evidence line


def test_break_even_prints_the_range_the_paired_ratios_spread_gives():
    """04 printed "about 162" calls from a ratio of medians while the pair's p10-p90 gave about 100-180."""
    from types import SimpleNamespace

    from lesson.compiled import break_evens

    naive = SimpleNamespace(median_us=80_000.0)
    paid_back, *_ = break_evens(
        ColdCall({"seconds": 9.0}), ColdCall({"seconds": 0.6}), naive, _verdict("faster", 0.5, 0.75), 4096, 1024
    )
    assert "223-446 calls from the per-round ratio's p10-p90 alone" in paid_back.sentence  # 8.92 s over 40 ms and over 20 ms
    # the range is the warm ratio's; the cold call's own spread is unknown, said beside it
    assert "p10-p90 alone (the cold call is one sample; its spread is unknown)" in paid_back.sentence


def test_break_even_takes_its_saving_from_the_paired_ratios_median_so_it_sits_inside_its_range():
    """04 took the saving from the difference of the table's medians (a 3.35x) while its range used
    the per-round ratios (median 0.32): the estimate sat at the edge of its own range."""
    from types import SimpleNamespace

    from lesson.compiled import break_evens

    naive = SimpleNamespace(median_us=80_000.0)  # a compiled median 60 ms below would give 149 calls
    verdict = _verdict("faster", 0.5, 0.75, median=0.6)  # the rounds' ratio: 80 ms * (1 - 0.6) = 32 ms saved
    paid_back, basis, *_ = break_evens(ColdCall({"seconds": 9.0}), ColdCall({"seconds": 0.6}), naive, verdict, 4096, 1024)
    assert paid_back.median == 279  # 8.92 s / 32 ms = 278.75, not 8.92 s / 60 ms = 149
    assert "each 32.0 ms faster" in paid_back.sentence and "HIDDEN = 4096" in basis and "223-446 calls" in paid_back.sentence


def test_break_evens_round_up_to_whole_calls_as_exercise_2_does():
    """04 rounded the first break-even (185.2 -> 185) but ceiled exercise 2's (1.15 -> 2)."""
    from types import SimpleNamespace

    from lesson.compiled import break_evens

    naive = SimpleNamespace(median_us=80_000.0)
    paid_back, *_ = break_evens(ColdCall({"seconds": 9.01}), ColdCall({"seconds": 0.61}), naive, _verdict("faster"), 4096, 1024)
    assert paid_back.median == 179  # (9.01 s - 80 ms) / 50 ms = 178.6 calls: the next whole call pays it back


def test_break_evens_are_withheld_unless_the_compiled_call_is_faster():
    from types import SimpleNamespace

    from lesson.compiled import break_evens

    naive = SimpleNamespace(median_us=80_000.0)
    paid_back, setup, later = break_evens(
        ColdCall({"seconds": 9.0}), ColdCall({"seconds": 0.6}), naive, _verdict("no measurable difference"), 4096, 1024
    )
    assert (
        setup == "the process's first compile is expected to include Inductor's start-up (not measured)"
    )  # what it paid, said where withheld too
    assert paid_back.kind == "withheld" and "cannot tell torch.compile and naive apart" in paid_back.sentence
    assert later.kind == "withheld" and "cannot tell torch.compile and naive apart" in later.sentence
    assert "took 600 ms; its break-even" in later.sentence  # the time is still given


def test_cold_call_counts_a_first_compile_and_prints_a_machine_line(tmp_path, monkeypatch, capsys):
    import torch

    from helpers.backend import select_backend
    from lesson.compiled import cold_call

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: x * 2 + 1, backend="eager", fullgraph=True)
    counts = cold_call(lambda: compiled(torch.ones(4)), select_backend("cpu"))
    assert counts.counts["seconds"] > 0 and counts.counts["graphs"] == 1  # this call compiled one graph
    assert counts.counts["cache files added"] == 0 and counts.added_kinds == {}  # the eager backend writes nothing there
    assert "NEFF cache files added" not in counts.counts  # only on neuron
    line = capsys.readouterr().out
    assert "while compiling" in line or "not measured on this system" in line
    if "while compiling" in line:  # the line's duration is the timed call's, as break_evens prints it
        from lesson.compiled import _duration

        span = (
            f"of the {_duration(counts.counts['seconds'])}"  # then "; BUSY from" (quiet) or ")" (busy: the short form ends there)
        )
        assert f"{span};" in line or f"{span})" in line


def test_a_cache_files_kind_is_its_named_subfolder_else_its_suffix():
    from pathlib import Path

    from lesson.compiled import _kind

    assert _kind(Path("pl/cpl5k.main.cpp")) == ".cpp" and _kind(Path("pl/cpl5k.main.so")) == ".so"  # a hash bucket
    assert _kind(Path("fxgraph/py/fpy77/jz2r")) == "in fxgraph/" and _kind(Path("locks/abc.lock")) == "in locks/"
    assert _kind(Path("ab/noext")) == "without a suffix"


def test_a_cpu_feature_probe_is_one_kind_apart_from_the_kernels_files(tmp_path):
    """The first compile's 30 extra files were read as "compiled code"; on cpu they are Inductor's
    CPU-feature probes (a .cpp with a `*_chk_kernel`, its .so and a lock each)."""
    from pathlib import Path

    from lesson.compiled import _kind, _probes

    files = {Path("5u/c5uj.cpp"), Path("5u/c5uj.so"), Path("locks/c5uj.lock")}  # one probe
    files |= {Path("ia/ciae.main.cpp"), Path("ia/ciae.main.so"), Path("locks/ciae.lock")}  # the kernel
    for name, text in (("5u/c5uj.cpp", 'extern "C" void __avx_chk_kernel() {}'), ("ia/ciae.main.cpp", "void kernel() {}")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    probes = _probes(tmp_path, files)
    assert probes == {"c5uj"}
    kinds = sorted(_kind(p, probes) for p in files)
    assert kinds == [".cpp", ".so", "CPU-feature probe", "CPU-feature probe", "CPU-feature probe", "in locks/"]


def test_the_setup_evidence_names_the_probes_not_compiled_code():
    from types import SimpleNamespace

    from lesson.compiled import break_evens

    naive = SimpleNamespace(median_us=80_000.0)
    kernel = {".cpp": 1, ".so": 1, "in locks/": 1, ".py": 1, "in fxgraph/": 1, "in aotautograd/": 1}
    names = {"__avx_chk_kernel": 1, "__avx512_chk_kernel": 2, "__amx_chk_kernel": 1}
    cold = ColdCall({"seconds": 9.0, "cache files added": 36}, kernel | {"CPU-feature probe": 30}, names)
    after = ColdCall({"seconds": 0.6, "cache files added": 6}, kernel)
    setup = break_evens(cold, after, naive, _verdict("faster"), 4096, 1024)[2]
    assert setup == (
        "which setup ran (not its cost): the first compile added 36 cache files, the later one 6;"
        " the 30 more: 30 files of CPU-feature probes (sources defining __avx512_chk_kernel, __amx_chk_kernel...)"
    )  # one short line, no per-check inventory; "probes" shown by the checks their sources define
    assert "compiled code" not in setup


def test_the_probes_are_named_by_the_checks_their_sources_define(tmp_path):
    """The `*_chk_kernel` each probe source defines, read from the sources themselves (no
    longer printed beside the break-even; `ColdCall.probe_names` keeps them)."""
    from pathlib import Path

    from lesson.compiled import _probe_names, _probes

    sources = {"5u/c5uj.cpp": "void __avx_chk_kernel() {} // __avx_chk_kernel", "3g/c3g2.cpp": "void __amx_chk_kernel() {}"}
    sources |= {"q6/cq62.cpp": "void __avx_chk_kernel() {}", "ia/ciae.main.cpp": "void kernel() {}"}
    for name, text in sources.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    files = {Path(name) for name in sources} | {Path("5u/c5uj.so"), Path("locks/c5uj.lock")}
    names = _probe_names(tmp_path, files, _probes(tmp_path, files))
    assert names == {"__avx_chk_kernel": 2, "__amx_chk_kernel": 1}  # one count per source, the kernel's source not read


def test_the_break_even_is_labelled_a_first_compile_only_where_the_counts_say_so():
    """Re-running 04's cold-call cell in one kernel loads from the cache, yet the break-even still read
    "the process's first compile (setup included)"; on neuron a pre-warmed NEFF cache serves a NEFF."""
    from types import SimpleNamespace

    from lesson.compiled import break_evens

    naive, later = SimpleNamespace(median_us=80_000.0), ColdCall({"seconds": 0.6})
    first = {"seconds": 9.0, "graphs captured before": 0, "cache_hits": 0, "cache_misses": 1}
    reloaded = first | {"graphs captured before": 5, "cache_hits": 1, "cache_misses": 0}
    neff_load = {"seconds": 9.0, "graphs captured before": 0, "cache_hits": 0, "NEFF cache files added": 0}
    label = {}
    for name, counts in (("first", first), ("reloaded", reloaded), ("neff_load", neff_load)):
        label[name] = break_evens(ColdCall(counts), later, naive, _verdict("faster"), 4096, 1024)[0].sentence
    assert "of the process's first compile (9.0 s)" in label["first"]
    for name in ("reloaded", "neff_load"):
        assert "first compile (" not in label[name] and "that compile" not in label[name]
        assert "of this cold call (9.0 s; not a first compile: its origin is below)" in label[name]


def test_a_busy_cold_call_withholds_the_break_even_and_the_later_ratio():
    """04's exercise 2 printed BUSY for its cold call, then a ratio and a break-even from that same call;
    a busy block concludes nothing, so break_evens withholds what it would draw from a busy cold call."""
    from types import SimpleNamespace

    from lesson.compiled import BUSY_COLD_CALL, break_evens

    naive = SimpleNamespace(median_us=80_000.0)
    busy, quiet = ColdCall({"seconds": 9.0}, busy=True), ColdCall({"seconds": 0.6}, busy=False)
    paid_back, *_, later = break_evens(busy, quiet, naive, _verdict("faster", 0.5, 0.75), 4096, 1024)
    assert paid_back.kind == "withheld" and BUSY_COLD_CALL in paid_back.sentence and "calls" not in paid_back.sentence
    assert later.kind == "withheld" and "0.067x" not in later.sentence and BUSY_COLD_CALL in later.sentence
    paid_back, *_ = break_evens(ColdCall({"seconds": 9.0}, busy=False), quiet, naive, _verdict("faster", 0.5, 0.75), 4096, 1024)
    assert paid_back.kind == "estimate"  # quiet: the break-even is given


def test_break_evens_gives_the_estimate_its_basis_and_the_later_compile():
    """A few slow naive rounds set the range's low end; the slow-round count is no longer a line beside the break-even."""
    import numpy as np

    from analysis.timing import Timing
    from lesson.compiled import break_evens

    cold = ColdCall({"seconds": 9.0}, {})
    after = ColdCall({"seconds": 0.6}, {})
    slow = Timing("naive", np.array([80_000.0] * 13 + [270_000.0, 272_000.0]), 1)
    assert len(break_evens(cold, after, slow, _verdict("faster", 0.3, 0.4), 4096, 1024)) == 3  # estimate, basis, later


def test_keep_neff_says_the_neff_stays_in_the_neff_cache_as_n43_does():
    """The printed line said the NEFF was kept only with PRESERVE=1, against 04's markdown and N43."""
    from lesson.compiled import KEEP_NEFF

    assert KEEP_NEFF.startswith("its NEFF stays in the NEFF cache (TORCH_NEURONX_NEFF_CACHE_DIR, else /tmp/neff_cache;")
    assert "NEFF and StableHLO are kept only" not in KEEP_NEFF
    assert "StableHLO" in KEEP_NEFF and "TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS=1" in KEEP_NEFF
    assert "docs/reference-runs/README.md" in KEEP_NEFF and "notebook 09" in KEEP_NEFF  # the listing's place


def test_the_break_even_range_names_the_slow_rounds_that_set_its_end():
    """122-158 calls, whose low end came from two rounds in which only naive ran about 2.5x slow."""
    import numpy as np

    from analysis.timing import Timing
    from lesson.compiled import break_evens

    def timing(samples):
        return Timing("t", np.asarray(samples, dtype=float), 1)

    naive = timing([100_000.0] * 13 + [250_000.0] * 2)
    quiet = timing([32_000.0] * 15)
    verdict = _verdict("faster", p10=0.13, p90=0.33, median=0.32)
    paid_back, *_ = break_evens(ColdCall({"seconds": 10.6}), ColdCall({"seconds": 1.0}), naive, verdict, 4096, 1024, quiet)
    assert (
        "calls from the per-round ratio's p10-p90 alone, its low end set by naive's 2 slow rounds, 1.5x its median or more (the cold call"
        in paid_back.sentence
    )
    assert "high end" not in paid_back.sentence
    # no slow round, or a p10 no farther from the median than spread: nothing named
    for n, v in ((naive, _verdict("faster", p10=0.3, p90=0.33, median=0.32)), (quiet, verdict)):
        paid_back, *_ = break_evens(ColdCall({"seconds": 10.6}), ColdCall({"seconds": 1.0}), n, v, 4096, 1024, quiet)
        assert "slow round" not in paid_back.sentence


def test_beside_03_reads_03s_published_verdict(tmp_path):
    """The page said "where the two disagree" without saying whether they did; an inconclusive block disagrees with neither."""
    from types import SimpleNamespace

    from analysis.verdicts import judge_ratio
    from helpers.metrics import write_metrics
    from lesson.compiled import beside_03

    here = judge_ratio(SimpleNamespace(numerator="torch.rms_norm", denominator="naive", median=0.994, p10=0.953, p90=1.02))
    assert beside_03(tmp_path / "04_torch_compile", here).endswith("(03 did not run here)")
    entry = {"unit": "ratio", "value": 0.995, "p10": 0.878, "p90": 1.07, "of": "torch.rms_norm / naive", "note": "per-round"}
    (tmp_path / "03_fused_rms_norm").mkdir()
    write_metrics(tmp_path / "03_fused_rms_norm", "03_fused_rms_norm", "cpu", {"fused_over_naive": entry})
    line = beside_03(tmp_path / "04_torch_compile", here)
    assert line.startswith("03's verdict: cannot tell apart") and line.endswith("an inconclusive block disagrees with neither")
    both = judge_ratio(SimpleNamespace(numerator="torch.rms_norm", denominator="naive", median=1.0, p10=0.96, p90=3.35))
    assert beside_03(tmp_path / "04_torch_compile", both).endswith(
        "; here: the same: two inconclusive results, not agreement that they are equal"
    )  # "the same verdict" read as a finding that they are equal
    same = judge_ratio(SimpleNamespace(numerator="torch.rms_norm", denominator="naive", median=0.6, p10=0.55, p90=0.65))
    entry |= {"value": 0.6, "p10": 0.55, "p90": 0.65}
    write_metrics(tmp_path / "03_fused_rms_norm", "03_fused_rms_norm", "cpu", {"fused_over_naive": entry})
    assert beside_03(tmp_path / "04_torch_compile", same).endswith("; here: the same verdict")  # said once, not garbled


def test_speedup_lines_tie_the_verdict_to_the_allocations_and_explain_nothing_without_a_speed_up():
    """The Summary's lines: the speed verdict first, the measured allocations, and a cause only beside a measured speed-up."""
    from lesson.compiled import speedup_lines

    faster = _verdict("faster", 0.3, 0.4)
    lines = speedup_lines(faster, 3.000733, 1.000244)
    assert lines[0] == f"speed: {faster.sentence}"
    assert "naive allocated 3.00x the input" in lines[1] and "torch.compile 1.00x (output + one value per row)" in lines[1]
    assert lines[2].startswith("why, likely:") and "does not isolate it" in lines[2]
    assert "no full-size intermediate" in lines[2]  # the kernel writes and reads back one value per row
    assert all(len(line.split()) <= 25 for line in lines[1:])
    from types import SimpleNamespace

    from analysis.verdicts import judge_ratio

    held = judge_ratio(SimpleNamespace(numerator="torch.compile", denominator="naive", median=1.0, p10=0.9, p90=1.1))
    same = speedup_lines(held, 3.0, 1.0)
    assert same[2] == "why: no speed-up measured above, so nothing to explain"
    assert "not read on this backend" in speedup_lines(faster, math.nan, math.nan)[1]


def test_cache_load_lines_price_the_load_and_withhold_on_a_busy_block_or_no_speed_up():
    """04's exercise 2: the load's break-even (ceil, as break_evens) and its origin; no ratio to the first cold call."""
    from types import SimpleNamespace

    from lesson.compiled import cache_load_lines

    counts = {"seconds": 0.2, "cache_hits": 1, "cache_misses": 0, "cache files added": 0, "graphs captured before": 5}
    again, first = ColdCall(counts, {}), ColdCall({"seconds": 4.0}, {})
    naive = SimpleNamespace(median_us=50_000.0)
    lines = cache_load_lines(again, (first,), naive, _verdict("faster", 0.3, 0.4, median=0.4))
    paid, origin = lines
    assert not any("x the first" in str(line) for line in lines)  # one sample each: it measured neither setup nor compile
    assert paid.kind == "estimate" and paid.median == 5.0  # (200 ms - 50 ms) / 30 ms, rounded up
    assert origin.startswith("the cold call after the reset loaded")
    quick = ColdCall({**counts, "seconds": 0.01}, {})
    assert cache_load_lines(quick, (first,), naive, _verdict("faster", 0.3, 0.4))[0].startswith(
        "cache-load break-even against naive: 0 warm calls"
    )
    assert "withheld, not measurably faster" in str(cache_load_lines(again, (first,), naive, _verdict("inconclusive"))[0])
    busy = ColdCall({"seconds": 4.0}, {}, busy=True)
    withheld_paid, _ = cache_load_lines(again, (first, busy), naive, _verdict("faster", 0.3, 0.4))
    assert "BUSY" in str(withheld_paid)


def test_a_cache_with_inductors_cpu_checks_built_before_the_run_is_said_beside_the_first_compile(tmp_path):
    """Under `make run` Inductor's CPU checks are copied into the run's cache before 04: its first compile
    did not pay them, and a learner's first compile in Jupyter pays them; without the record, "setup included"."""
    import json
    from types import SimpleNamespace

    from lesson.compiled import CHECKS_RECORD, _checks_record, break_evens
    from series_tools.inductor_warmup import RECORD

    assert CHECKS_RECORD == RECORD and _checks_record(tmp_path) is None
    (tmp_path / RECORD).write_text(json.dumps({"seconds": 12.8, "built": True, "vector_isa": "avx512"}))
    record = _checks_record(tmp_path)
    naive = SimpleNamespace(median_us=80_000.0)
    first = {"seconds": 9.0, "graphs captured before": 0, "cache_hits": 0, "cache_misses": 1}
    lines = break_evens(ColdCall(first, checks=record), ColdCall({"seconds": 0.6}), naive, _verdict("faster"), 4096, 1024)
    # "CPU checks excluded" read as subtracted; the call never paid them and includes Inductor's start-up
    said_so = "(built beforehand in 12.8 s; the run's summary.md says so); it is expected to include Inductor's start-up"
    assert "did not pay the CPU checks " + said_so in lines[0].sentence
    said = "Inductor's CPU checks: built before the notebooks (12.8 s, once per machine)"
    assert said not in lines  # said once, on the break-even's own line
    copied = break_evens(
        ColdCall(first, checks={"built": False, "seconds": 0.1}),
        ColdCall({"seconds": 0.6}),
        naive,
        _verdict("faster"),
        4096,
        1024,
    )
    assert "that compile did not pay the CPU checks (copied in beforehand; the run's summary.md says so)" in copied[0].sentence
    probes = ColdCall(first, {"CPU-feature probe": 12})  # absent record: this call wrote the probes
    paid = break_evens(probes, ColdCall({"seconds": 0.6}), naive, _verdict("faster"), 4096, 1024)[0].sentence
    assert "that compile paid its CPU checks (this call wrote their probe files); it is expected to include" in paid
    busy = break_evens(
        ColdCall(first, busy=True, checks=record), ColdCall({"seconds": 0.6}), naive, _verdict("faster"), 4096, 1024
    )
    assert "the process's first compile did not pay the CPU checks (built beforehand in 12.8 s;" in busy[1]  # withheld too
