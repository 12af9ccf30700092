"""A workshop on one host: the seat plan read from the host, and the JupyterHub configuration made from it.

    python -m series_tools.workshop --seats 20 [--out workshop-hub/]       (make workshop SEATS=20)
    python -m series_tools.workshop --seats 20 --instance trn2.48xlarge   (plan from documented figures)

A seat is one learner's single-user Jupyter server and the kernels it starts. On one host the
seats share everything the series otherwise takes for itself, so the plan gives each seat its own
share (docs/WORKSHOP_HUB.md says why each matters):

- NeuronCores: a process holds the cores of its `NEURON_RT_VISIBLE_CORES` until it exits
  (docs/NEURON_NOTES.md N27), so each seat gets its own logical core(s); more seats than cores is
  refused. On cpu there are no cores to hand out, only threads.
- threads: `helpers.start` takes `OMP_NUM_THREADS` as set (analysis.contention.spare_cpu_threads),
  else every CPU but one, so 20 kernels would each spread over the whole host. Each seat gets the
  host's vCPUs less the hub's, divided by the seats (at least 1; where seats outnumber the spare
  vCPUs the plan says they share them).
- host memory: an allowance per seat (`--memory-per-seat-gib`, the instructor's estimate, not a
  measurement of this project) plus the hub's; more than the host has is refused.
- HBM: the device memory behind each seat's core(s), and what is left while a device profile
  reserves about 5 GB (N22); a seat whose budget is smaller than that reserve is told to use the
  system profile.
- the NEFF cache: one folder per seat (`TORCH_NEURONX_NEFF_CACHE_DIR`), seeded at spawn from a
  pre-warmed cache, so seats neither compile into nor race on one shared `/tmp/neff_cache`; beside
  it the seat's TorchNeuron compilation folder (`TORCH_NEURONX_DEBUG_DIR`), not the shared
  `/tmp/neuron_backend` the first seat's user would own (N43).
- Neuron Explorer's ports: a distinct UI/API pair per seat (the defaults 3001/3002 stay free for
  the instructor); whether the installed `neuron-explorer view` takes a port option is read from
  its help at plan time (not documented, docs/WORKSHOP_HUB.md).

The plan is written as `workshop.json` (read by the hub at start) and `seats.md`; the hub
configuration is `jupyterhub_config.py` (copied from workshop/jupyterhub_config.py, which reads
the plan beside it) with the series' kernel under `share/jupyter/kernels/`. A plan that does not
fit exits 2 with the reason and the largest number of seats that fits.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from series_tools.cli import OneLineParser
from helpers.outputs import REPO_ROOT

KERNEL_NAME = "trainium-profiling"  # the series' kernel (Makefile KERNEL, helpers.kernel_check)
KERNEL_DISPLAY_NAME = "Python (trainium-profiling)"
HUB_CONFIG_TEMPLATE = REPO_ROOT / "workshop" / "jupyterhub_config.py"
NEURON_TOOLS_BIN = Path("/opt/aws/neuron/bin")  # where the DLAMI installs neuron-ls and neuron-explorer
DEVICE_PROFILE_HBM_GB = 5.0  # "ProfileMode.DEVICE reserves about 5 GB of HBM on trn2" (N22)
DEFAULT_LNC = 2  # "LNC=2 (default)" on Trn2 (logical-neuroncore-config.rst)
SEAT_PREFIX = "seat"

# The documented sizes (docs/WORKSHOP_HUB.md, "Documented figures", gives each source and status).
# trn2.48xlarge: 16 Trainium2 chips, 192 vCPUs, 2,048 GiB host memory (trn2-arch), 8 physical
# NeuronCores and 96 GiB per chip, 4 logical at LNC=2 (trainium2.rst, logical-neuroncore-config.rst).
# trn2.3xlarge: the vendor's architecture page lists no trn2.3xlarge; its figures (1 chip, 12 vCPUs,
# 128 GiB) are UNVERIFIED there and the planner reads the real host with neuron-ls anyway.
DOCUMENTED_INSTANCES = {
    "trn2.48xlarge": {"chips": 16, "vcpus": 192, "memory_gib": 2048, "status": "documented"},
    "trn2.3xlarge": {"chips": 1, "vcpus": 12, "memory_gib": 128, "status": "UNVERIFIED"},
}
TRN2_PHYSICAL_CORES_PER_CHIP = 8
TRN2_HBM_GB_PER_CHIP = 96


@dataclass(frozen=True)
class Host:
    """What the plan divides: read from this host, from a saved neuron-ls output, or from the docs."""

    source: str  # where these figures come from, said in every table
    vcpus: int
    memory_gib: float
    neuron_devices: int = 0
    logical_cores_per_device: int = 0
    hbm_gb_per_device: float = 0.0
    lnc: int | None = None  # physical cores per logical core, where known
    explorer_port_flag: str | None = None  # the `neuron-explorer view` option that sets its port, if any
    explorer_checked: bool = False  # whether that was read from this host's neuron-explorer

    @property
    def backend(self) -> str:
        return "neuron" if self.logical_cores else "cpu"

    @property
    def logical_cores(self) -> int:
        return self.neuron_devices * self.logical_cores_per_device

    @property
    def hbm_gb_per_core(self) -> float:
        return self.hbm_gb_per_device / self.logical_cores_per_device if self.logical_cores_per_device else 0.0


@dataclass(frozen=True)
class Seat:
    """One learner's share of the host."""

    name: str
    cores: str | None  # NEURON_RT_VISIBLE_CORES spec ("3", "6-7"); None on cpu
    threads: int
    neff_cache: str
    explorer_ui_port: int
    explorer_api_port: int
    hbm_gb: float | None  # the HBM behind the seat's cores; None on cpu
    hbm_gb_with_device_profile: float | None  # less the device profile's reserve (N22)

    @property
    def debug_dir(self) -> str:
        """The seat's TorchNeuron compilation folder, beside its NEFF cache in the folder the seat owns.

        Unset, `TORCH_NEURONX_DEBUG_DIR` is `/tmp/neuron_backend` for every process (N43): the first
        seat's Unix user would create it, and the other seats could not write their graphs there."""
        return f"{self.neff_cache.rsplit('/', 1)[0]}/neuron_backend"

    def environment(self) -> dict[str, str]:
        """What the seat's server (and so every kernel it starts) runs with."""
        env = {
            "OMP_NUM_THREADS": str(self.threads),  # helpers.start's intra-op threads (spare_cpu_threads)
            "TORCH_NEURONX_NEFF_CACHE_DIR": self.neff_cache,
            "TORCH_NEURONX_DEBUG_DIR": self.debug_dir,
            "NEURON_PROFILE": "system",
            "WORKSHOP_SEAT": self.name,
            "NEURON_EXPLORER_UI_PORT": str(self.explorer_ui_port),
            "NEURON_EXPLORER_API_PORT": str(self.explorer_api_port),
        }
        if self.cores is not None:
            env["NEURON_RT_VISIBLE_CORES"] = self.cores
        return env


