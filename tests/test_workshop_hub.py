"""The workshop hub for real, on cpu: JupyterHub with three seats from the planner's configuration.

The plan comes from a SYNTHETIC one-device neuron-ls table (tests/data/workshop/README.md), so the
seats get NeuronCore assignments to check; nothing here touches a NeuronCore (the kernels run on
cpu, where torch-neuronx is absent and the series ignores those settings). Each seat signs in
with the shared workshop password through the hub's login form, takes an API token through the
REST API, starts its server, starts a kernel and reports the environment it runs with; notebook
00 runs in one seat's kernel; a browser signs a seat in on the real login page; then the hub is
stopped and every process it started, found by PID, must be gone.

Needs `make test-hub` (JupyterHub from requirements-workshop.txt, configurable-http-proxy from
npm) and, for the browser, Debian's chromium and chromium-driver. Without them the tests skip
locally with the reason, and fail in CI.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.hub

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "workshop"
PROXY = ROOT / "workshop" / "node_modules" / ".bin" / "configurable-http-proxy"
SEATS = ("seat01", "seat02", "seat03")
PASSWORD = "workshop-" + secrets.token_hex(4)
REPORT = """
import json, os, sys
from analysis.contention import spare_cpu_threads
names = ["NEURON_RT_VISIBLE_CORES", "OMP_NUM_THREADS", "TORCH_NEURONX_NEFF_CACHE_DIR", "TORCH_NEURONX_DEBUG_DIR", "NEURON_PROFILE",
         "NEURON_EXPLORER_UI_PORT", "NEURON_EXPLORER_API_PORT", "WORKSHOP_SEAT", "HOME"]
cache = os.environ["TORCH_NEURONX_NEFF_CACHE_DIR"]
print(json.dumps({**{n: os.environ.get(n) for n in names}, "pid": os.getpid(), "python": sys.executable,
                  "threads_helpers_start_takes": spare_cpu_threads(64, os.environ.get("OMP_NUM_THREADS")),
                  "cache_files": sorted(os.listdir(cache)), "cwd": os.getcwd()}))
