"""What a workshop seat starts from: its own copy of the notebooks and docs, and its NEFF cache
seeded from the pre-warmed one. The hub does this at a seat's first sign-in (the pre-spawn hook of
workshop/jupyterhub_config.py); this command does it for every seat before class, so that 20
first sign-ins at once do not each copy the warm cache inside the hub's event loop.

    sudo python -m series_tools.workshop_seed /srv/workshop/hub     # every seat of the plan there
    sudo python -m series_tools.workshop_seed /srv/workshop/hub seat01 seat02

A seat already seeded is left as it is (a learner's edits and compiles are kept); to re-seed after a
new warm run, stop the hub and delete the seats' caches first (docs/WORKSHOP_HUB.md, step 7).
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import sys
import time
from pathlib import Path

from helpers.outputs import REPO_ROOT

SERIES_FOLDER = "trainium-profiling"  # in each seat's home: notebooks/ and docs/, as in the repository
DOCS = REPO_ROOT / "docs"  # the notebooks link to ../docs/...: each seat gets its own copy beside them
NO_SEAT_FIX = "the instructor account has no seat: browse to /hub/admin (the hub sends it there at sign-in)"


class NotASeat(KeyError):
    """A user name that the plan gives no seat (the instructor's admin account)."""

    def __str__(self) -> str:
        return f"{self.args[0]!r} has no seat in this workshop's plan: {NO_SEAT_FIX}"


def seat_owner(hub: dict, username: str) -> tuple[int, int, Path]:
    """(uid, gid, home) of a seat: its Unix user ("local" spawner), or the hub's user and the
    planned home folder ("simple", the hub test)."""
    if hub["spawner"] == "simple":
        return os.getuid(), os.getgid(), Path(hub["homes"]) / username
    entry = pwd.getpwnam(username)
    return entry.pw_uid, entry.pw_gid, Path(entry.pw_dir)


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    if os.geteuid() != 0:
        return
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.chown(name, uid, gid)


def seed_seat(plan: dict, username: str, docs: Path = DOCS) -> list[str]:
    """Give one seat what it starts from, where it lacks it; return what was copied.

    Args:
        plan: the hub's workshop.json (series_tools.workshop.write_hub).
        username: the seat's name; any other name raises NotASeat with the fix.
        docs: the series' docs/ folder, copied beside the seat's notebooks (their links are ../docs/...).

    Returns:
        One line per thing copied ("notebooks", "docs", "NEFF cache ..."), empty when the seat was seeded already.
    """
    seats = {seat["name"]: seat for seat in plan["seats"]}
    if username not in seats:
        raise NotASeat(username)
    hub = plan["hub"]
    uid, gid, home = seat_owner(hub, username)
    done = []
    series = home / SERIES_FOLDER
    notebooks = series / "notebooks"
    if not notebooks.exists():
        notebooks.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(hub["notebooks"], notebooks, ignore=shutil.ignore_patterns("runs", ".ipynb_checkpoints"))
        done.append("notebooks")
    if not (series / "docs").exists() and docs.is_dir():
        shutil.copytree(docs, series / "docs")
        done.append("docs")
    if done:
        _chown_tree(home, uid, gid)
    cache = Path(seats[username]["neff_cache"])  # <cache root>/<seat>/neff; the seat owns <cache root>/<seat>
    if not cache.exists():
        warm = Path(hub["warm_cache"]) if hub["warm_cache"] else None
        cache.parent.mkdir(parents=True, exist_ok=True)
        if warm and warm.is_dir():
            shutil.copytree(warm, cache)
            record = Path(f"{warm}.series-debug.json")  # the debug settings the warm NEFFs were compiled with
            if record.exists():
                shutil.copyfile(record, f"{cache}.series-debug.json")
            done.append(f"NEFF cache from {warm}")
        else:
            cache.mkdir()
            done.append("NEFF cache (empty: no warm cache planned)")
        _chown_tree(cache.parent, uid, gid)
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m series_tools.workshop_seed", description=__doc__.split("\n\n")[0])
    ap.add_argument("hub", type=Path, help="the folder the planner wrote (--out), holding workshop.json")
    ap.add_argument("seats", nargs="*", help="seats to seed (default: every seat of the plan)")
    args = ap.parse_args(argv)
    record = args.hub / "workshop.json"
    if not record.is_file():
        print(
            f"workshop_seed: no {record}. Fix: write the hub first (python -m series_tools.workshop --out {args.hub})",
            file=sys.stderr,
        )
        return 2
    plan = json.loads(record.read_text())
    names = args.seats or [seat["name"] for seat in plan["seats"]]
    for name in names:
        start = time.monotonic()
        try:
            copied = seed_seat(plan, name)
        except NotASeat as exc:
            print(f"workshop_seed: {exc}", file=sys.stderr)
            return 2
        except KeyError:  # pwd.getpwnam: the seat's Unix user is missing
            print(
                f"workshop_seed: no Unix user {name}. Fix: create the seats' users first (docs/WORKSHOP_HUB.md, step 4)",
                file=sys.stderr,
            )
            return 2
        print(f"{name}: {', '.join(copied) or 'already seeded'} ({time.monotonic() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
