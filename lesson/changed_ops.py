"""Notebook 03's join of two variants' ops: which were removed, added, changed form or count.

Why: the lesson cell should show the joined table and one line, not the bookkeeping that sorts
each op into a kind of change.
"""

from __future__ import annotations

import pandas as pd

CHANGES = ("removed", "added", "changed form", "count changed")


def op_changes(per_call: pd.DataFrame, before: str, after: str) -> pd.DataFrame:
    """Sorts each op of two variants into one kind of change.

    Why: `aten::add` in one variant against `aten::add_` (in place) in the other is the same work
    in another form, not an op removed and another added.

    Args:
        per_call: op name -> calls per call of each variant, one column per variant (0 where absent).
        before: the column of the variant compared against (e.g. "naive").
        after: the column of the variant under study (e.g. "torch.rms_norm").

    Returns:
        `per_call` with a `change` column: "both" (same count), "count changed", "removed" (in
        `before` only), "added" (in `after` only), or "changed form" (on one side only, but its
        in-place twin, the name with or without a trailing `_`, is in the table).
    """
    old, new = per_call[before], per_call[after]
    twin = {n: n[:-1] if n.endswith("_") else n + "_" for n in per_call.index}
    change = {}
    for n in per_call.index:
        side = "both" if old[n] == new[n] else "removed" if new[n] == 0 else "added" if old[n] == 0 else "count changed"
        change[n] = "changed form" if side in ("removed", "added") and twin[n] in per_call.index else side
    return per_call.assign(change=pd.Series(change, dtype=object))


def change_line(changes: pd.DataFrame) -> str:
    """One line listing the ops of each kind of change ("none" where a kind has none).

    Args:
        changes: `op_changes(...)`'s result.

    Returns:
        "removed: ... | added: ... | changed form: ... | count changed: ...".
    """
    return " | ".join(f"{c}: {', '.join(changes.index[changes['change'] == c]) or 'none'}" for c in CHANGES)
