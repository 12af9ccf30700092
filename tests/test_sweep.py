"""The shape sweep at tiny sizes: its table, regimes, files, and bad input."""

import pandas as pd

from series_tools.sweep import main, run_sweep


def test_sweep_table(tmp_path):
    backend, df = run_sweep([2, 64], [128], "float32", "cpu", 3, ("copy", "naive", "torch.rms_norm"))
    assert backend.name == "cpu"
    assert set(df["variant"]) == {"copy", "naive", "torch.rms_norm"} and len(df) == 6
    assert (df[df["variant"] == "copy"]["over_copy"] == 1.0).all()
    # ratios to the copy are paired per round (interleaved timing): each carries its p10-p90
    assert (df["over_copy_p10"] <= df["over_copy"]).all() and (df["over_copy"] <= df["over_copy_p90"]).all()
    assert set(df["regime"]) <= {"overhead-bound", "memory-bound"}
    assert (df["GB_per_s"] > 0).all() and (df["fixed_cost_share"] <= 1.0).all()
    # each variant's cheapest point is, by construction, fully overhead-bound
    assert (df.groupby("variant")["fixed_cost_share"].max() == 1.0).all()


def test_sweep_writes_csv_and_plot(tmp_path, capsys):
    assert (
        main(
            [
                "--tokens",
                "2",
                "--hidden",
                "64",
                "--repeats",
                "3",
                "--backend",
                "cpu",
                "--variants",
                "copy",
                "torch.compile",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    (folder,) = tmp_path.iterdir()
    assert folder.name.endswith("-cpu-sweep")
    df = pd.read_csv(folder / "sweep.csv")
    assert list(df.columns[:5]) == ["variant", "tokens", "hidden", "bytes_moved", "median_us"]
    assert (folder / "sweep.png").stat().st_size > 10_000


def test_sweep_bad_input(tmp_path, capsys):
    assert main(["--tokens", "0", "--out", str(tmp_path)]) == 2
    assert "--tokens must be >= 1" in capsys.readouterr().err
    assert main(["--variants", "naive", "--out", str(tmp_path)]) == 2
    assert "needs the copy variant" in capsys.readouterr().err