@dataclass(frozen=True)
class Plan:
    host: Host
    seats: tuple[Seat, ...]
    hub_cpus: int
    memory_per_seat_gib: float
    hub_memory_gib: float
    cores_per_seat: int = 1
    notes: tuple[str, ...] = field(default=())

    def record(self) -> dict:
        return {
            "host": {**asdict(self.host), "backend": self.host.backend, "logical_cores": self.host.logical_cores},
            "hub_cpus": self.hub_cpus,
            "memory_per_seat_gib": self.memory_per_seat_gib,
            "hub_memory_gib": self.hub_memory_gib,
            "notes": list(self.notes),
            "seats": [{**asdict(s), "environment": s.environment()} for s in self.seats],
        }


class SeatsDoNotFit(ValueError):
    """The host cannot hold the seats asked for: `reason` says which resource, `fits` how many it holds."""

    def __init__(self, reason: str, fits: int):
        super().__init__(reason)
        self.reason, self.fits = reason, fits


# ---------------------------------------------------------------------------------------------
# Reading the host


def host_vcpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def host_memory_gib(meminfo: Path = Path("/proc/meminfo")) -> float:
    for line in meminfo.read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 2**20  # kB
    raise ValueError(f"no MemTotal in {meminfo}")


def _size_gb(text: str) -> float:
    """ "96 GB" (neuron-ls's table) -> 96.0; a bare number is bytes (its JSON's memory_size)."""
    text = str(text).strip()
    if text.isdigit():
        return int(text) / 2**30
    m = re.fullmatch(r"([\d.]+)\s*([KMGT]i?B)", text)
    if not m:
        raise ValueError(f"unreadable device memory {text!r}")
    scale = {"K": 2**-20, "M": 2**-10, "G": 1, "T": 2**10}[m.group(2)[0]]
    return float(m.group(1)) * scale


