"""The CI workflows (.github/workflows): what each runs, checked statically here (`make lint`
runs actionlint and zizmor over them). The trn2 workflow needs a self-hosted Trainium runner, so
no run of it happens in this project's CI: these tests keep it running what the README says."""

import re

import yaml

from helpers.series import REPO_ROOT

WORKFLOWS = REPO_ROOT / ".github" / "workflows"


def load(name):
    return yaml.safe_load((WORKFLOWS / name).read_text())


def run_lines(job):
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_cpu_workflow_runs_the_projects_ci_script_on_a_hosted_runner():
    (job,) = load("cpu.yml")["jobs"].values()
    assert job["runs-on"].startswith("ubuntu-")
    assert re.search(r"^bash \.ci/run$", run_lines(job), re.M)


def test_trn2_workflow_runs_the_series_on_a_labelled_self_hosted_runner_and_keeps_its_results():
    workflow = load("trn2.yml")
    (job,) = workflow["jobs"].values()
    assert job["runs-on"] == ["self-hosted", "linux", "x64", "trn2"]
    labels = yaml.safe_load((REPO_ROOT / ".github" / "actionlint.yaml").read_text())["self-hosted-runner"]["labels"]
    assert "trn2" in labels
    commands = run_lines(job)
    for command in ("make test BACKEND=neuron", "make verify-neuron", "make run BACKEND=neuron", "neuron-ls"):
        assert command in commands, command
    assert "/opt/aws_neuronx_venv_torch_neuronx_2_14_0" == workflow["env"]["NEURON_VENV"]  # the DLAMI venv (N4)
    assert "pip install -r requirements-neuron.txt" in commands
    (upload,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload["if"] == "${{ always() }}"
    assert "runs/*-neuron/" in upload["with"]["path"] and "neuron-verification.md" in upload["with"]["path"]


def test_workflows_pin_actions_by_commit_and_hold_no_write_permission():
    for path in WORKFLOWS.glob("*.yml"):
        workflow = yaml.safe_load(path.read_text())
        assert workflow["permissions"] == {}, path.name
        for job in workflow["jobs"].values():
            assert job["permissions"] == {"contents": "read"}, path.name
            for step in job["steps"]:
                if "uses" in step:
                    assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


def test_make_lint_checks_the_workflows_offline():
    makefile = (REPO_ROOT / "Makefile").read_text()
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "actionlint" in lint and "zizmor --offline .github/workflows" in lint
