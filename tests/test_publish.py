"""`make publish` on SYNTHETIC run folders: what goes in, what stays out, paths scrubbed, budget, atomicity.

The run folders here are built by hand in the layout series_tools/run_series.py writes (two tiny
notebooks, not the series'), so each property is checked without running the series.
"""

import base64
import json
from pathlib import Path

import nbformat
import pytest

from helpers.errors import SeriesError
from helpers.series import REPO_ROOT
from series_tools import publish

# A PNG's base64 text that happens to hold "/tmp/" and "/home/x": image data must never be
# rewritten, and must not count as a path of the machine.
IMAGE_B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode() + "/tmp/home/x+AAAA"
CLAIM = "naive is the slowest of 2 variants at 8x8 (synthetic)"
CLAIM2 = "compile is the fastest (synthetic, written as a bullet)"


def source_notebooks(folder: Path) -> Path:
    """Two notebooks in the series' shape: a parameters cell and code that prints."""
    folder.mkdir(parents=True, exist_ok=True)
    for stem in ("00_first", "01_second"):
        nb = nbformat.v4.new_notebook()
        params = nbformat.v4.new_code_cell('BACKEND = "auto"\nOUT_DIR = ""')
        params.metadata["tags"] = ["parameters"]
        nb.cells = [
            nbformat.v4.new_markdown_cell(f"# {stem}: what it shows\n\nMore."),
            params,
            nbformat.v4.new_code_cell(f"cache = '/tmp/neff_cache'  # a documented default\nprint({stem!r})"),
        ]
        nbformat.write(nb, folder / f"{stem}.ipynb")
    return folder


def executed_copy(source: Path, run_dir: Path, printed: str) -> None:
    """What papermill writes: an injected-parameters cell after the parameters, outputs kept."""
    nb = nbformat.read(source, as_version=4)
    injected = nbformat.v4.new_code_cell(f'BACKEND = "cpu"\nOUT_DIR = "{run_dir}"')
    injected.metadata["tags"] = ["injected-parameters"]
    nb.cells.insert(2, injected)
    nb.cells[-1].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=printed),
        nbformat.v4.new_output("display_data", data={"image/png": IMAGE_B64, "text/plain": "<Figure>"}),
    ]
    nb.metadata["papermill"] = {"input_path": str(source), "output_path": str(run_dir / source.name)}
    nbformat.write(nb, run_dir / source.name)


