# JupyterHub configuration for a workshop on one host, driven by the seat plan beside it.
#
# `python -m series_tools.workshop --seats N --out DIR` (make workshop SEATS=N) copies this file into
# DIR with the plan, workshop.json; start the hub in DIR with the shared workshop password in the
# environment:
#
#     cd DIR && WORKSHOP_PASSWORD=<8+ characters> WORKSHOP_ADMIN_PASSWORD=<32+ characters> <series venv>/bin/jupyterhub
#
# (the room's hub runs as a systemd unit instead, docs/WORKSHOP_HUB.md step 8; the admin password is optional,
# without it no one has the admin page)
#
# What each seat gets (docs/WORKSHOP_HUB.md says why): its own Unix user or home folder, its own
# NeuronCore(s), intra-op threads, NEFF cache (seeded from the pre-warmed one), Explorer ports, and
# the series' kernel; sign-in is the plan's seat names with one shared password (no sign-up), and
# jupyterhub-idle-culler stops servers idle longer than the plan's timeout.
# ruff: noqa: F821 (`c` is the configuration object JupyterHub passes in)

import json
import os
from pathlib import Path

from series_tools.workshop_seed import seed_seat

HERE = Path(__file__).resolve().parent
PLAN = json.loads((HERE / "workshop.json").read_text())
HUB = PLAN["hub"]
SEATS = {seat["name"]: seat for seat in PLAN["seats"]}
STATE = Path(HUB["state_dir"])
PYTHON = HUB["python"]
NEURON_TOOLS = "/opt/aws/neuron/bin"  # neuron-ls and neuron-explorer on the DLAMI (NEURON_NOTES N32)

# --- where the hub listens and keeps its state: loopback only; TLS and a public address are the
# reverse proxy's job in front of it (docs/WORKSHOP_HUB.md, step 8)
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
c.Spawner.default_url = "/lab/tree/notebooks"  # the file browser opens on the notebooks
c.Spawner.notebook_dir = "~/trainium-profiling"  # notebooks/ and docs/, as in the repository
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.args = [
    f"--MultiKernelManager.default_kernel_name={PLAN['kernel_name']}",
    "--KernelManager.transport_encryption=auto",  # as `make lab` (series_tools/execute.py says why)
    "--LabApp.news_url=None",  # no news pop-up, no calls out of the room
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    *(["--allow-root"] if os.geteuid() == 0 and HUB["spawner"] == "simple" else []),
]


def prepare_seat(spawner):
    """Before a seat's server starts: its own copy of the notebooks and docs (learners edit and save
    them; the series' packages stay installed once, read-only) and its NEFF cache seeded from the
    pre-warmed one, unless `python -m series_tools.workshop_seed` did so before class; then its
    environment from the plan. A user with no seat (the instructor) is refused with the fix."""
    seed_seat(PLAN, spawner.user.name)  # NotASeat for the instructor: "browse to /hub/admin"
    seat = SEATS[spawner.user.name]
    spawner.environment.update(seat["environment"])
    spawner.environment["JUPYTER_PATH"] = PLAN["jupyter_path"]  # the series' kernel
    # the hub's PATH (systemd's, without /opt/aws/neuron/bin), the venv's bin and the Neuron tools' bin
    path = os.environ.get("PATH", "/usr/bin:/bin")
    spawner.environment["PATH"] = ":".join(
        [str(Path(PYTHON).parent), path, *([NEURON_TOOLS] if NEURON_TOOLS not in path else [])]
    )


def landing_page(handler):
    """Where a signed-in user lands: a seat on its server (spawned if needed), the instructor,
    who has no seat, on the admin page (every seat, whether its server runs, stop buttons)."""
    user = handler.current_user
    if user is None:
        return handler.get_login_url()
    return handler.base_url + ("hub/spawn" if user.name in SEATS else "hub/admin")


c.JupyterHub.default_url = landing_page
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