def parse_neuron_ls(output: str, lnc: int = DEFAULT_LNC) -> tuple[int, int, float, str]:
    """(devices, logical cores per device, device memory in GB, how the cores were counted) from
    `neuron-ls` output: its documented table (columns NEURON CORES, LOGICAL NC, NEURON MEMORY;
    tools/neuron-sys-tools/neuron-ls.rst) or `neuron-ls --json-output` (a list of devices with
    `nc_count` and `memory_size` in bytes; a field layout seen in captured output, not in the
    vendor's page). The JSON does not say whether `nc_count` counts physical or logical cores: a
    Trainium2 has 8 physical (trainium2.rst), so 8 is divided by the LNC, any other count is
    taken as logical, and the method is returned for the plan's source line."""
    text = output.strip()
    if text.startswith("["):
        devices = json.loads(text)
        if not devices:
            raise ValueError("neuron-ls lists no Neuron device")
        counts = {int(d["nc_count"]) for d in devices}
        if len(counts) != 1:
            raise ValueError(f"devices differ in core count: {sorted(counts)}")
        nc = counts.pop()
        if nc == TRN2_PHYSICAL_CORES_PER_CHIP and lnc > 1:
            return len(devices), nc // lnc, _size_gb(devices[0]["memory_size"]), f"JSON nc_count {nc} physical / LNC {lnc}"
        return len(devices), nc, _size_gb(devices[0]["memory_size"]), f"JSON nc_count {nc} taken as logical"
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines() if line.strip().startswith("|")]
    header = [r for r in rows if not r[0].isdigit()][:2]  # the two header lines come before the device rows
    data = [r for r in rows if r and r[0].isdigit()]
    if len(header) < 2 or not data:
        raise ValueError("neuron-ls printed no device table")
    names = [f"{a} {b}".strip() for a, b in zip(*header)]
    col = {name: i for i, name in enumerate(names)}
    cores_col = col.get("LOGICAL NC", col.get("NEURON CORES"))
    if cores_col is None or "NEURON MEMORY" not in col:
        raise ValueError(f"neuron-ls table without core or memory columns: {names}")
    counted = "table LOGICAL NC" if "LOGICAL NC" in col else "table NEURON CORES (no LOGICAL NC column)"
    return len(data), int(data[0][cores_col]), _size_gb(data[0][col["NEURON MEMORY"]]), counted


def neuron_ls_executable() -> str | None:
    from helpers.neuron import neuron_ls_executable as found  # PATH, else /opt/aws/neuron/bin

    return found()


