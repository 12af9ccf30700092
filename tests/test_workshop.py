"""The workshop seat planner (series_tools/workshop.py): the host read, the seat table, the
refusals, and the hub configuration it writes. Fast: no hub starts here (tests/test_workshop_hub.py
starts one). Neuron hosts are planned from SYNTHETIC neuron-ls outputs (tests/data/workshop/README.md)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from conftest import fake_tool
from series_tools import workshop
from series_tools.workshop import Host, SeatsDoNotFit, documented_host, parse_neuron_ls, plan_seats

DATA = Path(__file__).parent / "data" / "workshop"
ROOT = Path(__file__).resolve().parent.parent


def neuron_host(name: str, vcpus: int = 192, memory_gib: float = 2048) -> Host:
    devices, cores, hbm, counted = parse_neuron_ls((DATA / name).read_text())
    return Host(f"SYNTHETIC {name}: {counted}", vcpus, memory_gib, devices, cores, hbm, lnc=2)


def test_the_documented_neuron_ls_table_is_read_by_its_column_names():
    assert parse_neuron_ls((DATA / "neuron-ls.trn2.48xlarge.SYNTHETIC.txt").read_text()) == (16, 4, 96.0, "table LOGICAL NC")
    assert parse_neuron_ls((DATA / "neuron-ls.trn2.3xlarge.SYNTHETIC.txt").read_text())[:3] == (1, 4, 96.0)


def test_the_json_output_counts_a_trainium2s_eight_physical_cores_as_logical_ones_by_the_lnc():
    trn1 = parse_neuron_ls((DATA / "neuron-ls-json.trn1.2xlarge.txt").read_text())
    assert trn1 == (1, 2, 32.0, "JSON nc_count 2 taken as logical")
    trn2 = json.dumps([{"nc_count": 8, "memory_size": 96 * 2**30}] * 2)
    assert parse_neuron_ls(trn2, lnc=2)[:3] == (2, 4, 96.0)
    assert parse_neuron_ls(trn2, lnc=1)[:3] == (2, 8, 96.0)


@pytest.mark.parametrize("output", ["", "[]", "no devices found", "| A | B |\n| C | D |\n| 0 | 1 |"])
def test_an_unreadable_neuron_ls_output_is_an_error_not_zero_cores(output):
    with pytest.raises((ValueError, KeyError)):
        parse_neuron_ls(output)


def test_twenty_seats_on_a_trn2_48xlarge_each_get_their_own_core_cache_and_ports_and_a_ninth_of_the_vcpus():
    plan = plan_seats(neuron_host("neuron-ls.trn2.48xlarge.SYNTHETIC.txt"), 20)
    cores = [s.cores for s in plan.seats]
    assert cores == [str(i) for i in range(20)]
    assert len({s.neff_cache for s in plan.seats}) == 20
    ports = [p for s in plan.seats for p in (s.explorer_ui_port, s.explorer_api_port)]
    assert len(set(ports)) == 40 and not {3001, 3002} & set(ports)  # the instructor's Explorer keeps the defaults
    assert {s.threads for s in plan.seats} == {(192 - 1) // 20}
    assert sum(s.threads for s in plan.seats) <= 192 - plan.hub_cpus  # no oversubscription
    assert {(s.hbm_gb, s.hbm_gb_with_device_profile) for s in plan.seats} == {(24.0, 19.0)}
    env = plan.seats[3].environment()
    assert env["NEURON_RT_VISIBLE_CORES"] == "3" and env["OMP_NUM_THREADS"] == "9" and env["NEURON_PROFILE"] == "system"
    # TorchNeuron's compilation folder: per seat, in the folder the seat owns, never the shared /tmp default (N43)
    debug_dirs = [s.environment()["TORCH_NEURONX_DEBUG_DIR"] for s in plan.seats]
    assert len(set(debug_dirs)) == 20 and not any(d.startswith("/tmp") for d in debug_dirs)
    assert env["TORCH_NEURONX_DEBUG_DIR"] == "/srv/workshop/neff-cache/seat04/neuron_backend"
    assert Path(env["TORCH_NEURONX_DEBUG_DIR"]).parent == Path(env["TORCH_NEURONX_NEFF_CACHE_DIR"]).parent


def test_two_cores_per_seat_are_contiguous_ranges():
    plan = plan_seats(neuron_host("neuron-ls.trn2.48xlarge.SYNTHETIC.txt"), 3, cores_per_seat=2)
    assert [s.cores for s in plan.seats] == ["0-1", "2-3", "4-5"]
    assert plan.seats[0].hbm_gb == 48.0


def test_more_seats_than_neuroncores_is_refused_with_the_number_that_fits():
    host = neuron_host("neuron-ls.trn2.3xlarge.SYNTHETIC.txt", vcpus=12, memory_gib=128)
    with pytest.raises(SeatsDoNotFit) as refused:
        plan_seats(host, 20)
    assert refused.value.fits == 4
    assert "NeuronCores" in refused.value.reason and "20 logical cores" in refused.value.reason
    assert len(plan_seats(host, 4).seats) == 4


def test_the_fitting_number_is_the_smallest_over_every_resource():
    host = neuron_host("neuron-ls.trn2.48xlarge.SYNTHETIC.txt", vcpus=192, memory_gib=20)  # 64 cores, 6 seats of memory
    with pytest.raises(SeatsDoNotFit) as refused:
        plan_seats(host, 10)
    assert refused.value.fits == 6 and "host memory" in refused.value.reason


def test_cpu_seats_get_threads_only_and_say_when_they_share_vcpus():
    plan = plan_seats(Host("test", vcpus=2, memory_gib=23), 3)
    assert [s.cores for s in plan.seats] == [None] * 3
    assert "NEURON_RT_VISIBLE_CORES" not in plan.seats[0].environment()
    assert {s.threads for s in plan.seats} == {1}
    assert any("share 1 spare vCPU" in n for n in plan.notes)
    roomy = plan_seats(Host("test", vcpus=64, memory_gib=256), 3)
    assert {s.threads for s in roomy.seats} == {21} and not roomy.notes


def test_a_seat_whose_hbm_cannot_hold_a_device_profile_is_told_to_use_the_system_profile():
    host = Host("test", vcpus=16, memory_gib=64, neuron_devices=1, logical_cores_per_device=8, hbm_gb_per_device=32)
    plan = plan_seats(host, 8)
    assert plan.seats[0].hbm_gb_with_device_profile == 0.0
    assert any("system profiles only" in n for n in plan.notes)


def test_documented_instances():
    big = documented_host("trn2.48xlarge")
    assert (big.logical_cores, big.vcpus, big.hbm_gb_per_core) == (64, 192, 24.0)
    assert documented_host("trn2.48xlarge", lnc=1).logical_cores == 128
    assert documented_host("trn2.3xlarge").logical_cores == 4
    assert "UNVERIFIED" in documented_host("trn2.3xlarge").source


def test_the_command_refuses_too_many_seats_with_one_line_and_the_fix(capsys, tmp_path):
    rc = workshop.main(["--seats", "20", "--instance", "trn2.3xlarge"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert "at most 4 seat(s) fit" in err and "`--seats 4`" in err


def test_the_command_writes_the_plan_the_kernel_and_a_hub_config_that_reads_it(tmp_path, capsys):
    out = tmp_path / "hub"
    rc = workshop.main(["--seats", "3", "--neuron-ls", str(DATA / "neuron-ls.trn2.3xlarge.SYNTHETIC.txt"), "--out", str(out)])
    assert rc == 0
    record = json.loads((out / "workshop.json").read_text())
    assert [s["environment"]["NEURON_RT_VISIBLE_CORES"] for s in record["seats"]] == ["0", "1", "2"]
    assert "SYNTHETIC" in record["host"]["source"]
    kernel = json.loads((out / "share" / "jupyter" / "kernels" / "trainium-profiling" / "kernel.json").read_text())
    assert kernel["display_name"] == "Python (trainium-profiling)"
    assert "| seat03 | 2 |" in (out / "seats.md").read_text()
    # the hub configuration runs against the plan: executed with a stand-in for JupyterHub's `c`
    config = _run_config(out / "jupyterhub_config.py", {"WORKSHOP_PASSWORD": "a-workshop-password"})
    assert config["Authenticator"]["allowed_users"] == {"seat01", "seat02", "seat03"}
    assert config["JupyterHub"]["authenticator_class"] == "shared-password"
    assert config["JupyterHub"]["ip"] == "127.0.0.1"
    assert config["JupyterHub"]["services"][0]["name"] == "idle-culler"


def test_the_hub_config_template_parses():
    ast.parse((ROOT / "workshop" / "jupyterhub_config.py").read_text())


def _run_config(path: Path, env: dict[str, str]) -> dict:
    """Execute a config file as traitlets does (with `c` and `__file__`), into nested dicts."""
    import os
    from collections import defaultdict

    class Section(defaultdict):
        def __getattr__(self, name):
            return self[name]

        def __setattr__(self, name, value):
            self[name] = value

    c = defaultdict(lambda: Section(lambda: None))
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        exec(compile(path.read_text(), str(path), "exec"), {"c": _Attr(c), "__file__": str(path)})
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return c


class _Attr:
    def __init__(self, sections):
        object.__setattr__(self, "_sections", sections)

    def __getattr__(self, name):
        return self._sections[name]


def test_the_committed_zero_to_jupyterhub_values_are_the_planners_for_20_seats_on_a_trn2_48xlarge(tmp_path, capsys):
    """Linted as YAML and compared with the plan: the chart's own schema (values.schema.json) is
    not installable here (no helm; not on PyPI or npm), docs/WORKSHOP_HUB.md says so."""
    import yaml

    fresh = tmp_path / "values.yaml"
    assert workshop.main(["--seats", "20", "--instance", "trn2.48xlarge", "--z2jh", str(fresh)]) == 0
    committed = ROOT / "workshop" / "z2jh-values.trn2.48xlarge.yaml"
    assert committed.read_text() == fresh.read_text(), (
        "regenerate: python -m series_tools.workshop --seats 20 --instance trn2.48xlarge --z2jh workshop/z2jh-values.trn2.48xlarge.yaml"
    )
    values = yaml.safe_load(committed.read_text())
    seat = plan_seats(documented_host("trn2.48xlarge"), 20).seats[0]
    user = values["singleuser"]
    assert user["extraResource"]["limits"] == {"aws.amazon.com/neuroncore": "1"} == user["extraResource"]["guarantees"]
    assert user["nodeSelector"] == {"node.kubernetes.io/instance-type": "trn2.48xlarge"}
    assert user["extraTolerations"][0]["key"] == "aws.amazon.com/neuron"
    assert user["extraEnv"]["OMP_NUM_THREADS"] == str(seat.threads) == str(user["cpu"]["limit"])
    assert user["extraEnv"]["NEURON_PROFILE"] == "system"
    assert "NEURON_RT_VISIBLE_CORES" not in user["extraEnv"]  # the device plugin allocates the pod's cores
    assert values["hub"]["config"]["Authenticator"]["allowed_users"] == [f"seat{i:02d}" for i in range(1, 21)]
    assert values["cull"]["enabled"] is True
    assert "user_password" not in committed.read_text()  # the password is set at install, never kept in the file


def test_out_with_instance_says_it_is_ignored(tmp_path, capsys):
    out = tmp_path / "hub"
    assert workshop.main(["--seats", "4", "--instance", "trn2.3xlarge", "--out", str(out)]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if "ignored" in line]
    assert len(said) == 1 and "--out" in said[0] and not out.exists()


def test_a_missing_warm_cache_is_refused_and_an_empty_one_warned(tmp_path, capsys):
    saved = ["--seats", "2", "--neuron-ls", str(DATA / "neuron-ls.trn2.3xlarge.SYNTHETIC.txt")]
    rc = workshop.main([*saved, "--out", str(tmp_path / "a"), "--warm-cache", str(tmp_path / "missing")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "not a folder" in err and "Fix:" in err
    assert not (tmp_path / "a").exists()
    (tmp_path / "empty").mkdir()
    assert workshop.main([*saved, "--out", str(tmp_path / "b"), "--warm-cache", str(tmp_path / "empty")]) == 0
    assert "is empty" in capsys.readouterr().out


def test_notebooks_choose_what_each_seat_copies(tmp_path, capsys):
    saved = ["--seats", "2", "--neuron-ls", str(DATA / "neuron-ls.trn2.3xlarge.SYNTHETIC.txt")]
    (tmp_path / "none").mkdir()
    assert workshop.main([*saved, "--out", str(tmp_path / "a"), "--notebooks", str(tmp_path / "none")]) == 2
    assert "make student" in capsys.readouterr().err
    student = tmp_path / "student"
    student.mkdir()
    (student / "00_environment_check.ipynb").write_text("{}")
    assert workshop.main([*saved, "--out", str(tmp_path / "b"), "--notebooks", str(student)]) == 0
    record = json.loads((tmp_path / "b" / "workshop.json").read_text())
    assert record["hub"]["notebooks"] == str(student)


def _simple_hub(tmp_path: Path, capsys) -> Path:
    """A three-seat hub whose seats run as this user in tmp homes, seeded from a warm cache with its debug record."""
    warm = tmp_path / "warm"
    (warm / "MODULE_x").mkdir(parents=True)
    (warm / "MODULE_x" / "model.neff").write_text("neff")
    (tmp_path / "warm.series-debug.json").write_text("{}")
    out = tmp_path / "hub"
    args = ["--seats", "3", "--neuron-ls", str(DATA / "neuron-ls.trn2.3xlarge.SYNTHETIC.txt"), "--out", str(out)]
    args += ["--spawner", "simple", "--homes", str(tmp_path / "homes"), "--cache-root", str(tmp_path / "caches")]
    assert workshop.main([*args, "--warm-cache", str(warm)]) == 0
    capsys.readouterr()
    return out


class _Spawner:
    def __init__(self, name):
        self.user = type("User", (), {"name": name})()
        self.environment = {}


def test_the_instructor_lands_on_the_admin_page_and_is_refused_a_server_with_the_fix(tmp_path, capsys):
    out = _simple_hub(tmp_path, capsys)
    config = _run_config(out / "jupyterhub_config.py", {"WORKSHOP_PASSWORD": "a-workshop-password"})
    landing = config["JupyterHub"]["default_url"]

    class Handler:
        base_url = "/"

        def __init__(self, name):
            self.current_user = type("User", (), {"name": name})() if name else None

        def get_login_url(self):
            return "/hub/login"

    assert landing(Handler("instructor")) == "/hub/admin"
    assert landing(Handler("seat02")) == "/hub/spawn"
    assert landing(Handler(None)) == "/hub/login"
    with pytest.raises(KeyError, match="/hub/admin"):
        config["Spawner"]["pre_spawn_hook"](_Spawner("instructor"))
    assert not (tmp_path / "homes" / "instructor").exists()  # nothing made for a name outside the plan


def test_a_seats_first_start_copies_notebooks_docs_and_the_warm_cache_and_finds_neuron_tools(tmp_path, capsys, monkeypatch):
    out = _simple_hub(tmp_path, capsys)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # systemd's PATH: no /opt/aws/neuron/bin
    config = _run_config(out / "jupyterhub_config.py", {"WORKSHOP_PASSWORD": "a-workshop-password"})
    spawner = _Spawner("seat02")
    config["Spawner"]["pre_spawn_hook"](spawner)
    series = tmp_path / "homes" / "seat02" / "trainium-profiling"
    assert (series / "notebooks" / "00_environment_check.ipynb").exists()
    assert (series / "notebooks" / "../docs/CHEATSHEET.md").resolve().exists()  # the notebooks' links resolve
    cache = Path(spawner.environment["TORCH_NEURONX_NEFF_CACHE_DIR"])
    assert cache == tmp_path / "caches" / "seat02" / "neff" and (cache / "MODULE_x" / "model.neff").exists()
    assert Path(f"{cache}.series-debug.json").exists()
    assert spawner.environment["NEURON_RT_VISIBLE_CORES"] == "1"
    assert "/opt/aws/neuron/bin" in spawner.environment["PATH"].split(":")
    assert config["Spawner"]["default_url"] == "/lab/tree/notebooks"


def test_seeding_every_seat_before_class_uses_the_hubs_copy_and_keeps_a_seeded_seat(tmp_path, capsys):
    from series_tools import workshop_seed

    out = _simple_hub(tmp_path, capsys)
    assert workshop_seed.main([str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["seat01", "seat02", "seat03"]
    assert all("notebooks, docs, NEFF cache from" in line for line in lines)
    edited = tmp_path / "homes" / "seat01" / "trainium-profiling" / "notebooks" / "00_environment_check.ipynb"
    edited.write_text("a learner's edit")
    assert workshop_seed.main([str(out), "seat01"]) == 0
    assert "seat01: already seeded" in capsys.readouterr().out and edited.read_text() == "a learner's edit"
    assert workshop_seed.main([str(out), "instructor"]) == 2
    assert "/hub/admin" in capsys.readouterr().err
    assert workshop_seed.main([str(tmp_path / "nowhere")]) == 2
    assert "Fix:" in capsys.readouterr().err


def test_neuron_ls_is_found_in_the_dlami_tools_folder_when_not_on_path(tmp_path, monkeypatch):
    import analysis.neuron_profile
    from helpers import neuron

    tools = tmp_path / "bin"
    exe = fake_tool(tools, "neuron-ls", "| NEURON DEVICE | held by seat07 |")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setattr(analysis.neuron_profile, "NEURON_TOOLS_BIN", tools)
    assert neuron.neuron_ls_executable() == str(exe)
    assert "held by seat07" in neuron.neuron_ls_output()
    assert workshop.neuron_ls_executable() == str(exe)
    monkeypatch.setattr(analysis.neuron_profile, "NEURON_TOOLS_BIN", tmp_path / "none")
    assert neuron.neuron_ls_executable() is None and "/opt/aws/neuron/bin" in neuron.neuron_ls_output()


# What the citing text is about, and the word its step's heading in docs/WORKSHOP_HUB.md must hold.
STEP_TOPICS = {"systemd": "systemd", "users": "users", "pre-warm": "Pre-warm", "re-seed": "Seed", "seed": "Seed"}


def test_every_workshop_hub_step_the_tools_cite_exists_and_is_about_what_they_say():
    import re

    headings = dict(re.findall(r"^(\d+b?)\. \*\*(.+?)\*\*", (ROOT / "docs" / "WORKSHOP_HUB.md").read_text(), re.M))
    assert {"1", "4", "5", "7", "8", "9"} <= set(headings), headings
    cited = 0
    for path in [*(ROOT / "series_tools").glob("*.py"), *(ROOT / "workshop").glob("*.py")]:
        text = path.read_text()
        for hit in re.finditer(r"WORKSHOP_HUB\.md,? step (\d+b?)", text):
            cited += 1
            step = hit.group(1)
            assert step in headings, f"{path.name} cites WORKSHOP_HUB.md step {step}, which does not exist"
            before = text[max(0, hit.start() - 160) : hit.start()].lower()
            topic = next((t for t in STEP_TOPICS if t in before), None)
            if topic:
                assert STEP_TOPICS[topic] in headings[step], (
                    f"{path.name} cites step {step} for {topic!r}; its heading is {headings[step]!r}"
                )
    assert cited >= 8  # the tools do cite steps: a pattern that matched nothing would pass vacuously
