# JupyterHub configuration for a workshop on one host, driven by the seat plan beside it.
#
# `python -m series_tools.workshop --seats N --out DIR` (make workshop SEATS=N) copies this file into
# DIR with the plan, workshop.json; start the hub in DIR with the shared workshop password in the
# environment:
#
#     cd DIR && WORKSHOP_PASSWORD=<8+ characters> <series venv>/bin/jupyterhub
#
# What each seat gets (docs/WORKSHOP_HUB.md says why): its own Unix user or home folder, its own
# NeuronCore(s), intra-op threads, NEFF cache (seeded from the pre-warmed one), Explorer ports, and
# the series' kernel; sign-in is the plan's seat names with one shared password (no sign-up), and
# jupyterhub-idle-culler stops servers idle longer than the plan's timeout.
# ruff: noqa: F821 (`c` is the configuration object JupyterHub passes in)

import json
import os
import pwd
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLAN = json.loads((HERE / "workshop.json").read_text())
HUB = PLAN["hub"]
SEATS = {seat["name"]: seat for seat in PLAN["seats"]}
STATE = Path(HUB["state_dir"])
PYTHON = HUB["python"]

# --- where the hub listens and keeps its state: loopback only; TLS and a public address are the
# reverse proxy's job in front of it (docs/WORKSHOP_HUB.md, step 6)
c.JupyterHub.ip = HUB["ip"]
c.JupyterHub.port = HUB["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = HUB["port"] + 2
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{HUB['port'] + 1}"
c.ConfigurableHTTPProxy.command = [HUB["proxy"]]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every seat's server

# --- sign-in: the seat names only, one shared workshop password, no sign-up
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = os.environ.get("WORKSHOP_PASSWORD", "")
c.Authenticator.allowed_users = set(SEATS)
if os.environ.get("WORKSHOP_ADMIN_PASSWORD"):  # 32+ characters; the instructor's admin page
    c.Authenticator.admin_users = {HUB["admin"]}
    c.SharedPasswordAuthenticator.admin_password = os.environ["WORKSHOP_ADMIN_PASSWORD"]

# --- the seats' servers: local processes on this host
if HUB["spawner"] == "simple":  # every seat as the hub's user, each in its own home folder (the hub test)
    c.JupyterHub.spawner_class = "simple"
    c.SimpleLocalProcessSpawner.home_dir_template = str(Path(HUB["homes"]) / "{username}")
else:  # each seat as its own Unix user (created in docs/WORKSHOP_HUB.md, step 4)
    c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [PYTHON, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~/trainium-profiling"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.args = [
    f"--MultiKernelManager.default_kernel_name={PLAN['kernel_name']}",
    "--KernelManager.transport_encryption=auto",  # as `make lab` (series_tools/execute.py says why)
    "--LabApp.news_url=None",  # no news pop-up, no calls out of the room
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    *(["--allow-root"] if os.geteuid() == 0 and HUB["spawner"] == "simple" else []),
]


def _owner(username):
    """(uid, gid, home) of a seat: its Unix user, or the hub's user and the planned home folder."""
    if HUB["spawner"] == "simple":
        return os.getuid(), os.getgid(), Path(HUB["homes"]) / username
    entry = pwd.getpwnam(username)
    return entry.pw_uid, entry.pw_gid, Path(entry.pw_dir)


def _chown_tree(path, uid, gid):
    if os.geteuid() != 0:
        return
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.chown(name, uid, gid)


def prepare_seat(spawner):
    """Before a seat's server starts: its environment from the plan, its own copy of the notebooks
    (learners edit and save them; the series' packages stay installed once, read-only), and its
    NEFF cache, seeded from the pre-warmed cache the first time."""
    seat = SEATS[spawner.user.name]
    uid, gid, home = _owner(spawner.user.name)
    series = home / "trainium-profiling"
    if not series.exists():
        home.mkdir(parents=True, exist_ok=True)
        shutil.copytree(HUB["notebooks"], series, ignore=shutil.ignore_patterns("runs", ".ipynb_checkpoints"))
        _chown_tree(home, uid, gid)
    cache = Path(seat["neff_cache"])  # <cache root>/<seat>/neff; the seat owns <cache root>/<seat>
    if not cache.exists():
        warm = Path(HUB["warm_cache"]) if HUB["warm_cache"] else None
        cache.parent.mkdir(parents=True, exist_ok=True)
        if warm and warm.is_dir():
            shutil.copytree(warm, cache)
            record = Path(f"{warm}.series-debug.json")  # the debug settings the warm NEFFs were compiled with
            if record.exists():
                shutil.copyfile(record, f"{cache}.series-debug.json")
        else:
            cache.mkdir()
        _chown_tree(cache.parent, uid, gid)
    spawner.environment.update(seat["environment"])
    spawner.environment["JUPYTER_PATH"] = PLAN["jupyter_path"]  # the series' kernel
    spawner.environment["PATH"] = f"{Path(PYTHON).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"


c.Spawner.pre_spawn_hook = prepare_seat

# --- idle culling: a seat's server idle this long is stopped, freeing its core and memory
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "command": [PYTHON, "-m", "jupyterhub_idle_culler", f"--timeout={HUB['idle_timeout_s']}"],
    }
]
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }
]
