"""Command-line tools around the series, apart from the lesson helpers they use.

- run_series: the main job, every notebook with papermill into a fresh run folder (`make run`)
- compare:    two runs (or a run and a baseline) metric by metric; exit 1 on a regression, 3 when they are not
              comparable (other parameters, shapes, device), 4 when a notebook or metric is missing
- sweep:      tokens x hidden for every RMSNorm variant against the copy floor
- student:    copies of the notebooks without solutions
- handouts:   HTML renders headed by the environment they were measured in
- guide:      the instructor guide's agenda and exercise list, generated from the series table and the notebooks
- summary:    a run folder's summary.md and summary.png
- consistency: one value per quantity: the same timing, or paired ratio, across notebooks of one run must agree
- execute:    one notebook with papermill, on a kernel with an encrypted connection and a fixed address layout
- verify_neuron: on a trn2/trn3, every UNVERIFIED Neuron fact checked, "assumed -> observed"
- neuron_probe: the hardware observations verify_neuron judges (Trainium only)
- observation: the record of one profiled Trainium run that both read (so neither imports the other)
- publish:    a passing run published as a reference run in docs/reference-runs/ (`make publish`), and its staleness check
- hosted:     every notebook's three-line start cell, and the hosted route's install cell
- lesson_limits: the lesson-first limits (reading time, cell sizes, sentence share) measured on a notebook
- workshop:   a workshop's seat plan from the host and its JupyterHub configuration (`make workshop SEATS=N`)
- workshop_seed: what each workshop seat starts from (notebooks, docs, warm NEFF cache), for every seat before class
- cli:        the tools' argument parser: a malformed command line is one line naming the option's usage as the fix

`helpers` never imports this package (tests/test_layering.py).
"""
