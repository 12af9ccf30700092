"""A notebook's session, its metrics file, and the run folder's summary and handouts."""

import json

import pytest

from helpers.errors import ParameterError
from helpers.metrics import error_metric, merge_metrics, metric, read_metrics
from helpers.notebook import start_session
from series_tools.handouts import environment_header
from series_tools.summary import write_summary


def test_session_checks_parameters_writes_environment_and_publishes(tmp_path, capsys):
    namespace = {"BACKEND": "cpu", "OUT_DIR": str(tmp_path), "HIDDEN": 8, "helper_value": object()}
    session = start_session("99_demo", namespace)
    assert session.backend.name == "cpu" and session.parameters == {"BACKEND": "cpu", "OUT_DIR": str(tmp_path), "HIDDEN": 8}
    env = json.loads((tmp_path / "99_demo" / "environment.json").read_text())
    assert env["backend"] == "cpu" and env["torch"]
    session.publish({"a": metric(1.5, "us")})
    session.publish({"b": error_metric(1e-7, 4.8e-7)})  # publishing again keeps the earlier metrics
    data = read_metrics(tmp_path / "99_demo")
    assert data == {
        "backend": "cpu",
        "notebooks": {
            "99_demo": {
                "a": {"value": 1.5, "unit": "us"},
                "b": {"value": 1e-7, "unit": "relative", "better": "lower", "tolerance": 4.8e-7},
            }
        },
    }
    assert "Backend: cpu" in capsys.readouterr().out


def test_a_recorded_only_notebook_prints_no_line_about_timing_here(tmp_path, capsys):
    """09 reads trn2 profiles recorded elsewhere; its start printed cpu's device-time note and thread setting."""
    start_session("09_trainium_device_view", {"BACKEND": "cpu", "OUT_DIR": str(tmp_path)})
    recorded = capsys.readouterr().out
    start_session("02_naive_rmsnorm", {"BACKEND": "cpu", "OUT_DIR": str(tmp_path)})
    measured = capsys.readouterr().out
    assert "Threads:" in measured and "Note:" in measured and "Data:" not in measured
    assert "Threads:" not in recorded and "Note:" not in recorded and "measures nothing on this machine" in recorded


def test_session_refuses_a_bad_parameter_before_choosing_a_backend(tmp_path):
    with pytest.raises(ParameterError, match="HIDDEN must be an integer"):
        start_session("99_demo", {"BACKEND": "cpu", "OUT_DIR": str(tmp_path), "HIDDEN": "abc"})
    assert not (tmp_path / "99_demo").exists()


def test_publish_refuses_a_bare_number(tmp_path):
    session = start_session("99_demo", {"BACKEND": "cpu", "OUT_DIR": str(tmp_path)})
    with pytest.raises(Exception, match="has no value and unit"):
        session.publish({"bare": 3})


def test_merged_metrics_have_the_notebook_layout(tmp_path):
    for stem, value in (("01_a", 1), ("02_b", 2)):
        start_session(stem, {"BACKEND": "cpu", "OUT_DIR": str(tmp_path)}).publish({"x": metric(value, "count")})
    merged = merge_metrics(
        [tmp_path / "01_a" / "metrics.json", tmp_path / "02_b" / "metrics.json", tmp_path / "03_missing" / "metrics.json"], "cpu"
    )
    assert merged == {
        "backend": "cpu",
        "notebooks": {"01_a": {"x": {"value": 1, "unit": "count"}}, "02_b": {"x": {"value": 2, "unit": "count"}}},
    }


def test_summary_lists_each_notebook_and_its_metrics(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "status.json").write_text(
        json.dumps(
            {
                "status": "failed",
                "seconds": 3.0,
                "notebooks": [
                    {"notebook": "01_a", "status": "passed", "seconds": 1.0},
                    {"notebook": "02_b", "status": "failed", "seconds": 2.0, "cell": 4, "error": "ValueError: boom\nmore"},
                ],
            }
        )
    )
    (run / "metrics.json").write_text(
        json.dumps({"backend": "cpu", "notebooks": {"01_a": {"x": {"value": 0.123456, "unit": "s"}}}})
    )
    (run / "environment.json").write_text(json.dumps({"backend": "cpu", "torch": "2.13.0"}))
    text = write_summary(run).read_text()
    assert "| 02_b | failed | 2.0 | ValueError: boom (cell In[4]) |" in text
    assert "- x: 0.1235 s" in text and "Status: **failed**" in text
    assert (run / "summary.png").stat().st_size > 1000


def test_handout_header_names_where_it_was_measured():
    header = environment_header({"backend": "neuron", "torch": "2.14.0", "torch_neuronx": None})
    assert header.startswith("> Measured on this run:")
    assert "**backend**: neuron" in header and "**torch_neuronx**: —" in header


