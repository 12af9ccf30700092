"""Command-line tools around the series, apart from the lesson helpers they use.

- run_series: the main job, every notebook with papermill into a fresh run folder (`make run`)
- compare:    two runs (or a run and a baseline) metric by metric; exit 1 on a regression
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
- hosted:     the hosted-notebook route: the one source of every notebook's install-if-missing lines

`helpers` never imports this package (tests/test_layering.py).
"""
