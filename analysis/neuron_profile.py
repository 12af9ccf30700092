"""A Neuron profile on disk: the folder torch-neuronx writes (NEFF, NTFF, .pb, the framework
trace) checked for the documented failure signs, and Neuron Explorer's exports of it read into
tables (system events with their lanes, the summary).

Nothing here has read a profile written on Trainium in this project: the layout and the messages
follow the vendor documentation as recorded, fact by fact, in docs/NEURON_NOTES.md (the N<n>
labels below); tests/test_neuron_artifacts.py checks these functions on SYNTHETIC folders in the
documented layout and a FAKE neuron-explorer. (Recorded real exports are read by
analysis.neuron_export.)
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd


# ---------------------------------------------------------------------------------------------
# The output folder: <dir>/<instance-id>_pid_<pid>/<timestamp>/
# ---------------------------------------------------------------------------------------------
_SESSION_PARENT = re.compile(r"^(?P<instance>.+)_pid_(?P<pid>\d+)$")
_MODEL_NEFF = re.compile(r"^neff_(?P<hash>\d+)\.neff$")
_SESSION_NEFF = re.compile(r"^neff_(?P<hash>[0-9A-Za-z]+)_vnc_(?P<vnc>\d+)\.neff$")
_MODEL_NTFF = re.compile(r"^(?P<hash>\d+)_instid_(?P<inst>\d+)_vnc_(?P<vnc>\d+)\.ntff$")
_SESSION_NTFF = re.compile(r"^profile_nc_(?P<core>\d+)_session_(?P<session>\d+)\.ntff$")
_FRAMEWORK_TRACE = re.compile(r"^(trace|neuron_framework_trace_rank_\d+)\.json(\.gz)?$")

FIX_EMPTY = (
    "the documented causes of an empty profile folder: profiling was not enabled (pass "
    "on_trace_ready=NeuronProfiler(cfg).export_trace and experimental_config=cfg, call prof.step() "
    "every iteration, run at least wait+warmup+active steps), or the workload did not run on "
    "Neuron (check that the tensors are on device 'neuron')"
)
FIX_EMPTY_NTFF = (
    "every .ntff is 0 bytes, the documented sign of a warm-up problem: warm up at least 3 "
    "iterations before the active window (schedule warmup>=3) so that no compilation falls inside it"
)
NOTE_SOME_EMPTY_NTFF = (
    "some .ntff files are 0 bytes: expected in PyTorch for NeuronCores this process initialised "
    "but did not run on (N12); only when all are empty is warm-up the suspect"
)
NOTE_NEFF_WITHOUT_NTFF = (
    "a NEFF without a matching NTFF is expected: in session mode executions are tied to NEFFs "
    "by nc_exec_running events, and in model mode some NEFFs never execute (N13)"
)
FIX_NO_NEFF = (
    "no .neff beside the traces: the NEFFs are in the NEFF cache. Pass NeuronConfig(neff_cache_dir=<the cache: "
    "TORCH_NEURONX_NEFF_CACHE_DIR, default /tmp/neff_cache>) so that they are copied in on stop, or set "
    "TORCH_NEURONX_NEFF_CACHE_DIR to the profile folder before the run, or copy them from the cache "
    "(`find /tmp/neff_cache -name '*.neff'`)"
)
FIX_ONLY_PB = (
    "only .pb files: device profiling was off, so this is a system profile only; for device traces "
    '(NEFF + NTFF) add ProfileMode.DEVICE to NeuronConfig(modes=[...]) (the series: NEURON_PROFILE = "device")'
)
NOTE_SYSTEM_ONLY = 'only .pb files: a system profile, as NEURON_PROFILE = "system" asked (no device traces, no HBM reserved, N22)'
FIX_NEFF_WITHOUT_NTFF = (
    "NEFFs but no .ntff anywhere: no device trace was written, so Neuron Explorer has nothing to show for them "
    "(an NTFF needs its NEFF and a NEFF alone holds no timing). Either device profiling was off (add "
    'ProfileMode.DEVICE to NeuronConfig(modes=[...]); the series: NEURON_PROFILE = "device"), or nothing executed '
    "inside the active window (call prof.step() every iteration and run at least wait+warmup+active steps, with the "
    "tensors on device 'neuron')"
)
FIX_NTFF_WITHOUT_NEFF = (
    "an .ntff whose NEFF is not in the folder: Neuron Explorer cannot process a device trace without the NEFF it "
    "was captured from. Copy that NEFF in from the NEFF cache (TORCH_NEURONX_NEFF_CACHE_DIR, default /tmp/neff_cache), "
    "or pass NeuronConfig(neff_cache_dir=<the cache>) so that it is copied on stop"
)
NOTE_NEFFS_OF_A_SYSTEM_PROFILE = (
    'NEFFs and .pb files but no .ntff: a system profile, as NEURON_PROFILE = "system" asked; the NEFFs were copied '
    "in from the NEFF cache (no device traces, N22)"
)
FIX_MISPLACED_FRAMEWORK_TRACE = (
    "the framework trace is outside the <instance-id>_pid_<pid>/ folder, so Neuron Explorer shows no framework "
    "events in the system trace: move it into the matching <instance-id>_pid_<pid>/ folder"
)


@dataclass
class ArtifactProblem:
    sign: str
    fix: str
    path: Path | None = None


@dataclass
class NeuronArtifacts:
    """What a Neuron profile folder holds, sorted the way Neuron Explorer pairs it."""

    root: Path
    session_dirs: list[Path] = field(default_factory=list)
    neffs: list[Path] = field(default_factory=list)
    ntffs: list[Path] = field(default_factory=list)
    model_pairs: list[tuple[Path, Path]] = field(default_factory=list)
    session_ntffs: dict[int, list[Path]] = field(default_factory=dict)
    framework_traces: list[Path] = field(default_factory=list)
    pb_files: list[Path] = field(default_factory=list)
    problems: list[ArtifactProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # documented, expected findings: not problems

    @property
    def ok(self) -> bool:
        return not self.problems


def find_neuron_artifacts(root: Path | str, system_profile: bool = False) -> NeuronArtifacts:
    """List NEFF/NTFF/.pb files under a profile folder and check them for the documented failure signs.

    `system_profile`: whether the run asked for a system profile only (no ProfileMode.DEVICE; a
    notebook passes its kernel's NEURON_PROFILE == "system"). Only .pb files are then the expected
    result, not a problem.
    Never raises for a bad folder: what is wrong is reported in `problems`, each with its fix.
    """
    root = Path(root)
    found = NeuronArtifacts(root=root)
    if root.is_file():  # a NEFF, an NTFF or an export given where its folder is expected: not an empty profile
        found.problems.append(
            ArtifactProblem(
                f"{root.name} is a file, not a profile folder",
                f"pass the folder that holds it: find_neuron_artifacts({str(root.parent)!r})",
                root,
            )
        )
        return found
    if not root.is_dir():
        found.problems.append(ArtifactProblem("profile folder does not exist", FIX_EMPTY, root))
        return found
    files = sorted(p for p in root.rglob("*") if p.is_file())
    found.session_dirs = sorted(
        {p.parent for p in files if p.parent.parent != p.parent and _SESSION_PARENT.match(p.parent.parent.name)}
    )
    if not files:
        found.problems.append(ArtifactProblem("profile folder is empty", FIX_EMPTY, root))
        return found

    model_neffs: dict[str, Path] = {}
    model_ntffs: dict[str, list[Path]] = {}
    for path in files:
        name = path.name
        if name.endswith(".neff"):
            found.neffs.append(path)
            if m := _MODEL_NEFF.match(name):
                model_neffs[m["hash"]] = path
        elif name.endswith(".ntff"):
            found.ntffs.append(path)
            if m := _MODEL_NTFF.match(name):
                model_ntffs.setdefault(m["hash"], []).append(path)
            elif m := _SESSION_NTFF.match(name):
                found.session_ntffs.setdefault(int(m["core"]), []).append(path)
        elif name.endswith(".pb"):
            found.pb_files.append(path)
        elif _FRAMEWORK_TRACE.match(name):
            found.framework_traces.append(path)

    empty_ntffs = [p for p in found.ntffs if p.stat().st_size == 0]
    if found.ntffs and len(empty_ntffs) == len(found.ntffs):
        found.problems.append(ArtifactProblem("every .ntff is 0 bytes", FIX_EMPTY_NTFF, root))
    elif empty_ntffs:
        found.notes.append(f"{len(empty_ntffs)} of {len(found.ntffs)} .ntff files are 0 bytes: {NOTE_SOME_EMPTY_NTFF}")
    for digest, neff in sorted(model_neffs.items()):
        for ntff in model_ntffs.get(digest, []):
            found.model_pairs.append((neff, ntff))
    unpaired = [neff for digest, neff in model_neffs.items() if digest not in model_ntffs]
    if unpaired and found.ntffs:
        found.notes.append(f"{len(unpaired)} NEFF(s) without a matching NTFF: {NOTE_NEFF_WITHOUT_NTFF}")
    if found.ntffs and not found.neffs:
        found.problems.append(ArtifactProblem("no .neff", FIX_NO_NEFF, root))
    elif found.neffs:  # the reverse of the line above, per model-mode trace: an NTFF whose NEFF is missing
        for digest, ntffs in sorted(model_ntffs.items()):
            if digest not in model_neffs:
                found.problems += [ArtifactProblem("NTFF without its NEFF", FIX_NTFF_WITHOUT_NEFF, p) for p in ntffs]
    if found.neffs and not found.ntffs:  # a NEFF alone holds no timing: never a silent ok
        if system_profile and found.pb_files:
            found.notes.append(NOTE_NEFFS_OF_A_SYSTEM_PROFILE)
        else:
            found.problems.append(ArtifactProblem("NEFF without NTFF", FIX_NEFF_WITHOUT_NTFF, root))
    if found.pb_files and not found.ntffs and not found.neffs:
        if system_profile:
            found.notes.append(NOTE_SYSTEM_ONLY)
        else:
            found.problems.append(ArtifactProblem("only .pb files", FIX_ONLY_PB, root))
    for trace in found.framework_traces:
        if trace.name.startswith("neuron_framework_trace_rank_") and not any(
            _SESSION_PARENT.match(parent.name) for parent in trace.relative_to(root).parents
        ):
            found.problems.append(
                ArtifactProblem("framework trace outside <instance-id>_pid_<pid>/", FIX_MISPLACED_FRAMEWORK_TRACE, trace)
            )
    return found


NEURON_TOOLS_BIN = Path("/opt/aws/neuron/bin")  # where aws-neuronx-tools installs neuron-explorer (N32)
FIX_EXPLORER_PATH = f"export PATH={NEURON_TOOLS_BIN}:$PATH"
FIX_EXPLORER_INSTALL = (
    "neuron-explorer comes with the aws-neuronx-tools package (installed on the Neuron DLAMI): install it with the "
    "system's package manager from the Neuron repository, then "
    f"`{FIX_EXPLORER_PATH}` (N32)"
)


def neuron_explorer_executable() -> tuple[str | None, str]:
    """The neuron-explorer executable, and a note with the fix when it is installed but not on PATH (N32)."""

    exe = shutil.which("neuron-explorer")
    if exe is not None:
        return exe, ""
    installed = NEURON_TOOLS_BIN / "neuron-explorer"
    if installed.exists():
        return str(installed), (
            f"neuron-explorer is installed in {NEURON_TOOLS_BIN} but that folder is not on "
            f"PATH: `{FIX_EXPLORER_PATH}` (the series finds it there anyway)"
        )
    return None, ""


def explorer_commands(
    profile_dir: Path | str | None = None, neff: str = "<file>.neff", ntff: str = "<file>.ntff"
) -> dict[str, str]:
    """The documented Neuron Explorer commands for a profile, ready to copy (Neuron 2.33/2.34).

    `neuron-profile` is no longer distributed (Neuron 2.30; docs/NEURON_NOTES.md N42): every
    command here is `neuron-explorer`. The tunnel binds both forwarded ports to 127.0.0.1 on the
    laptop: the UI (3001) calls its API (3002) from the browser, so forwarding only 3001 shows an
    empty UI. Where neuron-explorer is installed but not on PATH, "path" says how to put it there;
    where it is not installed, "install" says which package brings it.

    Arguments: profile_dir: the session-mode profile folder the torch.profiler path writes; None
            for a NEFF/NTFF pair alone (09's kernels), which leaves out the folder's four commands;
        neff, ntff: a model-mode pair for the *_pair keys: an NKI kernel's NEFF and the NTFF name given to
            `capture -s`; the view commands open its `_exec_2` file (what `--profile-nth-exec=2` writes), so pass
            the capture's name ("profile.ntff"); the file it wrote ("profile_exec_2.ntff") is read back as that name.
    Returns: {what: command}. Keys: view, ingest, summary_json, parquet (the session folder, where given);
        capture, one_pair, summary_pair, json_pair (one NEFF and its trace); schema; first_look
        (what to open first in the UI); tunnel, vscode; and path or install where needed.
    """
    exe, path_note = neuron_explorer_executable()
    if ntff.endswith("_exec_2.ntff"):  # the file capture wrote, passed in place of the name given to it
        ntff = ntff.removesuffix("_exec_2.ntff") + ".ntff"
    ntff_2 = ntff.replace(".ntff", "_exec_2.ntff") if ntff.endswith(".ntff") else ntff
    stem = Path(neff).stem  # the export's folder and file name, as load_exports reads them
    folder = {}
    if profile_dir is not None:
        d = str(profile_dir)
        folder = {
            "view": f"neuron-explorer view -d {d}",
            "ingest": f"neuron-explorer view -d {d} --ingest-only",  # the documented re-processing command (N32)
            "summary_json": f"neuron-explorer view -d {d} --output-format summary-json --output-file {d}/summary.json",
            "parquet": f"neuron-explorer view -d {d} --output-format parquet --output-file {d}-parquet   # the default scriptable export (N18)",
        }
    return {
        **({"path": FIX_EXPLORER_PATH + "   # " + path_note} if path_note else {}),
        **({"install": FIX_EXPLORER_INSTALL} if exe is None else {}),
        **folder,
        "first_look": "in Neuron Explorer's viewer, open the Summary first: MFU, HFU, MBU/HBU and utilisation, before any timeline (N47)",
        # model-mode pairs only; the torch.profiler path writes session-mode profiles: use "view" (N15)
        "capture": f"neuron-explorer capture -n {neff} -s {ntff} --profile-nth-exec=2 --enable-dge-notifs   # writes {ntff_2} (N37)",
        "one_pair": f"neuron-explorer view -n {neff} -s {ntff_2}   # opens one NEFF and the NTFF captured from it in the viewer",
        "summary_pair": f"neuron-explorer view --output-format summary-json --output-file summary.json -n {neff} -s {ntff_2}",
        # written where analysis.load_exports' default glob (*/*_profile_full.json*) finds it: load_exports(".")
        # (profile.json, the earlier name, was not found by it)
        "json_pair": (
            f"mkdir -p {stem} && neuron-explorer view --output-format json --output-file {stem}/{stem}_profile_full.json -n {neff} -s {ntff_2}"
            "   # the full JSON export: supported through Neuron 2.33, unmaintained from 2.34 (N36); load_exports is untried on it"
        ),
        "schema": "neuron-explorer view --show-profile-schema   # the Parquet tables and fields of this Explorer version",
        "tunnel": (
            "ssh -L 127.0.0.1:3001:localhost:3001 -L 127.0.0.1:3002:localhost:3002 <user>@<instance>"
            "   # then browse http://localhost:3001"
        ),
        "vscode": (
            'VS Code: install the "AWS Neuron Explorer" extension, connect with Remote-SSH, '
            "open the profile folder (the extension runs the server, no tunnel needed)"
        ),
    }


def eager_fusion_verdict(device_executions_per_call: float | None, aten_ops_per_call: float | None) -> str:
    """What a Neuron profile of one eager call says about Adaptive Eager Execution (N40, N41).

    TorchNeuron may fuse queued eager operators into single operators, so the naive RMSNorm's
    eager call can run fewer NEFF executions than it has ATen ops; printing a tensor between ops,
    or `torch.use_deterministic_algorithms(True)`, gives the op-by-op chain.

    Arguments: device_executions_per_call: NEFF executions (`nc_exec_running` events in the
        `neuron_hw` lane) per call, or None where none were captured; aten_ops_per_call: the
        innermost ATen ops per call (the ops that reach the backend).
    Returns: one sentence: "fused", "op by op", "more executions than ops" or why it cannot say.
    """
    if device_executions_per_call is None or not aten_ops_per_call:
        return "unknown: no device executions captured (a cpu/cuda run, or no Neuron Explorer export of the profile)"
    execs, ops = float(device_executions_per_call), float(aten_ops_per_call)
    if execs < ops:
        return (
            f"fused: {execs:g} NEFF executions per call for {ops:g} ATen ops, so Adaptive Eager Execution merged some "
            "of them; run with torch.use_deterministic_algorithms(True) to see the op-by-op chain"
        )
    if execs == ops:
        return f"op by op: {execs:g} NEFF executions per call, one per ATen op (no eager fusion in this capture)"
    return (
        f"more executions than ops: {execs:g} NEFF executions per call for {ops:g} ATen ops (copies or a CPU fallback "
        "between them?); look at the neuron_rt lane for what ran between the ops"
    )


# ---------------------------------------------------------------------------------------------
# Neuron Explorer's Parquet export, loaded into the series' lanes
# ---------------------------------------------------------------------------------------------
EXPLORER_SOURCE_LANES = {"framework": "framework", "neuron_rt": "runtime", "neuron_hw": "device"}


@dataclass
class ExplorerExport:
    """System events exported by neuron-explorer, or why there are none."""

    events: pd.DataFrame | None = None  # in the series' event columns
    reason: str = ""
    command: list[str] = field(default_factory=list)


def system_events_to_lanes(table: pd.DataFrame) -> pd.DataFrame:
    """SystemProfileEvents rows (name, start_ts, end_ts, duration_ns, trace_event_source) as
    series events: framework / runtime (neuron_rt) / device (neuron_hw) lanes, times in µs."""

    start_us = table["start_ts"].astype("float64") / 1000.0
    dur_us = table["duration_ns"].astype("float64") / 1000.0
    source = table["trace_event_source"].astype(str)
    out = pd.DataFrame(
        {
            "name": table["name"].astype(str),
            "cat": source,
            "lane": source.map(EXPLORER_SOURCE_LANES).fillna("other"),
            "ts": start_us - start_us.min() if len(start_us) else start_us,
            "dur": dur_us,
        }
    )
    out["end"] = out["ts"] + out["dur"]
    if "nc_idx" in table:  # the Logical NeuronCore of runtime and hardware events (absent on framework events)
        out["nc_idx"] = table["nc_idx"]
    return out


def system_event_cores(events: pd.DataFrame) -> dict[int, int]:
    """Runtime and device events per NeuronCore index (`nc_idx`) in system events from
    system_events_to_lanes: which cores system-trace capture recorded (capture_enabled_for_nc, N28)."""
    if events is None or "nc_idx" not in events:
        return {}
    cores = events.loc[events["lane"].isin(["runtime", "device"]), "nc_idx"].dropna()
    return {int(core): int(count) for core, count in cores.astype("int64").value_counts().sort_index().items()}


def explorer_accepting(*words: str) -> tuple[str | None, str]:
    """The neuron-explorer executable if its `view --help` lists every one of `words`, else why not."""

    exe, _ = neuron_explorer_executable()
    if exe is None:
        return None, f"neuron-explorer is not installed here: {FIX_EXPLORER_INSTALL}"
    try:
        help_text = subprocess.run([exe, "view", "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"`neuron-explorer view --help` failed: {exc}"
    flags = help_text.stdout + help_text.stderr
    missing = [w for w in words if w not in flags]
    if missing:
        return None, f"this neuron-explorer does not list {', '.join(missing)} in `view --help`"
    return exe, ""


def _explorer_view(
    profile_dir: Path | str,
    output_format: str,
    output: Path,
    timeout_s: int,
) -> tuple[list[str], str, str]:
    """Run `neuron-explorer view -d DIR --output-format FMT --output-file OUT` where this
    neuron-explorer lists the format in its help: (command, why it failed or "", its stdout)."""

    exe, reason = explorer_accepting("--output-format", "--output-file", output_format)
    if exe is None:
        return [], reason, ""
    command = [exe, "view", "-d", str(profile_dir), "--output-format", output_format, "--output-file", str(output)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return command, f"export failed: {exc}", ""
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return command, f"export exited {done.returncode}: {tail[0]}", done.stdout
    return command, "", done.stdout


def export_system_events(profile_dir: Path | str, out_dir: Path | str, timeout_s: int = 900) -> ExplorerExport:
    """Run `neuron-explorer view -d DIR --output-format parquet --output-file OUT` where the tool
    exists and supports those flags (checked in its --help), then load SystemProfileEvents.

    Parquet is the documented default export (the JSON export is unmaintained since SDK 2.34).
    The flags and table name follow the docs and are checked at run time: nothing is assumed.
    """
    out_dir = Path(out_dir)
    command, reason, _ = _explorer_view(profile_dir, "parquet", out_dir, timeout_s)
    if reason:
        return ExplorerExport(reason=reason, command=command)
    tables = sorted(out_dir.rglob("SystemProfileEvents*.parquet"))
    if not tables:
        return ExplorerExport(reason=f"no SystemProfileEvents*.parquet under {out_dir}", command=command)
    try:
        table = pd.concat([pd.read_parquet(t) for t in tables], ignore_index=True)
    except ImportError:
        return ExplorerExport(reason="reading Parquet needs pyarrow: `pip install pyarrow`", command=command)
    return ExplorerExport(events=system_events_to_lanes(table), command=command)


def explorer_summary(profile_dir: Path | str, out_file: Path | str, timeout_s: int = 900) -> ExplorerExport:
    """The profile's summary metrics as a two-column table (metric, value), from
    `neuron-explorer view -d DIR --output-format summary-json --output-file OUT` (N18), where this
    neuron-explorer lists `summary-json` in its help. Whether it writes the file or prints the JSON
    is not documented, so the file is read, else what it printed. `events` holds the table."""

    out_file = Path(out_file)
    command, reason, printed = _explorer_view(profile_dir, "summary-json", out_file, timeout_s)
    if reason:
        return ExplorerExport(reason=reason, command=command)
    try:
        data = json.loads(out_file.read_text() if out_file.exists() else printed)
    except ValueError as exc:
        return ExplorerExport(reason=f"no readable summary JSON in {out_file} or in its output ({exc})", command=command)
    return ExplorerExport(events=summary_table(data), command=command)


def summary_table(data: Any) -> pd.DataFrame:
    """A nested summary (dicts and lists) flattened into rows of (metric, value), dotted paths as names."""

    rows: list[tuple[str, Any]] = []

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(f"{prefix}.{key}" if prefix else str(key), value)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(f"{prefix}[{i}]", value)
        else:
            rows.append((prefix, node))

    walk("", data)
    return pd.DataFrame(rows, columns=["metric", "value"])
