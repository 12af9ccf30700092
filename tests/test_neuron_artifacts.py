"""Contract tests of the DOCUMENTED Neuron profile layout, on SYNTHETIC folders made here.

No real Neuron profile is read: the folders below follow the layout and file names of the
vendor documentation (<dir>/<instance-id>_pid_<pid>/<timestamp>/, neff_<hash>.neff paired with
<hash>_instid_<n>_vnc_<n>.ntff in model mode, profile_nc_<n>_session_<n>.ntff in session mode).
"""

import pandas as pd
import pytest

import analysis.neuron_profile as neuron_mod
from analysis.neuron_profile import (
    FIX_EMPTY,
    FIX_EMPTY_NTFF,
    FIX_MISPLACED_FRAMEWORK_TRACE,
    FIX_NEFF_WITHOUT_NTFF,
    FIX_NO_NEFF,
    FIX_NTFF_WITHOUT_NEFF,
    NOTE_NEFFS_OF_A_SYSTEM_PROFILE,
    FIX_ONLY_PB,
    NOTE_SYSTEM_ONLY,
    eager_fusion_verdict,
    explorer_commands,
    explorer_summary,
    export_system_events,
    find_neuron_artifacts,
    neuron_explorer_executable,
    system_event_cores,
    system_events_to_lanes,
)
from helpers.series import REPO_ROOT

from conftest import fake_tool

pytestmark = pytest.mark.contract


def session_dir(root):
    d = root / "instance-example_pid_4242" / "20261203T010203"
    d.mkdir(parents=True)
    return d


def touch(path, size=16):
    path.write_bytes(b"\0" * size)
    return path


def test_contract_documented_session_layout(tmp_path):
    d = session_dir(tmp_path)
    touch(d / "neff_a1b2_vnc_0.neff")
    touch(d / "neff_c3d4_vnc_0.neff")
    touch(d / "profile_nc_0_session_0.ntff")
    touch(d / "profile_nc_1_session_0.ntff")
    touch(d / "ntrace.pb")
    touch(d / "trace_info.pb")
    touch(d / "trace.json")
    found = find_neuron_artifacts(tmp_path)
    assert found.ok, found.problems
    assert found.session_dirs == [d]
    assert len(found.neffs) == 2 and len(found.ntffs) == 2 and len(found.pb_files) == 2
    assert sorted(found.session_ntffs) == [0, 1]
    assert [p.name for p in found.framework_traces] == ["trace.json"]


def test_contract_model_mode_pairs_by_hash(tmp_path):
    d = session_dir(tmp_path)
    touch(d / "neff_395760075800974.neff")
    touch(d / "395760075800974_instid_0_vnc_0.ntff")
    found = find_neuron_artifacts(tmp_path)
    assert [(n.name, t.name) for n, t in found.model_pairs] == [
        ("neff_395760075800974.neff", "395760075800974_instid_0_vnc_0.ntff")
    ]
    assert found.ok


@pytest.mark.parametrize(
    "make, sign, fix",
    [
        (lambda d: None, "profile folder is empty", FIX_EMPTY),
        (
            lambda d: (
                touch(d / "neff_1_vnc_0.neff"),
                touch(d / "profile_nc_0_session_0.ntff", 0),
                touch(d / "profile_nc_1_session_0.ntff", 0),
            ),
            "every .ntff is 0 bytes",
            FIX_EMPTY_NTFF,
        ),
        (lambda d: touch(d / "profile_nc_0_session_0.ntff"), "no .neff", FIX_NO_NEFF),
        (lambda d: (touch(d / "ntrace.pb"), touch(d / "trace_info.pb")), "only .pb files", FIX_ONLY_PB),
    ],
)
def test_contract_failure_signs_get_documented_fix(tmp_path, make, sign, fix):
    d = tmp_path / "profile"
    d.mkdir()
    make(d)
    found = find_neuron_artifacts(d)
    assert not found.ok
    assert sign in [p.sign for p in found.problems]
    assert fix in [p.fix for p in found.problems]


def test_contract_some_empty_ntffs_are_expected_not_a_problem(tmp_path):
    """Documented: PyTorch leaves empty .ntff files for cores it initialised but did not run on."""
    d = session_dir(tmp_path)
    touch(d / "neff_a1_vnc_0.neff")
    touch(d / "profile_nc_0_session_0.ntff")
    for core in (1, 2, 3):
        touch(d / f"profile_nc_{core}_session_0.ntff", 0)
    found = find_neuron_artifacts(tmp_path)
    assert found.ok, found.problems
    assert any("3 of 4 .ntff files are 0 bytes" in n for n in found.notes)


