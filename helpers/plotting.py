"""Plot defaults, set once per session: readable sizes and the Okabe-Ito colour-blind-safe palette.

The series' chart conventions (the palette, one colour per meaning, titles that name the backend)
and the figures drawn from a trace live with the analysis, in analysis.figures.
"""

from __future__ import annotations

import matplotlib as mpl

from analysis.figures import OKABE_ITO


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