def explorer_port_flag() -> str | None:
    """The option of the installed `neuron-explorer view` that sets a port, read from its help;
    None where it is not installed or its help names none (the docs document only 3001/3002)."""
    exe = shutil.which("neuron-explorer") or str(NEURON_TOOLS_BIN / "neuron-explorer")
    try:
        out = subprocess.run([exe, "view", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"(--[\w-]*port[\w-]*)", out.stdout + out.stderr)
    return m.group(1) if m else None


def read_host(neuron_ls_output: str | None = None, source: str = "") -> Host:
    """This host's vCPUs and memory; its NeuronCores and HBM from `neuron_ls_output` (a saved
    `neuron-ls` output) or, where neuron-ls is installed, from running it; none on a cpu host."""
    lnc = int(os.environ.get("NEURON_LOGICAL_NC_CONFIG", DEFAULT_LNC))
    vcpus, memory = host_vcpus(), host_memory_gib()
    if neuron_ls_output is None and (exe := neuron_ls_executable()):
        done = subprocess.run([exe], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise ValueError(f"`{exe}` failed ({done.returncode}): {done.stderr.strip()[-300:]}")
        neuron_ls_output, source = done.stdout, f"this host (`{exe}`, /proc)"
    if neuron_ls_output is None:
        return Host(source="this host (/proc; no neuron-ls: cpu seats)", vcpus=vcpus, memory_gib=memory)
    devices, cores, hbm, counted = parse_neuron_ls(neuron_ls_output, lnc)
    return Host(
        source=f"{source or 'neuron-ls output'}: {counted}; vCPUs and memory of this host",
        vcpus=vcpus,
        memory_gib=memory,
        neuron_devices=devices,
        logical_cores_per_device=cores,
        hbm_gb_per_device=hbm,
        lnc=lnc,
        explorer_port_flag=explorer_port_flag(),
        explorer_checked=True,
    )


def documented_host(instance: str, lnc: int = DEFAULT_LNC) -> Host:
    """An instance size from the vendor's figures (DOCUMENTED_INSTANCES), for planning before launch."""
    if instance not in DOCUMENTED_INSTANCES:
        raise ValueError(f"unknown instance {instance!r}: use one of {', '.join(DOCUMENTED_INSTANCES)}")
    spec = DOCUMENTED_INSTANCES[instance]
    return Host(
        source=f"{instance} as documented ({spec['status']}; docs/WORKSHOP_HUB.md), LNC={lnc}, not read from a host",
        vcpus=spec["vcpus"],
        memory_gib=spec["memory_gib"],
        neuron_devices=spec["chips"],
        logical_cores_per_device=TRN2_PHYSICAL_CORES_PER_CHIP // lnc,
        hbm_gb_per_device=TRN2_HBM_GB_PER_CHIP,
        lnc=lnc,
    )


# ---------------------------------------------------------------------------------------------
# Planning


def _spec(first: int, count: int) -> str:
    return str(first) if count == 1 else f"{first}-{first + count - 1}"


def plan_seats(
    host: Host,
    seats: int,
    *,
    cores_per_seat: int = 1,
    memory_per_seat_gib: float = 3.0,
    hub_memory_gib: float = 2.0,
    hub_cpus: int = 1,
    cache_root: str = "/srv/workshop/neff-cache",
    first_explorer_port: int = 3101,
) -> Plan:
    """Divide `host` among `seats`; raise SeatsDoNotFit with the reason and the number that fits.

    Args:
        cores_per_seat: logical NeuronCores per seat (the series needs one).
        memory_per_seat_gib: host memory allowed per seat (server and one kernel at a time).
        hub_memory_gib, hub_cpus: kept for the hub, its proxy, the culler and the system.
        cache_root: each seat's NEFF cache is `<cache_root>/<seat>/neff`: the seat owns `<cache_root>/<seat>`,
            where the series also keeps its record of the cache's debug settings (`neff.series-debug.json`).
        first_explorer_port: seat 1's Explorer UI port; its API port is the next one, and each
            following seat takes the next pair.
    """
    if seats < 1:
        raise SeatsDoNotFit(f"--seats must be at least 1, got {seats}", 0)
    limits = []  # (seats that fit, reason) per resource
    if host.backend == "neuron":
        fit = host.logical_cores // cores_per_seat
        limits.append(
            (
                fit,
                f"NeuronCores: {seats} seats x {cores_per_seat} core(s) need {seats * cores_per_seat} logical cores; "
                f"the host has {host.logical_cores} ({host.neuron_devices} device(s) x {host.logical_cores_per_device}), "
                "and a core serves one process at a time (NEURON_NOTES N27)",
            )
        )
    spare_memory = host.memory_gib - hub_memory_gib
    limits.append(
        (
            max(0, math.floor(spare_memory / memory_per_seat_gib)),
            f"host memory: {seats} seats x {memory_per_seat_gib:g} GiB + {hub_memory_gib:g} GiB for the hub = "
            f"{seats * memory_per_seat_gib + hub_memory_gib:.0f} GiB; the host has {host.memory_gib:.0f} GiB",
        )
    )
    for fit, reason in limits:
        if seats > fit:
            fits = min(f for f, _ in limits)
            raise SeatsDoNotFit(f"{reason}: at most {fits} seat(s) fit", fits)
    spare_cpus = max(1, host.vcpus - hub_cpus)
    threads = max(1, spare_cpus // seats)
    notes = []
    if seats > spare_cpus:
        notes.append(
            f"CPU: {seats} seats share {spare_cpus} spare vCPU(s) at 1 thread each; when more than {spare_cpus} "
            "seat(s) compute at once their timing blocks read BUSY (the series' own check), which is expected here"
        )
    hbm = host.hbm_gb_per_core * cores_per_seat if host.backend == "neuron" else None
    if hbm is not None and hbm <= DEVICE_PROFILE_HBM_GB:
        notes.append(
            f"HBM: {hbm:.0f} GB per seat cannot hold a device profile's ~{DEVICE_PROFILE_HBM_GB:g} GB: system profiles only"
        )
    if host.backend == "neuron" and not host.explorer_checked:
        notes.append(
            "Neuron Explorer: whether `neuron-explorer view` takes a port option is read on the host "
            "(`python -m series_tools.workshop` there, in the DLAMI venv)"
        )
    elif host.backend == "neuron" and not host.explorer_port_flag:
        notes.append(
            "Neuron Explorer: no port option found in `neuron-explorer view --help` here; the seats' port pairs are "
            "reserved, and the room shares one Explorer on 3001/3002 (docs/WORKSHOP_HUB.md, 'Neuron Explorer')"
        )
    planned = tuple(
        Seat(
            name=f"{SEAT_PREFIX}{i + 1:02d}",
            cores=_spec(i * cores_per_seat, cores_per_seat) if host.backend == "neuron" else None,
            threads=threads,
            neff_cache=f"{cache_root.rstrip('/')}/{SEAT_PREFIX}{i + 1:02d}/neff",
            explorer_ui_port=first_explorer_port + 2 * i,
            explorer_api_port=first_explorer_port + 2 * i + 1,
            hbm_gb=hbm,
            hbm_gb_with_device_profile=None if hbm is None else max(0.0, hbm - DEVICE_PROFILE_HBM_GB),
        )
        for i in range(seats)
    )
    return Plan(host, planned, hub_cpus, memory_per_seat_gib, hub_memory_gib, cores_per_seat, tuple(notes))


def seat_table(plan: Plan) -> str:
    """The plan as a Markdown table, headed by where its figures come from."""
    h = plan.host
    lines = [
        f"Host: {h.source}",
        f"  {h.vcpus} vCPUs, {h.memory_gib:.0f} GiB memory"
        + (
            f", {h.neuron_devices} Neuron device(s) x {h.logical_cores_per_device} logical cores, "
            f"{h.hbm_gb_per_device:g} GB HBM per device"
            if h.backend == "neuron"
            else ", no NeuronCores (cpu seats: threads only)"
        ),
        f"  kept for the hub: {plan.hub_cpus} vCPU, {plan.hub_memory_gib:g} GiB; allowed per seat: {plan.memory_per_seat_gib:g} GiB",
        "",
        "| seat | NeuronCore(s) | intra-op threads | NEFF cache | Explorer ports (UI/API) | HBM | HBM with a device profile |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in plan.seats:
        hbm = "-" if s.hbm_gb is None else f"{s.hbm_gb:g} GB"
        hbm_dev = "-" if s.hbm_gb_with_device_profile is None else f"{s.hbm_gb_with_device_profile:g} GB"
        lines.append(
            f"| {s.name} | {s.cores or '- (cpu)'} | {s.threads} | {s.neff_cache} | "
            f"{s.explorer_ui_port}/{s.explorer_api_port} | {hbm} | {hbm_dev} |"
        )
    return "\n".join(lines + [""] + [f"Note: {n}" for n in plan.notes])


# ---------------------------------------------------------------------------------------------
# The hub configuration


@dataclass(frozen=True)
class HubSettings:
    """How the hub runs the plan (workshop/jupyterhub_config.py reads these from workshop.json).

    `spawner`: "local" runs each seat as its own Unix user (LocalProcessSpawner; the users must
    exist, docs/WORKSHOP_HUB.md step 4); "simple" runs every seat as the hub's user with its own
    home folder (SimpleLocalProcessSpawner: the hub test, not a shared room)."""

    ip: str = "127.0.0.1"
    port: int = 8000
    spawner: str = "local"
    python: str = sys.executable  # the series' environment: jupyterhub-singleuser and the kernel run from it
    homes: str = "/home"  # a seat's home is <homes>/<seat> ("simple" only; "local" uses the user's)
    warm_cache: str = ""  # the pre-warmed NEFF cache each seat's cache starts from ("" = start empty)
    notebooks: str = str(REPO_ROOT / "notebooks")  # copied into each new seat's home
    proxy: str = str(REPO_ROOT / "workshop" / "node_modules" / ".bin" / "configurable-http-proxy")
    idle_timeout_s: int = 3600  # jupyterhub-idle-culler stops a seat's server idle this long
    admin: str = "instructor"
    state_dir: str = ""  # the hub's database, cookie secret and logs (default: the output folder)


def write_hub(plan: Plan, out: Path, settings: HubSettings) -> list[Path]:
    """Write the plan and the hub's configuration into `out`; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    kernel_dir = out / "share" / "jupyter" / "kernels" / KERNEL_NAME
    kernel_dir.mkdir(parents=True, exist_ok=True)
    kernel = {
        "argv": [settings.python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": KERNEL_DISPLAY_NAME,
        "language": "python",
        "metadata": {"debugger": True},
    }
    (kernel_dir / "kernel.json").write_text(json.dumps(kernel, indent=1) + "\n")
    hub = {**asdict(settings), "state_dir": settings.state_dir or str(out.resolve())}
    record = {**plan.record(), "hub": hub, "kernel_name": KERNEL_NAME, "jupyter_path": str((out / "share" / "jupyter").resolve())}
    (out / "workshop.json").write_text(json.dumps(record, indent=1) + "\n")
    (out / "seats.md").write_text(seat_table(plan) + "\n")
    shutil.copyfile(HUB_CONFIG_TEMPLATE, out / "jupyterhub_config.py")
    return [out / "workshop.json", out / "seats.md", out / "jupyterhub_config.py", kernel_dir / "kernel.json"]


WARM_CACHE_IN_IMAGE = "/opt/warm-neff-cache"  # where the seat image carries the pre-warmed cache (docs/WORKSHOP_HUB.md)
POD_NEFF_CACHE = "/home/jovyan/neff-cache"


def z2jh_values(
    plan: Plan, instance_type: str, image: str = "<account>.dkr.ecr.<region>.amazonaws.com/trainium-profiling"
) -> dict:
    """Zero to JupyterHub values for the same seats on an EKS cluster of `instance_type` nodes.

    Each pod is one seat: the Neuron device plugin hands it `aws.amazon.com/neuroncore` cores (so
    NEURON_RT_VISIBLE_CORES is not set here), Kubernetes enforces its CPU and memory share, and
    its Explorer ports are its own (a pod has its own network). The rest of the seat's
    environment is the plan's; the NEFF cache is seeded at pod start from the image's warm copy."""
    seat = plan.seats[0]
    env = {k: v for k, v in seat.environment().items() if k in ("OMP_NUM_THREADS", "NEURON_PROFILE")}
    env["TORCH_NEURONX_NEFF_CACHE_DIR"] = POD_NEFF_CACHE
    cores = {"aws.amazon.com/neuroncore": str(plan.cores_per_seat)}
    seed = f"[ -d {POD_NEFF_CACHE} ] || cp -r {WARM_CACHE_IN_IMAGE} {POD_NEFF_CACHE} || mkdir -p {POD_NEFF_CACHE}"
    return {
        "hub": {
            "config": {
                "JupyterHub": {"authenticator_class": "shared-password"},
                "Authenticator": {"allowed_users": [s.name for s in plan.seats]},
                # the password is not kept in this file: helm ... --set hub.config.SharedPasswordAuthenticator.user_password=...
            }
        },
        "singleuser": {
            "image": {"name": image, "tag": "latest"},
            "defaultUrl": "/lab",
            "nodeSelector": {"node.kubernetes.io/instance-type": instance_type},
            "extraTolerations": [{"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"}],
            "extraResource": {"limits": dict(cores), "guarantees": dict(cores)},
            "cpu": {"limit": seat.threads, "guarantee": seat.threads},
            "memory": {"limit": f"{plan.memory_per_seat_gib:g}G", "guarantee": f"{plan.memory_per_seat_gib:g}G"},
            "extraEnv": env,
            "lifecycleHooks": {"postStart": {"exec": {"command": ["sh", "-c", seed]}}},
        },
        "cull": {"enabled": True, "timeout": 3600},
    }


def check_seed_folders(warm_cache: str, notebooks: Path) -> str:
    """The folders a seat is seeded from at its first sign-in, checked before a hub is written, so
    that a typo fails here with its fix instead of at every seat's first sign-in.

    Args:
        warm_cache: the `--warm-cache` folder ("" = none: seats start with an empty cache).
        notebooks: the `--notebooks` folder each seat gets a copy of.

    Returns:
        One line naming the problem and its fix, or "" when both are usable.
    """
    if warm_cache and not Path(warm_cache).is_dir():
        return (
            f"--warm-cache {warm_cache} is not a folder. Fix: pre-warm it first (docs/WORKSHOP_HUB.md step 5), "
            "or leave --warm-cache out to start every seat with an empty cache"
        )
    if not notebooks.is_dir() or not any(notebooks.glob("*.ipynb")):
        return f"--notebooks {notebooks} holds no .ipynb. Fix: `make student` and `--notebooks student`, or the checkout's notebooks/"
    return ""


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(
        prog="python -m series_tools.workshop",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--seats", type=int, required=True, help="how many learners")
    ap.add_argument("--out", type=Path, help="where the plan and hub config go (default: workshop-hub/ in the checkout)")
    ap.add_argument("--instance", choices=sorted(DOCUMENTED_INSTANCES), help="plan from documented figures, not this host")
    ap.add_argument("--neuron-ls", type=Path, help="a saved `neuron-ls` (or `--json-output`) output to plan from")
    ap.add_argument("--cores-per-seat", type=int, default=1)
    ap.add_argument("--memory-per-seat-gib", type=float, default=3.0)
    ap.add_argument("--hub-memory-gib", type=float, default=2.0)
    ap.add_argument("--hub-cpus", type=int, default=1)
    ap.add_argument("--cache-root", default="/srv/workshop/neff-cache")
    ap.add_argument("--warm-cache", default="", help="a pre-warmed NEFF cache each seat's cache is seeded from")
    ap.add_argument(
        "--notebooks",
        type=Path,
        default=REPO_ROOT / "notebooks",
        help="the notebooks each new seat gets a copy of (default: the checkout's, with solutions; "
        "recommended: student/ from `make student`)",
    )
    ap.add_argument("--first-explorer-port", type=int, default=3101)
    ap.add_argument("--spawner", choices=["local", "simple"], default="local")
    ap.add_argument("--homes", default="/home")
    ap.add_argument("--hub-port", type=int, default=8000)
    ap.add_argument("--idle-timeout-s", type=int, default=3600)
    ap.add_argument("--z2jh", type=Path, help="also write Zero to JupyterHub values for these seats (EKS) to this file")
    args = ap.parse_args(argv)
    for flag, value, least, example in (
        ("--seats", args.seats, 1, "1"),
        ("--cores-per-seat", args.cores_per_seat, 1, "1"),
        ("--memory-per-seat-gib", args.memory_per_seat_gib, 0.5, "3"),
        ("--hub-memory-gib", args.hub_memory_gib, 0, "2"),
        ("--hub-cpus", args.hub_cpus, 0, "1"),
    ):
        if value < least:
            print(f"workshop: {flag} must be at least {least}, got {value}. Fix: `{flag} {example}`", file=sys.stderr)
            return 2
    try:
        if args.instance:
            host = documented_host(args.instance)
        else:
            saved = args.neuron_ls.read_text() if args.neuron_ls else None
            host = read_host(saved, source=f"neuron-ls output {args.neuron_ls}" if args.neuron_ls else "")
        plan = plan_seats(
            host,
            args.seats,
            cores_per_seat=args.cores_per_seat,
            memory_per_seat_gib=args.memory_per_seat_gib,
            hub_memory_gib=args.hub_memory_gib,
            hub_cpus=args.hub_cpus,
            cache_root=args.cache_root,
            first_explorer_port=args.first_explorer_port,
        )
    except SeatsDoNotFit as exc:
        fix = f"`--seats {exc.fits}`, or a larger host" if exc.fits >= 1 else "a larger host (this one holds no seat)"
        print(f"workshop: {args.seats} seats do not fit: {exc.reason}. Fix: {fix}", file=sys.stderr)
        return 2
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        print(
            f"workshop: cannot read the host: {exc}. Fix: `--neuron-ls <saved output>` or `--instance trn2.48xlarge`",
            file=sys.stderr,
        )
        return 2
    if not args.instance:  # a hub is written: the folders its seats are seeded from must be there
        problem = check_seed_folders(args.warm_cache, args.notebooks)
        if problem:
            print(f"workshop: {problem}", file=sys.stderr)
            return 2
    print(seat_table(plan))
    if args.z2jh:
        import yaml

        instance = args.instance or "trn2.48xlarge"
        header = f"# Zero to JupyterHub values: {len(plan.seats)} seats planned on {plan.host.source}\n"
        args.z2jh.write_text(header + yaml.safe_dump(z2jh_values(plan, instance), sort_keys=False))
        print(f"\nwrote {args.z2jh}")
    if args.instance:
        if args.out:
            print(
                f"workshop: --out {args.out} ignored: --instance plans from documented figures and writes no hub; run without --instance on the host"
            )
        return 0  # documented figures plan a host to launch; its hub is written on the host itself
    if args.warm_cache and not any(Path(args.warm_cache).iterdir()):
        print(
            f"workshop: warning: --warm-cache {args.warm_cache} is empty: every seat compiles its NEFFs anew (docs/WORKSHOP_HUB.md step 5 fills it)"
        )
    settings = HubSettings(
        port=args.hub_port,
        spawner=args.spawner,
        homes=args.homes,
        warm_cache=args.warm_cache,
        notebooks=str(args.notebooks.resolve()),
        idle_timeout_s=args.idle_timeout_s,
    )
    out = args.out or REPO_ROOT / "workshop-hub"
    written = write_hub(plan, out, settings)
    print(f"\nwrote {', '.join(str(p) for p in written)}")
    print(
        f"start the hub: cd {out} && WORKSHOP_PASSWORD=<8+ characters> WORKSHOP_ADMIN_PASSWORD=<32+ characters, for /hub/admin> "
        f"{Path(settings.python).parent}/jupyterhub   (the room: the systemd unit of docs/WORKSHOP_HUB.md step 8)"
    )
    print(f"seed every seat before class: python -m series_tools.workshop_seed {out}")
    if settings.spawner == "local":
        print(
            "  (as root: each seat runs as its own Unix user seat01, seat02, ...; create them first, docs/WORKSHOP_HUB.md step 4)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