def test_contract_neff_without_ntff_is_a_note(tmp_path):
    d = session_dir(tmp_path)
    touch(d / "neff_395760075800974.neff")
    touch(d / "395760075800974_instid_0_vnc_0.ntff")
    touch(d / "neff_77.neff")  # a NEFF that never executed: documented as expected
    found = find_neuron_artifacts(tmp_path)
    assert found.ok and any("without a matching NTFF" in n for n in found.notes)


@pytest.mark.parametrize("with_pb", (False, True))
def test_contract_neffs_and_no_ntff_at_all_is_a_problem_with_its_fix(tmp_path, with_pb):
    """Issue 42: a folder with a NEFF and no NTFF used to be ok=True with no note. A NEFF holds no
    timing: without any trace, Neuron Explorer has nothing to show."""
    d = session_dir(tmp_path)
    touch(d / "neff_a1b2_vnc_0.neff")
    if with_pb:
        touch(d / "ntrace.pb")
    found = find_neuron_artifacts(tmp_path)
    assert not found.ok
    assert [(p.sign, p.fix) for p in found.problems] == [("NEFF without NTFF", FIX_NEFF_WITHOUT_NTFF)]
    assert "ProfileMode.DEVICE" in FIX_NEFF_WITHOUT_NTFF and "prof.step()" in FIX_NEFF_WITHOUT_NTFF


def test_contract_neffs_of_a_system_profile_are_a_note(tmp_path):
    d = session_dir(tmp_path)
    touch(d / "neff_a1b2_vnc_0.neff")  # copied in from the NEFF cache by neff_cache_dir
    touch(d / "ntrace.pb")
    found = find_neuron_artifacts(tmp_path, system_profile=True)
    assert found.ok and NOTE_NEFFS_OF_A_SYSTEM_PROFILE in found.notes


def test_contract_an_ntff_whose_neff_is_missing_is_a_problem(tmp_path):
    """The reverse: a model-mode trace of hash 88 beside only the NEFF of hash 77."""
    d = session_dir(tmp_path)
    touch(d / "neff_77.neff")
    touch(d / "77_instid_0_vnc_0.ntff")
    orphan = touch(d / "88_instid_0_vnc_0.ntff")
    found = find_neuron_artifacts(tmp_path)
    assert [(p.sign, p.fix, p.path) for p in found.problems] == [("NTFF without its NEFF", FIX_NTFF_WITHOUT_NEFF, orphan)]


def test_empty_folder_names_both_documented_causes(tmp_path):
    found = find_neuron_artifacts(tmp_path)
    assert "profiling was not enabled" in found.problems[0].fix and "did not run on Neuron" in found.problems[0].fix


def test_missing_folder_is_reported_not_raised(tmp_path):
    found = find_neuron_artifacts(tmp_path / "absent")
    assert found.problems[0].sign == "profile folder does not exist"


def test_explorer_commands_tunnel_both_ports_on_loopback():
    c = explorer_commands("/data/prof")
    assert c["view"] == "neuron-explorer view -d /data/prof"
    assert c["ingest"] == "neuron-explorer view -d /data/prof --ingest-only"
    assert "-L 127.0.0.1:3001:localhost:3001" in c["tunnel"] and "-L 127.0.0.1:3002:localhost:3002" in c["tunnel"]
    assert "AWS Neuron Explorer" in c["vscode"]


def test_contract_explorer_commands_are_neuron_explorer_only():
    """Neuron 2.30+: neuron-profile is no longer distributed (N42). Every command is neuron-explorer's,
    with the flags the current docs give: capture (N37), summary-json and Parquet (N18), the full JSON
    of one pair (N36, supported through 2.33), the schema (profile-schema-reference)."""
    pair_only = explorer_commands(neff="k.neff", ntff="k.ntff")  # 09: a pair, no session folder
    assert (
        "view" not in pair_only
        and "parquet" not in pair_only
        and pair_only["capture"].startswith("neuron-explorer capture -n k.neff")
    )
    c = explorer_commands("/data/prof", neff="k.neff", ntff="k.ntff")
    commands = [v for k, v in c.items() if k not in ("vscode", "first_look", "install", "path", "tunnel", "json_pair")]
    assert all(v.startswith("neuron-explorer ") for v in commands), commands
    assert not any("neuron-profile" in v for v in c.values())
    assert c["capture"].startswith("neuron-explorer capture -n k.neff -s k.ntff --profile-nth-exec=2 --enable-dge-notifs")
    assert "k_exec_2.ntff" in c["capture"] and c["one_pair"].startswith("neuron-explorer view -n k.neff -s k_exec_2.ntff")
    assert c["summary_json"].startswith("neuron-explorer view -d /data/prof --output-format summary-json --output-file ")
    assert c["parquet"].startswith("neuron-explorer view -d /data/prof --output-format parquet --output-file ")
    assert c["json_pair"].startswith(
        "mkdir -p k && neuron-explorer view --output-format json --output-file k/k_profile_full.json -n k.neff"
    )
    assert c["schema"].startswith("neuron-explorer view --show-profile-schema")
    assert "Summary" in c["first_look"]
    # 09: a reader who passes the file capture wrote must not get "k_exec_2_exec_2.ntff"
    assert explorer_commands(neff="k.neff", ntff="k_exec_2.ntff")["one_pair"] == c["one_pair"]
    # the old call still works: notebooks 06 and 09 call explorer_commands(folder)
    assert explorer_commands("/data/prof")["view"] == c["view"]


