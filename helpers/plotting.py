"""Display defaults, set once per session: plots in readable sizes and the Okabe-Ito colour-blind-safe
palette; styled tables with a plain-text copy.

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


def tables_as_text() -> None:
    """Give every pandas Styler a plain-text rendering beside its HTML, in this IPython session.

    Why: a Styler (a table with a caption or number formats) has only an HTML rendering, so its
    output in an executed notebook reads as `<pandas.io.formats.style.Styler at 0x...>` to anything
    that reads the text: a terminal, a diff, and `reading_time.py`, which then counted none of a
    styled table's words and underestimated the notebooks that use them. Does nothing outside IPython.
    Registered by the type's name, so that starting a notebook does not import pandas' styler (and jinja2)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/plain"].for_type_by_name(
            "pandas.io.formats.style", "Styler", lambda s, p, cycle: p.text(styled_text(s))
        )


def styled_text(styler) -> str:
    """A Styler as aligned plain text: its caption, then its formatted cells (the HTML's numbers)."""
    rows = [row.split("\x1f") for row in styler.to_string(delimiter="\x1f").splitlines() if row]
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(map(len, rows)))]
    table = "\n".join("  ".join(_aligned(cell, w) for cell, w in zip(r, widths)).rstrip() for r in rows)
    caption = styler.caption if isinstance(styler.caption, str) else ""
    return f"{caption}\n{table}" if caption else table


def _aligned(cell: str, width: int) -> str:
    """Numbers right-aligned, as in the HTML table; words left-aligned."""
    try:
        float(cell.replace(",", "").rstrip("%x"))
    except ValueError:
        return cell.ljust(width)
    return cell.rjust(width)
