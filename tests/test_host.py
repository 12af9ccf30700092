"""analysis.host: what the machine does to a measurement, read from /proc and /sys (synthetic
sysfs trees stand in for a virtual machine's balloon device)."""

import pytest

from analysis.host import address_layout, cpu_model_name, free_page_reporting_kib
from helpers.environment import host_record


def _synthetic_balloon(root, features: str, order: str | None):
    dev = root / "bus/virtio/devices/virtio0"
    dev.mkdir(parents=True)
    (dev / "device").write_text("0x0005\n")
    (dev / "features").write_text(features + "\n")
    if order is not None:
        params = root / "module/page_reporting/parameters"
        params.mkdir(parents=True)
        (params / "page_reporting_order").write_text(order + "\n")
    return root


@pytest.mark.parametrize(
    "features, order, expected",
    [
        ("0110010" + "0" * 57, "9", 2048),  # F_REPORTING (bit 5) negotiated, 2 MiB blocks
        ("0110010" + "0" * 57, "10", 4096),
        ("0110010" + "0" * 57, None, 2048),  # no parameter: the kernel's default order
        ("0110000" + "0" * 57, "9", None),  # a balloon without free page reporting
    ],
)
def test_free_page_reporting_is_read_from_a_synthetic_sysfs(tmp_path, features, order, expected):
    assert free_page_reporting_kib(_synthetic_balloon(tmp_path, features, order)) == expected


def test_no_virtio_devices_means_no_free_page_reporting(tmp_path):
    assert free_page_reporting_kib(tmp_path) is None
    assert "free_page_reporting_kib" in host_record()


def test_address_layout_is_read_for_this_process():
    assert address_layout() in ("fixed", "randomized", None)
    assert host_record()["address_layout"] == address_layout()


def test_the_cpu_is_named():
    assert isinstance(cpu_model_name(), str) and cpu_model_name().strip()


def test_the_record_names_the_cxx_compiler_inductor_needs_on_cpu(monkeypatch):
    """A seat without a C++ compiler fails at 04's first compile: 00's record says so first."""
    from helpers.environment import cxx_compiler, host_record

    assert host_record()["cxx_compiler"] == cxx_compiler()
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert cxx_compiler().startswith("none found: install g++")