def synthetic_run(
    root: Path,
    notebooks: Path,
    backend: str = "cpu",
    name: str = "20260101T000000Z-cpu",
    status: str = "passed",
    printed: str | None = None,
) -> Path:
    run_dir = root / "runs" / name
    run_dir.mkdir(parents=True)
    for source in sorted(notebooks.glob("*.ipynb")):
        executed_copy(
            source,
            run_dir,
            printed
            if printed is not None
            else f"trace at {run_dir}/{source.stem}/step.trace.json; cache {Path.home()}/.cache/x; "
            f"repo {REPO_ROOT}/helpers; scratch /tmp/torchinductor_u/ab/c.py\n",
        )
        nb_dir = run_dir / source.stem
        nb_dir.mkdir()
        (nb_dir / "timeline.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 1000)
        (nb_dir / "step.trace.json").write_text("{}")  # traces stay out
        (nb_dir / "step.trace.json.gz").write_bytes(b"\x1f\x8b")
        (nb_dir / "neuron-profile" / "i-0_pid_1").mkdir(parents=True)  # a Neuron profile folder stays out
        (nb_dir / "neuron-profile" / "i-0_pid_1" / "x.ntff").write_bytes(b"0" * 10)
        (nb_dir / "inductor-cache").mkdir()
        (nb_dir / "inductor-cache" / "graph.png").write_bytes(b"\x89PNG")  # nothing from a cache
        (nb_dir / "metrics.json").write_text("{}")
    metrics = {
        "backend": backend,
        "notebooks": {
            "00_first": {
                "claims": {
                    "value": [
                        {"relation": "max", "metrics": ["a", "b"], "text": CLAIM},
                        {"relation": "min", "metrics": ["b", "a"], "text": "- " + CLAIM2},
                    ],
                    "unit": "claims",
                },
                "a": {"value": 2.0, "unit": "ms"},
            },
            "01_second": {"b": {"value": 1.0, "unit": "ms", "note": f"measured in {run_dir}"}},
        },
    }
    env = {
        "backend": backend,
        "device_name": "AMD EPYC 7B13",
        "device_count": 1,
        "torch": "2.13.0+cpu",
        "python": "3.11.7",
        "date_utc": "2026-01-01T00:00:00+00:00",
        "git_commit": "abc123",
        "reason": "asked for",
    }
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    (run_dir / "environment.json").write_text(json.dumps(env))
    (run_dir / "status.json").write_text(
        json.dumps(
            {
                "status": status,
                "seconds": 12.5,
                "notebooks": [
                    {"notebook": "00_first", "status": "passed", "seconds": 4.2},
                    {"notebook": "01_second", "status": "passed", "seconds": 8.3},
                ],
            }
        )
    )
    (run_dir / "00_first.html").write_text("<html></html>")  # handouts stay out
    (run_dir / "summary.png").write_bytes(b"\x89PNG")
    if status != "passed":
        (run_dir / "INCOMPLETE").write_text("")
    return run_dir


@pytest.fixture
def made(tmp_path):
    notebooks = source_notebooks(tmp_path / "notebooks")
    return tmp_path, notebooks, synthetic_run(tmp_path, notebooks)


def files_of(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_publish_keeps_notebooks_figures_metrics_and_leaves_out_the_rest(made):
    tmp_path, notebooks, run_dir = made
    out = tmp_path / "reference-runs"
    final = publish.publish(run_dir, out, notebook_dir=notebooks)
    assert final == out / "cpu-amd-epyc-7b13-2026-01-01"
    assert files_of(final) == {
        "00_first.ipynb",
        "01_second.ipynb",
        "00_first/timeline.png",
        "01_second/timeline.png",
        "summary.png",
        "environment.json",
        "metrics.json",
        "run_times.json",
        "README.md",
    }
    assert [p.name for p in out.iterdir()] == [final.name], "no temporary folder left beside it"
    assert publish.stale_notebooks(final, notebooks) == [], "cell sources are published verbatim"


def test_run_times_hold_each_notebooks_seconds_and_the_machine_that_measured_them(made):
    """helpers.series reads them for the start lines, 00's plan and the guide: nothing is copied by hand."""
    tmp_path, notebooks, run_dir = made
    final = publish.publish(run_dir, tmp_path / "reference-runs", notebook_dir=notebooks)
    times = json.loads((final / "run_times.json").read_text())
    assert times["seconds"] == {"00_first": 4.2, "01_second": 8.3}
    assert "AMD EPYC 7B13" in times["measured_on"] and "run 20260101T000000Z" in times["measured_on"]


def test_run_times_and_the_readme_date_name_the_run_folder_not_the_later_environment_date(tmp_path):
    """The environment is recorded a second or so after the folder is named: both quote the folder's id."""
    notebooks = source_notebooks(tmp_path / "notebooks")
    run_dir = synthetic_run(tmp_path, notebooks, name="20251231T235959Z-cpu")  # env says 2026-01-01T00:00:00
    final = publish.publish(run_dir, tmp_path / "reference-runs", notebook_dir=notebooks)
    assert "run 20251231T235959Z" in json.loads((final / "run_times.json").read_text())["measured_on"]
    assert "| date (UTC) | 2025-12-31T23:59:59 (run `20251231T235959Z`" in (final / "README.md").read_text()


def test_published_text_holds_no_path_of_the_machine_and_images_are_untouched(made):
    tmp_path, notebooks, run_dir = made
    final = publish.publish(run_dir, tmp_path / "reference-runs", notebook_dir=notebooks)
    every_text = "\n".join(p.read_text() for p in final.rglob("*") if p.suffix in (".ipynb", ".json", ".md"))
    for machine_path in (str(run_dir), str(tmp_path), str(REPO_ROOT), str(Path.home()) + "/.cache", "/tmp/torchinductor_u"):
        assert machine_path not in every_text.replace(IMAGE_B64, "")
    nb = json.loads((final / "00_first.ipynb").read_text())
    printed = "".join(nb["cells"][-1]["outputs"][0]["text"])
    assert "<run>/00_first/step.trace.json" in printed and "<home>/.cache/x" in printed
    assert "<repo>/helpers" in printed and "<tmp>" in printed
    assert nb["cells"][-1]["outputs"][1]["data"]["image/png"] == IMAGE_B64
    assert nb["metadata"]["papermill"]["input_path"].startswith("<tmp>")
    assert publish.machine_paths_in(nb, publish.Scrubber.for_run(run_dir)) == []
    injected = next(c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", []))
    assert "".join(injected["source"]) == 'BACKEND = "cpu"\nOUT_DIR = "<run>"'
    assert "cache = '/tmp/neff_cache'" in "".join(nb["cells"][-1]["source"]), "the notebook's own code is kept verbatim"


def test_index_lists_each_notebook_with_its_time_claims_and_links(made):
    tmp_path, notebooks, run_dir = made
    index = (publish.publish(run_dir, tmp_path / "reference-runs", notebook_dir=notebooks) / "README.md").read_text()
    assert "[00_first](00_first.ipynb)" in index and "[01_second](01_second.ipynb)" in index
    assert "| 4.2 |" in index and "| 8.3 |" in index
    assert f"- {CLAIM}\n- {CLAIM2}\n" in index
    assert "[timeline](00_first/timeline.png)" in index and "![Notebook run times](summary.png)" in index
    assert "make run && make publish" in index
    assert "| 01_second: what it shows |" in index  # a notebook not in helpers.series: its first markdown heading


def test_a_machine_path_that_cannot_be_scrubbed_is_refused(tmp_path):
    notebooks = source_notebooks(tmp_path / "notebooks")
    run_dir = synthetic_run(tmp_path, notebooks, printed="read /home/someone-else/data.bin\n")
    out = tmp_path / "reference-runs"
    with pytest.raises(SeriesError, match="still holds a path of this machine: '/home/someone-else/data.bin'"):
        publish.publish(run_dir, out, notebook_dir=notebooks)
    assert list(out.iterdir()) == []


def test_above_the_size_budget_it_refuses_naming_the_largest_and_leaves_nothing(made):
    tmp_path, notebooks, run_dir = made
    out = tmp_path / "reference-runs"
    (run_dir / "01_second" / "timeline.png").write_bytes(b"\x89PNG" + b"0" * 60_000)
    with pytest.raises(SeriesError) as err:
        publish.publish(run_dir, out, budget=50_000, notebook_dir=notebooks)
    message = str(err.value)
    assert "above its budget of 0.05 MB; largest: 01_second/timeline.png (0.06 MB)" in message
    assert "figsize/dpi" in message
    assert list(out.iterdir()) == []


def test_an_interrupted_publish_leaves_no_half_written_folder_and_keeps_the_earlier_one(made, monkeypatch):
    tmp_path, notebooks, run_dir = made
    out = tmp_path / "reference-runs"
    earlier = publish.publish(run_dir, out, notebook_dir=notebooks)
    before = files_of(earlier)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(publish, "check_contents", interrupted)
    with pytest.raises(KeyboardInterrupt):
        publish.publish(run_dir, out, notebook_dir=notebooks)
    assert [p.name for p in out.iterdir()] == [earlier.name] and files_of(earlier) == before


def test_a_new_run_replaces_the_earlier_reference_run_of_its_backend_only(tmp_path):
    notebooks = source_notebooks(tmp_path / "notebooks")
    out = tmp_path / "reference-runs"
    (out / "cuda-nvidia-h100-2025-12-01").mkdir(parents=True)
    (out / "cuda-nvidia-h100-2025-12-01" / "README.md").write_text("cuda")
    old_cpu = out / "cpu-older-machine-2025-12-01"
    old_cpu.mkdir()
    new = publish.publish(synthetic_run(tmp_path, notebooks), out, notebook_dir=notebooks)
    assert sorted(p.name for p in out.iterdir()) == ["cpu-amd-epyc-7b13-2026-01-01", "cuda-nvidia-h100-2025-12-01"]
    assert new.exists() and not old_cpu.exists()


def test_a_run_of_other_notebooks_is_refused_with_the_refresh_command(made):
    tmp_path, notebooks, run_dir = made
    nb = nbformat.read(notebooks / "01_second.ipynb", as_version=4)
    nb.cells[-1].source = "print('changed since the run')"
    nbformat.write(nb, notebooks / "01_second.ipynb")
    with pytest.raises(SeriesError, match=r"(?s)01_second.ipynb: code cell 2 .*make run && make publish"):
        publish.publish(run_dir, tmp_path / "reference-runs", notebook_dir=notebooks)


def test_newest_passing_run_skips_incomplete_and_failed_runs(tmp_path):
    notebooks = source_notebooks(tmp_path / "notebooks")
    passing = synthetic_run(tmp_path, notebooks, name="20260101T000000Z-cpu")
    synthetic_run(tmp_path, notebooks, name="20260102T000000Z-cpu", status="failed")
    (tmp_path / "runs" / "20260103T000000Z-cpu-interactive").mkdir()
    assert publish.newest_passing_run(tmp_path / "runs") == passing
    with pytest.raises(SeriesError, match="make run"):
        publish.newest_passing_run(tmp_path / "nothing-here")


def test_bad_input_exits_2_with_the_fix(tmp_path, capsys):
    notebooks = source_notebooks(tmp_path / "notebooks")
    incomplete = synthetic_run(tmp_path, notebooks, status="failed")
    assert publish.main([str(incomplete), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "INCOMPLETE run" in err and "Fix: publish a passing run: `make run`, then `make publish`" in err
    assert publish.main([str(tmp_path / "notebooks"), "--out", str(tmp_path / "out")]) == 2
    assert "is not a run folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_reference_name_is_backend_device_and_utc_date():
    env = {"backend": "neuron", "device_name": "Trainium2 (trn2.3xlarge)", "date_utc": "2026-03-04T05:06:07+00:00"}
    assert publish.reference_name(env) == "neuron-trainium2-trn2-3xlarge-2026-03-04"


def test_the_overview_links_every_reference_run_and_its_notebooks(made):
    """docs/reference-runs/README.md: the stable address the notebooks' intros link to."""
    tmp_path, notebooks, run_dir = made
    out = tmp_path / "reference-runs"
    out.mkdir()
    assert "None is committed yet" in publish.write_overview(out).read_text()
    final = publish.publish(run_dir, out, notebook_dir=notebooks)
    write_overview = publish.write_overview
    text = write_overview(out).read_text()
    assert f"## [{final.name}]({final.name}/README.md)" in text
    assert f"- [00_first]({final.name}/00_first.ipynb)" in text and f"- [01_second]({final.name}/01_second.ipynb)" in text


def test_published_notebooks_links_point_from_their_folder_to_the_repository():
    """A notebook links `../docs/...` from notebooks/; its published copy sits in docs/reference-runs/<name>/."""
    from series_tools.execute import relink

    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["see the [glossary](../docs/CHEATSHEET.md#glossary)\n"]},
            {"cell_type": "code", "source": ["x = '](../keep)'"]},
        ]
    }
    out = relink(nb)
    assert out["cells"][0]["source"] == ["see the [glossary](../../../docs/CHEATSHEET.md#glossary)\n"]
    assert out["cells"][1]["source"] == ["x = '](../keep)'"]  # code is left as written


def test_without_a_committed_reference_run_the_times_read_as_not_recorded(tmp_path):
    """A fork or a fresh series has no reference run yet: its notebooks show no other run's times."""
    from helpers.series import reference_run_times

    assert reference_run_times(tmp_path) == {"measured_on": "no committed cpu reference run", "seconds": {}}


# Planted credentials, in the formats the usual tools use (never real ones).
PLANTED = {
    "HF_TOKEN": "hf_" + "Planted0" * 4,
    "GITHUB_TOKEN": "ghp_" + "Planted1" * 4,
    "AWS_SECRET_ACCESS_KEY": "planted/Secret+Key" * 2,
}


def test_a_planted_credential_never_reaches_a_published_file(tmp_path, monkeypatch):
    """A token in the environment that a notebook printed, or that reached environment.json or the
    metrics, is replaced before anything is written; an unnamed token-like string too."""
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    notebooks = source_notebooks(tmp_path / "notebooks")
    leaked = " ".join(PLANTED.values()) + " and an unnamed one: hf_" + "Unnamed9" * 4
    run_dir = synthetic_run(tmp_path, notebooks, printed=f"env: {leaked}\n")
    env = json.loads((run_dir / "environment.json").read_text())
    (run_dir / "environment.json").write_text(json.dumps({**env, "reason": leaked}))
    final = publish.publish(run_dir, tmp_path / "reference-runs", notebook_dir=notebooks)
    every_text = "\n".join(p.read_text() for p in final.rglob("*") if p.suffix in (".ipynb", ".json", ".md"))
    for value in (*PLANTED.values(), "hf_" + "Unnamed9" * 4):
        assert value not in every_text
    assert every_text.count("<secret>") >= 4 * 2  # the printed line and environment.json, at least


def test_a_credential_in_a_notebooks_own_source_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", PLANTED["HF_TOKEN"])
    notebooks = source_notebooks(tmp_path / "notebooks")
    nb = nbformat.read(notebooks / "00_first.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(f"token = {PLANTED['HF_TOKEN']!r}"))
    nbformat.write(nb, notebooks / "00_first.ipynb")
    run_dir = synthetic_run(tmp_path, notebooks, printed="nothing secret\n")
    with pytest.raises(SeriesError, match="still holds a credential"):
        publish.publish(run_dir, tmp_path / "reference-runs", notebook_dir=notebooks)
    assert not (tmp_path / "reference-runs").exists() or not list((tmp_path / "reference-runs").iterdir())


def test_the_environment_record_never_holds_a_planted_credential(monkeypatch):
    from helpers.environment import host_record, redact_secrets

    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("TORCH_NEURONX_NEFF_CACHE_DIR", f"/tmp/cache-{PLANTED['HF_TOKEN']}")  # a recorded variable
    text = json.dumps(host_record())
    assert not any(value in text for value in PLANTED.values())
    assert "/tmp/cache-<secret>" in text
    assert redact_secrets({"a": ["x " + PLANTED["GITHUB_TOKEN"]]}) == {"a": ["x <secret>"]}


def test_a_run_folders_copy_links_the_repository_from_where_it_sits(tmp_path):
    """The run folder's notebooks (and their HTML handouts) linked `../docs/...`, which from
    runs/<run>/ points at runs/docs/: the copy is relinked, and publish maps it on to its own folder."""
    from series_tools.execute import relink
    from series_tools.run_series import relink_copy

    root, run_dir = tmp_path / "repo", tmp_path / "repo" / "runs" / "20261206T000000Z-cpu"
    run_dir.mkdir(parents=True)
    executed = run_dir / "05.ipynb"
    cell = {"cell_type": "markdown", "source": ["[glossary](../docs/CHEATSHEET.md#glossary)\n"]}
    executed.write_text(json.dumps({"cells": [cell]}))
    relink_copy(executed, root)
    copied = json.loads(executed.read_text())
    assert copied["cells"][0]["source"] == ["[glossary](../../docs/CHEATSHEET.md#glossary)\n"]
    assert (run_dir / "../../docs").resolve() == (root / "docs").resolve()
    published = relink(copied, was="../..")
    assert published["cells"][0]["source"] == ["[glossary](../../../docs/CHEATSHEET.md#glossary)\n"]
    relink_copy(run_dir / "missing.ipynb", root)  # a notebook that left no copy: nothing to do