"""


def missing_or_skip() -> None:
    reasons = []
    try:
        import jupyterhub  # noqa: F401
        import jupyterhub_idle_culler  # noqa: F401
    except ImportError:
        reasons.append("JupyterHub is not installed (make test-hub installs requirements-workshop.txt)")
    if not PROXY.exists():
        reasons.append("configurable-http-proxy is not installed (make test-hub runs npm ci in workshop/)")
    if reasons:
        if os.environ.get("CI"):
            pytest.fail("CI must run the hub test: " + "; ".join(reasons))
        pytest.skip("; ".join(reasons))


def three_free_ports() -> int:
    """A port P with P, P+1 (the proxy's API) and P+2 (the hub) free on 127.0.0.1."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port > 65000:
            continue
        try:
            for p in (port, port + 1, port + 2):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return port
        except OSError:
            continue
    pytest.fail("no three consecutive free ports on 127.0.0.1")


def descendants(pid: int) -> set[int]:
    """Every live process whose parent chain leads to `pid` (read from /proc)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    missing_or_skip()
    import requests

    tmp = tmp_path_factory.mktemp("hub")
    warm = tmp / "warm-cache"
    (warm / "MODULE_warm").mkdir(parents=True)
    (warm / "MODULE_warm" / "model.neff").write_text("a pre-warmed NEFF stand-in\n")
    (tmp / "warm-cache.series-debug.json").write_text(json.dumps({"NEURON_FRAMEWORK_DEBUG": "1"}))
    port = three_free_ports()
    out = tmp / "hub"
    plan = subprocess.run(
        [
            sys.executable, "-m", "series_tools.workshop", "--seats", "3",
            "--neuron-ls", str(DATA / "neuron-ls.trn2.3xlarge.SYNTHETIC.txt"),
            "--spawner", "simple", "--homes", str(tmp / "homes"), "--cache-root", str(tmp / "neff-cache"),
            "--warm-cache", str(warm), "--hub-port", str(port), "--memory-per-seat-gib", "1", "--out", str(out),
        ],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert plan.returncode == 0, plan.stderr
    env = {**os.environ, "WORKSHOP_PASSWORD": PASSWORD}
    env.pop("JUPYTER_PATH", None)
    log = open(tmp / "hub.log", "w")
    started = time.monotonic()
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyterhub"), "-f", str(out / "jupyterhub_config.py")],
        cwd=out, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{base}/hub/api/", timeout=2).status_code == 200:
                break
        except requests.RequestException:
            pass
        if process.poll() is not None:
            break
        time.sleep(0.5)
    else:
        process.kill()
        pytest.fail(f"the hub did not answer within 90 s: {(tmp / 'hub.log').read_text()[-3000:]}")
    if process.poll() is not None:
        pytest.fail(f"the hub exited ({process.returncode}): {(tmp / 'hub.log').read_text()[-3000:]}")
    state = {"base": base, "tmp": tmp, "out": out, "process": process, "log": tmp / "hub.log", "started": started}
    state["plan"] = json.loads((out / "workshop.json").read_text())
    state["seen"] = set()  # every PID the hub started, gathered while it runs
    yield state
    if process.poll() is None:  # a failed test left it running: stop it all the same, by PID
        stop_hub(state)


def sign_in(base: str, user: str, password: str):
    """The hub's login form, as a browser posts it: (session, status, xsrf)."""
    import requests

    session = requests.Session()
    session.get(f"{base}/hub/login", timeout=10)
    xsrf = session.cookies.get("_xsrf")
    reply = session.post(
        f"{base}/hub/login", data={"username": user, "password": password, "_xsrf": xsrf}, allow_redirects=False, timeout=30
    )
    return session, reply.status_code, xsrf


def start_server(hub, user: str) -> str:
    """Sign in, take a token through the REST API, start the seat's server; return the token."""
    session, status, _ = sign_in(hub["base"], user, PASSWORD)
    assert status == 302, f"{user} could not sign in ({status})"
    session.get(f"{hub['base']}/hub/home", timeout=10)  # signed in, the session's XSRF token is a new one
    xsrf = [cookie.value for cookie in session.cookies if cookie.name == "_xsrf"][-1]
    reply = session.post(
        f"{hub['base']}/hub/api/users/{user}/tokens",
        headers={"X-XSRFToken": xsrf},
        json={"note": "hub test", "expires_in": 900},
        timeout=30,
    )
    assert reply.status_code == 201, reply.text
    token = reply.json()["token"]
    api = {"Authorization": f"token {token}"}
    import requests

    reply = requests.post(f"{hub['base']}/hub/api/users/{user}/server", headers=api, timeout=30)
    assert reply.status_code in (201, 202), reply.text
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        model = requests.get(f"{hub['base']}/hub/api/users/{user}", headers=api, timeout=10).json()
        if model.get("servers", {}).get("", {}).get("ready"):
            hub["seen"] |= descendants(hub["process"].pid)
            return token
        time.sleep(0.5)
    pytest.fail(f"{user}'s server was not ready within 120 s: {hub['log'].read_text()[-3000:]}")


def run_in_kernel(base: str, user: str, token: str, code: str, timeout_s: float) -> tuple[str, str]:
    """Start a kernel in the seat's server (its default kernel), run `code`; (kernel name, stdout)."""
    import requests
    import websocket

    api = {"Authorization": f"token {token}"}
    kernel = requests.post(f"{base}/user/{user}/api/kernels", headers=api, json={}, timeout=60).json()
    ws = websocket.create_connection(
        f"{base.replace('http', 'ws')}/user/{user}/api/kernels/{kernel['id']}/channels",
        header=[f"Authorization: token {token}"],
        timeout=timeout_s,
    )
    msg_id = uuid.uuid4().hex
    ws.send(
        json.dumps(
            {
                "header": {
                    "msg_id": msg_id,
                    "username": user,
                    "session": uuid.uuid4().hex,
                    "msg_type": "execute_request",
                    "version": "5.3",
                },
                "parent_header": {},
                "metadata": {},
                "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {}, "allow_stdin": False},
                "channel": "shell",
                "buffers": [],
            }
        )
    )
    stdout, deadline, replied, idle = [], time.monotonic() + timeout_s, False, False
    try:
        while time.monotonic() < deadline:
            msg = json.loads(ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind == "stream":
                stdout.append(msg["content"]["text"])
            elif kind == "error":
                pytest.fail(f"the kernel of {user} raised: {msg['content']['ename']}: {msg['content']['evalue']}")
            elif kind == "execute_reply":
                replied = True
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                idle = True  # iopub's last word on this request; the shell reply may come before or after it
            if replied and idle:
                return kernel["name"], "".join(stdout)
        pytest.fail(f"no reply from {user}'s kernel within {timeout_s} s")
    finally:
        ws.close()


def stop_hub(hub) -> list[int]:
    """SIGTERM the hub (it stops the seats' servers, the culler and the proxy), wait, then find
    every PID it had started; return those still running (killed, by PID, before returning)."""
    process = hub["process"]
    hub["seen"] |= descendants(process.pid)
    proxy_pid = hub["out"] / "jupyterhub-proxy.pid"
    if proxy_pid.exists():
        hub["seen"].add(int(proxy_pid.read_text().strip()))
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(alive(p) for p in hub["seen"]):
        time.sleep(0.5)
    left = sorted(p for p in hub["seen"] if alive(p))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def test_only_the_seats_sign_in_and_only_with_the_workshop_password(hub):
    assert sign_in(hub["base"], "seat02", "not-the-password")[1] == 403
    assert sign_in(hub["base"], "someone-else", PASSWORD)[1] == 403  # no sign-up: the plan's seats only
    assert sign_in(hub["base"], "seat02", PASSWORD)[1] == 302


def test_each_seats_kernel_runs_with_its_planned_core_threads_cache_and_ports(hub):
    import requests

    planned = {s["name"]: s for s in hub["plan"]["seats"]}
    reports = {}
    for user in SEATS:
        token = start_server(hub, user)
        hub.setdefault("tokens", {})[user] = token
        kernel, stdout = run_in_kernel(hub["base"], user, token, REPORT, timeout_s=120)
        assert kernel == "trainium-profiling"  # the series' kernel is the seat's default
        reports[user] = json.loads(stdout.strip().splitlines()[-1])
        listing = requests.get(
            f"{hub['base']}/user/{user}/api/contents/notebooks", headers={"Authorization": f"token {token}"}, timeout=30
        )
        assert "00_environment_check.ipynb" in listing.text  # the server opens on the seat's own copy of the notebooks
        docs = requests.get(
            f"{hub['base']}/user/{user}/api/contents/docs", headers={"Authorization": f"token {token}"}, timeout=30
        )
        assert "CHEATSHEET.md" in docs.text  # beside them, so the notebooks' ../docs/ links open
        hub["seen"] |= descendants(hub["process"].pid)
    for user, seen in reports.items():
        want = planned[user]
        assert seen["WORKSHOP_SEAT"] == user
        assert seen["NEURON_RT_VISIBLE_CORES"] == want["cores"]
        assert seen["OMP_NUM_THREADS"] == str(want["threads"])
        assert seen["threads_helpers_start_takes"] == want["threads"]  # what helpers.start sets torch to
        assert seen["TORCH_NEURONX_NEFF_CACHE_DIR"] == want["neff_cache"]
        assert seen["TORCH_NEURONX_DEBUG_DIR"] == want["environment"]["TORCH_NEURONX_DEBUG_DIR"]
        assert seen["cache_files"] == ["MODULE_warm"]  # seeded from the pre-warmed cache
        assert Path(f"{want['neff_cache']}.series-debug.json").exists()
        assert seen["NEURON_PROFILE"] == "system"
        assert (seen["NEURON_EXPLORER_UI_PORT"], seen["NEURON_EXPLORER_API_PORT"]) == (
            str(want["explorer_ui_port"]),
            str(want["explorer_api_port"]),
        )
        assert seen["HOME"] == str(hub["tmp"] / "homes" / user)
        assert seen["python"] == sys.executable
    for name in (
        "NEURON_RT_VISIBLE_CORES",
        "TORCH_NEURONX_NEFF_CACHE_DIR",
        "TORCH_NEURONX_DEBUG_DIR",
        "NEURON_EXPLORER_UI_PORT",
        "pid",
    ):
        assert len({r[name] for r in reports.values()}) == 3, f"{name} is shared between seats"
    print("\n".join(f"{u}: {json.dumps(r)}" for u, r in reports.items()))


def test_notebook_00_runs_in_a_seat(hub):
    token = hub.get("tokens", {}).get("seat01")
    if token is None:
        pytest.fail("seat01 has no server: the environment test failed first")
    executed = hub["tmp"] / "seat01-00.ipynb"
    code = (
        "import os, subprocess, sys\n"
        "os.chdir(os.path.expanduser('~/trainium-profiling/notebooks'))  # where JupyterLab starts a notebook's kernel\n"
        "done = subprocess.run([sys.executable, '-m', 'papermill', '00_environment_check.ipynb', "
        f"{str(executed)!r}, '-p', 'BACKEND', 'cpu', '-p', 'OUT_DIR', {str(hub['tmp'] / 'seat01-runs')!r}], "
        "capture_output=True, text=True, timeout=400)\n"
        "print(done.stderr[-1500:])\n"
        "print('papermill exit', done.returncode)\n"
    )
    _, stdout = run_in_kernel(hub["base"], "seat01", token, code, timeout_s=420)
    assert stdout.strip().endswith("papermill exit 0"), stdout
    notebook = json.loads(executed.read_text())
    errors = [o for cell in notebook["cells"] for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


def test_a_seat_signs_in_on_the_real_login_page_in_chromium(hub, tmp_path):
    from test_jupyterlab import SCREENSHOT_DIR, browser_or_skip

    chromium, driver_path = browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1400,1000", f"--user-data-dir={tmp_path / 'chrome'}"):  # fmt: skip
        opts.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        wait = WebDriverWait(browser, 90)
        browser.get(f"{hub['base']}/hub/login")
        wait.until(lambda b: b.find_elements(By.ID, "username_input"))
        browser.find_element(By.ID, "username_input").send_keys("seat03")
        browser.find_element(By.ID, "password_input").send_keys(PASSWORD)
        browser.find_element(By.ID, "login_submit").click()
        wait.until(lambda b: "/user/seat03/lab" in b.current_url)  # seat03's server (already started) in JupyterLab

        def notebook_00_shown(b):
            items = b.find_elements(By.CSS_SELECTOR, ".jp-DirListing-itemText")
            return any("00_environment_check" in e.get_attribute("textContent") and e.is_displayed() for e in items)

        wait.until(notebook_00_shown)  # the seat's own copy of the notebooks, in its file browser
        SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(SCREENSHOT_DIR / "workshop-hub-seat03.png"))
    finally:
        browser.quit()


def test_stopping_the_hub_leaves_nothing_running(hub):
    servers = len(hub["seen"])
    left = stop_hub(hub)
    print(f"hub up and tested in {time.monotonic() - hub['started']:.0f} s; {servers} processes it started")
    assert servers >= 5  # the proxy, the culler, and a server and a kernel per seat at least
    assert not left, f"still running after the hub stopped (killed now): {left}"
