"""JupyterLab, checked in a real browser: the series' kernel registers, JupyterLab starts on
127.0.0.1 with a token, the notebook list and a notebook open in headless Chromium, the
kernel-check cell runs there and prints its line, and a screenshot is saved.

Needs Debian's chromium and chromium-driver (.ci/run installs them). Without them the test is
skipped locally with the reason, and fails in CI, where a skip would hide a missing install.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from lesson.ranks import free_port

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT_DIR = Path(os.environ.get("SCREENSHOT_DIR", ROOT / "runs" / "test-screenshots"))
LAB_KERNEL_ENCRYPTION = "--KernelManager.transport_encryption=auto"  # the flag `make lab` passes


def test_make_lab_starts_kernels_with_an_encrypted_connection_and_a_fixed_layout():
    makefile = (ROOT / "Makefile").read_text()
    assert LAB_KERNEL_ENCRYPTION in makefile
    assert "echo setarch $$(uname -m) -R) $(VENV)/bin/jupyter lab" in makefile  # as series_tools/execute.py


def browser_or_skip() -> tuple[str, str]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        reason = "Debian's chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {reason}")
        pytest.skip(reason)
    return chromium, driver


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on 127.0.0.1 with a random token, its data dir (kernelspecs) in tmp; one server
    for the module's tests (starting one takes about 6 s)."""
    tmp_path = tmp_path_factory.mktemp("lab")
    env = {
        **os.environ,
        "JUPYTER_DATA_DIR": str(tmp_path / "jupyter-data"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    subprocess.run(
        [
            sys.executable,
            "-m",
            "ipykernel",
            "install",
            "--user",
            "--name",
            "trainium-profiling",
            "--display-name",
            "Python (trainium-profiling)",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    specs = subprocess.run(
        [sys.executable, "-m", "jupyter", "kernelspec", "list"], env=env, capture_output=True, text=True, check=True
    ).stdout
    # serve a copy: JupyterLab autosaves, and the stored notebooks must stay without outputs
    served = tmp_path / "series"
    shutil.copytree(ROOT / "notebooks", served / "notebooks", ignore=shutil.ignore_patterns("runs", ".ipynb_checkpoints"))
    (served / "helpers").symlink_to(ROOT / "helpers")
    port, token = free_port(), secrets.token_hex(16)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ip",
            "127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={served / 'notebooks'}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            LAB_KERNEL_ENCRYPTION,
            *(["--allow-root"] if os.geteuid() == 0 else []),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "lab.log", "w"),
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        server.kill()
        pytest.fail(f"JupyterLab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
    yield {"base": base, "token": token, "specs": specs, "port": port, "served": served, "log": tmp_path / "lab.log"}
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()


def test_lab_requires_token_and_binds_loopback(lab):
    assert "trainium-profiling" in lab["specs"]
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(f"{lab['base']}/api/contents", timeout=5)
    assert err.value.code == 403  # no token, no access
    listing = urllib.request.urlopen(f"{lab['base']}/api/contents?token={lab['token']}", timeout=5).read().decode()
    assert "00_environment_check.ipynb" in listing


def test_notebook_runs_its_first_cells_in_chromium(lab, tmp_path):
    chromium, driver_path = browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
        f"--user-data-dir={tmp_path / 'chrome'}",
    ):
        opts.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        wait = WebDriverWait(browser, 90)
        browser.get(f"{lab['base']}/lab/tree?token={lab['token']}")

        def listed(b):
            return [e.get_attribute("textContent") for e in b.find_elements(By.CSS_SELECTOR, ".jp-DirListing-itemText")]

        wait.until(lambda b: any("00_environment_check" in n for n in listed(b)))
        assert any("06_reading_traces" in n for n in listed(browser))

        browser.get(f"{lab['base']}/lab/tree/00_environment_check.ipynb?token={lab['token']}")
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")))
        from selenium.common.exceptions import StaleElementReferenceException

        for _ in range(20):  # the notebook re-renders once after it loads: click a fresh element
            try:
                browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")[0].click()
                break
            except StaleElementReferenceException:
                time.sleep(0.5)
        actions = webdriver.ActionChains(browser)
        for _ in range(3):  # the intro (markdown), the parameters cell, the kernel-check cell
            actions.key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).pause(0.5)
        actions.perform()

        def outputs(b):
            return " ".join(e.get_attribute("textContent") for e in b.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output"))

        wait.until(lambda b: "Kernel OK" in outputs(b))
        output = outputs(browser)
        # the kernel's connection is encrypted, as `make lab` starts it (series_tools/execute.py says why)
        assert "without encryption" not in lab["log"].read_text()
        assert "torch 2.13" in output or "torch 2.14" in output
        SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        shot = SCREENSHOT_DIR / "jupyterlab-00_environment_check.png"
        browser.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
        print(f"screenshot: {shot}")
    finally:
        browser.quit()