def test_explorer_commands_say_which_package_brings_neuron_explorer(monkeypatch):
    monkeypatch.setattr(neuron_mod, "neuron_explorer_executable", lambda: (None, ""))
    assert "aws-neuronx-tools" in explorer_commands("/p")["install"]
    monkeypatch.setattr(neuron_mod, "neuron_explorer_executable", lambda: ("/usr/bin/neuron-explorer", ""))
    assert "install" not in explorer_commands("/p")


@pytest.mark.parametrize(
    ("executions", "ops", "verdict"),
    [(3, 5, "fused"), (5, 5, "op by op"), (6, 5, "more executions than ops"), (None, 5, "unknown"), (4, 0, "unknown")],
)
def test_eager_fusion_verdict(executions, ops, verdict):
    """Adaptive Eager Execution (N40): fewer NEFF executions than ops per call is fusion, not a lost op."""
    text = eager_fusion_verdict(executions, ops)
    assert text.startswith(verdict)
    if verdict == "fused":
        assert "torch.use_deterministic_algorithms(True)" in text


def test_export_without_neuron_explorer(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    result = export_system_events(tmp_path, tmp_path / "out")
    assert result.events is None and "not installed" in result.reason


def test_contract_export_detects_missing_flags(tmp_path, monkeypatch):
    fake_tool(tmp_path, "neuron-explorer", "usage: neuron-explorer view -d DIR")
    monkeypatch.setenv("PATH", str(tmp_path))
    result = export_system_events(tmp_path, tmp_path / "out")
    assert result.events is None and "--output-format" in result.reason


def test_contract_system_events_map_to_lanes():
    table = pd.DataFrame(
        {
            "name": ["aten::mul", "nrt_execute", "nc_exec_running"],
            "start_ts": [1_000_000, 1_002_000, 1_005_000],
            "end_ts": [1_010_000, 1_004_000, 1_009_000],
            "duration_ns": [9_000, 2_000, 4_000],
            "trace_event_source": ["framework", "neuron_rt", "neuron_hw"],
        }
    )
    ev = system_events_to_lanes(table)
    assert list(ev["lane"]) == ["framework", "runtime", "device"]
    assert list(ev["ts"]) == [0.0, 2.0, 5.0] and list(ev["dur"]) == [9.0, 2.0, 4.0]


FAKE_EXPLORER_WITH_SUMMARY = """#!/bin/sh
# A FAKE neuron-explorer: lists summary-json in its help and writes a summary to --output-file.
if [ "$2" = "--help" ]; then echo 'view -d DIR --output-format {parquet,json,summary-text,summary-json} --output-file F'; exit 0; fi
while [ $# -gt 0 ]; do
  if [ "$1" = "--output-file" ]; then printf '%s' '{"total_time_ns": 1200, "engines": {"Tensor": {"busy_pct": 41.5}}, "neffs": [{"name": "n0"}]}' > "$2"; fi
  shift
done
"""


def test_contract_explorer_summary_becomes_a_table(tmp_path, monkeypatch):
    fake = tmp_path / "neuron-explorer"
    fake.write_text(FAKE_EXPLORER_WITH_SUMMARY)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    result = explorer_summary(tmp_path, tmp_path / "summary.json")
    assert result.reason == "" and "summary-json" in result.command
    assert dict(zip(result.events["metric"], result.events["value"])) == {
        "total_time_ns": 1200,
        "engines.Tensor.busy_pct": 41.5,
        "neffs[0].name": "n0",
    }


def test_explorer_summary_without_the_format_says_so(tmp_path, monkeypatch):
    fake_tool(tmp_path, "neuron-explorer", "view -d DIR --output-format {parquet} --output-file F")
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    result = explorer_summary(tmp_path, tmp_path / "summary.json")
    assert result.events is None and "summary-json" in result.reason


def test_contract_explorer_summary_printed_instead_of_written(tmp_path, monkeypatch):
    fake = tmp_path / "neuron-explorer"
    fake.write_text(
        '#!/bin/sh\nif [ "$2" = "--help" ]; then echo \'--output-format summary-json --output-file\'; exit 0; fi\n'
        "echo '{\"total_time_ns\": 7}'\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    result = explorer_summary(tmp_path, tmp_path / "not-written.json")
    assert list(result.events["metric"]) == ["total_time_ns"] and list(result.events["value"]) == [7]


def test_contract_only_pb_files_are_expected_for_a_system_profile(tmp_path, monkeypatch):
    """Documented: "Only .pb files, no .ntff": a system profile only "(may be intentional)"; with
    NEURON_PROFILE = "system" it is the expected result, not a problem."""
    d = session_dir(tmp_path)
    touch(d / "ntrace.pb")
    touch(d / "trace_info.pb")
    system = find_neuron_artifacts(tmp_path, system_profile=True)
    assert system.ok and NOTE_SYSTEM_ONLY in system.notes
    device = find_neuron_artifacts(tmp_path, system_profile=False)
    assert [p.fix for p in device.problems] == [FIX_ONLY_PB]
    # the notebook passes the profile mode in force (NEURON_PROFILE "auto" resolves to a seat's or "device")
    source = (REPO_ROOT / "notebooks" / "06_reading_traces.ipynb").read_text()
    calls = source.count("find_neuron_artifacts(")
    assert calls >= 1 and source.count('system_profile=neuron_settings().profile == \\"system\\"') == calls


def test_contract_framework_trace_outside_the_pid_folder_is_reported(tmp_path):
    """Documented: "No framework events in system trace": move neuron_framework_trace_rank_<N>.json
    into the matching <instance-id>_pid_<pid>/ folder."""
    d = session_dir(tmp_path)
    touch(d / "ntrace.pb")
    touch(d / "trace_info.pb")
    touch(d / "neuron_framework_trace_rank_0.json")
    assert find_neuron_artifacts(tmp_path, system_profile=True).ok
    misplaced = touch(tmp_path / "neuron_framework_trace_rank_1.json")
    found = find_neuron_artifacts(tmp_path, system_profile=True)
    assert [(p.path, p.fix) for p in found.problems] == [(misplaced, FIX_MISPLACED_FRAMEWORK_TRACE)]


def test_contract_neuron_explorer_off_path_is_found_with_the_fix(tmp_path, monkeypatch):
    """Documented: `neuron-explorer` not found: /opt/aws/neuron/bin is not on PATH (here a FAKE folder)."""
    tools = tmp_path / "opt-aws-neuron-bin"
    fake = fake_tool(tools, "neuron-explorer", "view -d DIR --output-format {parquet,summary-json} --output-file F")
    monkeypatch.setattr(neuron_mod, "NEURON_TOOLS_BIN", tools)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    exe, note = neuron_explorer_executable()
    assert exe == str(fake) and "is not on PATH" in note and "export PATH=" in note
    assert explorer_commands("/data/prof")["path"].startswith("export PATH=")
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")
    assert neuron_explorer_executable() == (str(fake), "") and "path" not in explorer_commands("/data/prof")


def test_contract_system_event_cores_count_runtime_and_device_events_by_nc_idx():
    table = pd.DataFrame(
        {
            "name": ["aten::mul", "nrt_execute", "nc_exec_running", "nrt_execute"],
            "start_ts": [0, 10, 20, 30],
            "end_ts": [5, 15, 25, 35],
            "duration_ns": [5, 5, 5, 5],
            "trace_event_source": ["framework", "neuron_rt", "neuron_hw", "neuron_rt"],
            "nc_idx": [None, 0, 0, 3],
        }
    )
    assert system_event_cores(system_events_to_lanes(table)) == {0: 2, 3: 1}
    assert system_event_cores(system_events_to_lanes(table.drop(columns="nc_idx"))) == {}


def test_json_pair_writes_where_load_exports_finds_it(tmp_path):
    """Json_pair wrote profile.json, which load_exports' default glob never finds."""
    import gzip
    import shlex

    from analysis import load_exports

    command = explorer_commands(neff="my_kernel.neff", ntff="profile.ntff")["json_pair"].split("   #")[0]
    target = tmp_path / shlex.split(command)[shlex.split(command).index("--output-file") + 1]
    target.parent.mkdir(parents=True)
    recorded = REPO_ROOT / "data/recorded-neuron/baseline_bf16_s512/baseline_exec_2_profile_full.json.gz"
    target.write_bytes(gzip.decompress(recorded.read_bytes()))
    assert list(load_exports(tmp_path)) == ["my_kernel"]