def test_one_quantity_timed_in_two_notebooks_must_agree():
    from series_tools.consistency import check_consistency

    def timing(median, p10, p90, of="naive 8x8 float32"):
        return {"value": median, "unit": "us", "p10": p10, "p90": p90, "of": of}

    agree = check_consistency(
        {
            "02": {"t": timing(100, 95, 110)},
            "05": {"t": timing(104, 99, 112)},
            "06": {"t": timing(5, 4, 6, of="copy 8x8 float32")},
        }
    )
    assert [(r["quantity"], r["agree"]) for r in agree] == [("naive 8x8 float32", True)]  # single timings are not rows
    twice = check_consistency({"02": {"t": timing(190, 185, 200)}, "05": {"t": timing(98, 95, 101)}})
    assert twice[0]["agree"] is False and twice[0]["max_over_min"] == pytest.approx(190 / 98)
    assert twice[0]["diagnosis"] is None  # no paired ratio of the variant was measured in both


def ratio(median, p10, p90, of):
    return {"value": median, "unit": "ratio", "p10": p10, "p90": p90, "of": of}


def test_a_ratio_and_its_inverse_are_one_quantity():
    from series_tools.consistency import check_consistency

    rows = check_consistency(
        {
            "03": {"r": ratio(0.5, 0.45, 0.55, "torch.rms_norm / naive 8x8 float32")},
            "05": {"s": ratio(2.0, 1.9, 2.2, "naive / torch.rms_norm 8x8 float32")},
        }
    )
    (row,) = rows
    assert row["quantity"] == "naive / torch.rms_norm 8x8 float32" and row["agree"] and row["unit"] == "ratio"
    by_nb = {t["notebook"]: t for t in row["timings"]}
    assert by_nb["03"]["median"] == pytest.approx(2.0) and by_nb["03"]["p10"] == pytest.approx(1 / 0.55)


def test_a_disagreeing_time_is_diagnosed_by_the_paired_ratios_of_the_same_notebooks():
    from series_tools.consistency import check_consistency, disagreement_lines, format_consistency

    def run(fused_ratio_in_04):
        return {
            "04": {
                "t": {"value": 97_000, "unit": "us", "p10": 95_000, "p90": 99_000, "of": "naive 8x8 float32"},
                "r": ratio(
                    fused_ratio_in_04, fused_ratio_in_04 * 0.97, fused_ratio_in_04 * 1.03, "torch.rms_norm / naive 8x8 float32"
                ),
            },
            "05": {
                "t": {"value": 85_000, "unit": "us", "p10": 83_000, "p90": 87_000, "of": "naive 8x8 float32"},
                "s": ratio(1.0, 0.97, 1.03, "naive / torch.rms_norm 8x8 float32"),
            },
        }

    together = {r["quantity"]: r for r in check_consistency(run(1.0))}["naive 8x8 float32"]
    assert not together["agree"] and "variants moved together" in together["diagnosis"]
    apart = {r["quantity"]: r for r in check_consistency(run(0.7))}["naive 8x8 float32"]
    assert "moved apart" in apart["diagnosis"]
    text = "\n".join(format_consistency(check_consistency(run(1.0))))
    assert "1.000x" in text and "97,000.0 us" in text and "variants moved together" in text
    (line,) = disagreement_lines(check_consistency(run(1.0)))
    assert line.startswith("DISAGREE: naive 8x8 float32 measured 97,000 us (04), 85,000 us (05) (1.14x from lowest")
    assert "variants moved together" in line and line.endswith("; see summary.md")
    agreeing = run(1.0)
    agreeing["05"]["t"] = agreeing["04"]["t"]
    assert disagreement_lines(check_consistency(agreeing)) == []


def test_a_disagreement_involving_a_busy_timing_is_busy_not_disagree():
    from series_tools.consistency import check_consistency, disagreement_lines, format_consistency

    busy = {"busy": True, "seen": "a thread of this process waited for a CPU 61% of the 1.0 s"}
    run = {
        "02": {"t": {"value": 100, "unit": "us", "p10": 95, "p90": 105, "of": "naive 8x8 float32"}},
        "05": {"t": {"value": 900, "unit": "us", "p10": 850, "p90": 950, "of": "naive 8x8 float32", "contention": busy}},
    }
    (row,) = check_consistency(run)
    assert not row["agree"] and row["busy"] == ["05"] and "diagnosis" not in row
    (line,) = disagreement_lines([row])
    assert line.startswith("BUSY: naive 8x8 float32 measured 100 us (02), 900 us (05); the machine was busy while 05")
    assert "61%" in line and "DISAGREE" not in line
    text = "\n".join(format_consistency([row]))
    assert "| busy |" in text and "| busy elsewhere |" in text and "**NO**" not in text
