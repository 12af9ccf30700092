"""The host as /proc and /sys describe it (Linux; None elsewhere): its CPU, its free memory, and
what it does to a measurement that is not in the code: whether this process's address layout is
randomized, and whether the virtual machine hands free memory back to its host. The environment
record (helpers.environment) writes them beside every result; notebooks 00 and 02 explain the last
two. Standard library only: they are read before torch loads.
"""

from __future__ import annotations

import platform
from pathlib import Path


def read_sys_text(path: str) -> str | None:
    """A /proc or /sys file's text, stripped; None where it cannot be read."""
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def host_memory_available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux); None elsewhere."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def cpu_model_name() -> str:
    """The CPU's marketing name from /proc/cpuinfo (Linux), else the architecture."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


ADDR_NO_RANDOMIZE = 0x0040000  # personality(2) flag: this process's address layout is not randomized


def address_layout() -> str | None:
    """ "fixed" where this process runs without address-space randomization (started under
    `setarch -R`, as series_tools.execute starts every kernel, or ASLR off machine-wide),
    "randomized" otherwise; None off Linux. A few-microsecond call's time depends on where its
    code and data land (series_tools/execute.py gives the measurement), so runs compare best
    when both say "fixed"."""
    personality = read_sys_text("/proc/self/personality")
    if personality is None:
        return None
    if int(personality, 16) & ADDR_NO_RANDOMIZE or read_sys_text("/proc/sys/kernel/randomize_va_space") == "0":
        return "fixed"
    return "randomized"


VIRTIO_BALLOON_DEVICE = "0x0005"
VIRTIO_BALLOON_F_REPORTING = 5  # feature bit: the guest reports free pages, and the host takes them back


def free_page_reporting_kib(sys_root: Path = Path("/sys")) -> int | None:
    """The smallest free block (KiB) this virtual machine hands back to its host; None where it
    hands back none (no balloon device with free page reporting, or not a Linux VM).

    The host discards what is reported; when the guest reuses that memory, the host faults it back
    in, and the guest's page faults take longer. Measured on the project's 2-core CI VM (2 MiB
    blocks reported): the 8192x4096 naive RMSNorm took 1.5-4.8x its median in 6 of 80 calls, twice,
    with reporting on, and in none of 80, twice, with reporting held off (system time rose, the
    number of page faults did not)."""
    for device in sorted((sys_root / "bus/virtio/devices").glob("*")):
        if read_sys_text(str(device / "device")) != VIRTIO_BALLOON_DEVICE:
            continue
        features = read_sys_text(str(device / "features")) or ""
        if features[VIRTIO_BALLOON_F_REPORTING : VIRTIO_BALLOON_F_REPORTING + 1] != "1":
            return None
        order = read_sys_text(str(sys_root / "module/page_reporting/parameters/page_reporting_order"))
        # without the parameter: the kernel's default, pageblock order (2 MiB with 4 KiB pages)
        return 4 << int(order) if order and order.isdigit() else 2048
    return None
