# Two commands do all set-up: `make run` (the series, the main job) and `make test`.
# Both create or reuse .venv from requirements*.txt and install this repository into it (editable);
# a changed requirements file or pyproject.toml reinstalls.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat requirements.txt requirements-dev.txt pyproject.toml | sha1sum | cut -c1-12)
BACKEND ?= auto
ARGS   ?=
KERNEL := trainium-profiling
# The host-memory setting the series measures with (helpers/environment.py says why); an explicit
# value in the environment wins: `THP_MEM_ALLOC_ENABLE=0 make run` measures 4 KiB pages.
export THP_MEM_ALLOC_ENABLE ?= 1

.PHONY: venv run test test-faults test-hub workshop workshop-install lint compare sweep student publish kernel lab verify-neuron clean-runs

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps -e .
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)

## run the whole series on the detected backend into runs/<UTC time>-<backend>/
run: venv
	$(PY) -m series_tools.run_series --backend $(BACKEND) $(ARGS)

## run the test suite (BACKEND=cpu unless set; notebooks run end to end with papermill)
test: venv
	BACKEND=$(if $(filter auto,$(BACKEND)),cpu,$(BACKEND)) $(PY) -m pytest $(ARGS)

## the fault-injection cases that need real kernels, real Ctrl-C and a full filesystem (a small tmpfs, as root;
## skipped with the reason elsewhere): tests/faults_slow.py, about a minute; `make test` runs the fast ones (tests/test_faults.py)
test-faults: venv
	BACKEND=$(if $(filter auto,$(BACKEND)),cpu,$(BACKEND)) $(PY) -m pytest tests/faults_slow.py $(ARGS)

## the workshop hub for real on cpu (docs/WORKSHOP_HUB.md): installs its requirements, starts JupyterHub with three
## seats, signs each in, reads each kernel's environment, runs notebook 00 in one seat and a browser sign-in, stops it all
test-hub: workshop-install
	BACKEND=cpu $(PY) -m pytest -m hub tests/test_workshop_hub.py $(ARGS)

## JupyterHub and jupyterhub-idle-culler (requirements-workshop.txt) into .venv, configurable-http-proxy (npm) into workshop/
workshop-install: venv
	$(PY) -m pip install -q -r requirements-workshop.txt
	cd workshop && npm ci --no-audit --no-fund --loglevel=error

## plan a workshop on this host and write its JupyterHub configuration: make workshop SEATS=20 [ARGS="--out DIR ..."];
## refuses (exit 2) with the reason and the number of seats that fit; docs/WORKSHOP_HUB.md has the steps
workshop: venv
	@test -n "$(SEATS)" || { echo "make workshop needs SEATS, e.g. make workshop SEATS=20"; exit 2; }
	$(PY) -m series_tools.workshop --seats $(SEATS) $(ARGS)

## lint and format-check the code and the notebooks with ruff (pyproject.toml: [tool.ruff]), and the CI
## workflows (.github/workflows) with actionlint and zizmor (offline: no GitHub API calls); CI runs it
## before the tests; `.venv/bin/ruff format .` applies the format
lint: venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/actionlint -config-file .github/actionlint.yaml .github/workflows/*.yml
	$(VENV)/bin/zizmor --offline .github/workflows

## compare two runs: make compare ARGS="runs/A runs/B" (or ARGS="runs/B --baseline base.json"); exit 1 regression,
## 3 not comparable (other backend, device, parameters or shapes), 4 missing (add --allow-missing NAME for what is expected)
compare: venv
	@test -n "$(ARGS)" || { echo 'make compare needs ARGS, e.g. make compare ARGS="runs/A runs/B" (ls runs/ lists the runs)'; exit 2; }
	$(PY) -m series_tools.compare $(ARGS)

## sweep tokens x hidden for every variant: writes runs/<UTC time>-<backend>-sweep/sweep.csv and .png
sweep: venv
	$(PY) -m series_tools.sweep --backend $(BACKEND) $(ARGS)

## student copies of the notebooks (solutions replaced by empty answer cells) in student/
student: venv
	$(PY) -m series_tools.student $(ARGS)

## publish the newest passing run (or ARGS=runs/<run>) as docs/reference-runs/<backend>-<device>-<UTC date>/:
## executed notebooks, figures, metrics, run times and an index, machine paths scrubbed, at most 5 MB;
## then the instructor guide's timings are regenerated from the new run times
publish: venv
	$(PY) -m series_tools.publish $(ARGS)
	$(PY) -m series_tools.guide

## on a trn2/trn3 (inside the Neuron DLAMI venv): check every UNVERIFIED fact of docs/NEURON_NOTES.md and
## write runs/<UTC time>-neuron-verify/neuron-verification.md and .json; elsewhere it exits 3
verify-neuron:
	$(PYTHON) -m series_tools.verify_neuron $(ARGS)

## register this environment as the Jupyter kernel "Python (trainium-profiling)"
kernel: venv
	$(PY) -m ipykernel install --user --name $(KERNEL) --display-name "Python ($(KERNEL))"

## JupyterLab on 127.0.0.1 only, with a token (printed at start); kernels get CurveZMQ keys, so their
## connection is encrypted, and a fixed address layout where setarch -R runs (series_tools/execute.py says why)
lab: kernel
	$$(setarch $$(uname -m) -R true 2>/dev/null && echo setarch $$(uname -m) -R) $(VENV)/bin/jupyter lab --ip 127.0.0.1 --no-browser --notebook-dir notebooks --KernelManager.transport_encryption=auto $(if $(filter 0,$(shell id -u)),--allow-root)

clean-runs:
	rm -rf runs/
