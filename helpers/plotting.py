"""Plot defaults and the series' charts.

Defaults are set once here: readable sizes, the Okabe-Ito colour-blind-safe palette, and
titles that name the backend, so that a chart copied out of a notebook still says where its
numbers were measured.
"""
from __future__ import annotations

import matplotlib as mpl

# Okabe & Ito (2008), distinguishable with the common colour-vision deficiencies.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


def set_plot_defaults() -> None:
    mpl.rcParams.update(
        {
            "figure.figsize": (9.0, 4.5),
            "figure.dpi": 100,
            "savefig.dpi": 120,
            "savefig.bbox": "tight",
            "font.size": 11,
            "axes.titlesize": 12,
            "axes.labelsize": 11,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.prop_cycle": mpl.cycler(color=OKABE_ITO),
            "legend.frameon": False,
        }
    )


def backend_title(text: str, backend: str) -> str:
    """A chart title that names the backend the numbers came from."""
    return f"{text}  [measured on {backend}]"
