"""A reference run: one executed series published into the repository, readable without running.

    python -m series_tools.publish [RUN_DIR] [--out docs/reference-runs]     (`make publish`)

From a passing run folder (default: the newest under runs/) it writes
`docs/reference-runs/<backend>-<device>-<UTC date>/`: the executed notebooks with their outputs
(images stay embedded, as the run left them), each notebook's figures (PNG), the run's
environment.json and metrics.json, run_times.json (each notebook's run time, which helpers.series
reads), and a README.md index: per notebook what it shows, its run
time, the conclusions it published (its "claims" metric) and a link. Traces, Neuron profile
folders, compile caches and HTML handouts stay out; absolute paths of the machine that made
the run are replaced by placeholders (`<run>`, `<repo>`, `<home>`, `<tmp>`, `<host>`), and the
command refuses to publish if one is left, or if the folder would exceed SIZE_BUDGET_BYTES.

Why a reference run exists: the notebooks are stored without outputs (right for the source), so
without one a learner or an instructor cannot read a result before installing the series.
Why it must not drift: tests/test_reference_runs.py fails when a committed reference run's code
cells differ from the current notebooks' (`stale_notebooks`), naming REFRESH_COMMAND.

The folder is written beside its final place under a hidden temporary name and renamed into
place only when complete, so a failed or interrupted publish leaves no half-written reference
run; an earlier reference run of the same backend is replaced by the new one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from series_tools.cli import OneLineParser
from helpers.environment import SECRET_PLACEHOLDER, TOKEN_LIKE, secret_values
from helpers.errors import OutputDirError, SeriesError
from helpers.metrics import METRICS_FILE
from helpers.outputs import RUNS_DIR, ensure_writable_dir, write_atomic
from helpers.series import NOTEBOOK_DIR, NOTEBOOKS, REFERENCE_RUNS_DIR, REPO_ROOT, RUN_TIMES_FILE, notebook_paths
from series_tools.execute import relink
from series_tools.run_series import INCOMPLETE

SIZE_BUDGET_BYTES = 5_000_000  # 5 MB per reference run: the repository must stay quick to clone
REFRESH_COMMAND = "make run && make publish"
INJECTED_TAG = "injected-parameters"  # papermill's cell holding the run's parameters
# Folders inside a notebook's run folder whose files never go into a reference run, figures included.
LEFT_OUT = re.compile(r"cache|profile|neuron|trace", re.IGNORECASE)

# Absolute paths that say where a machine keeps things (its users, checkouts, temporary files).
# Paths every machine has (/usr/lib, /proc/..., /opt/aws/neuron/bin in printed instructions) are
# documentation, not the machine's layout, and stay.
MACHINE_PATH = re.compile(
    r"(?<![\w.~>-])/(?:home|root|tmp|var/tmp|var/folders|private|work|workspace|Users|mnt|srv|content|kaggle)(?![\w.-])(?:/[^\s\"'<>)\]},;:]*)?"
)
TMP_PATH = re.compile(r"(?<![\w.~>-])/(?:var/)?tmp(?![\w.-])(?:/[^\s\"'<>)\]},;:]*)?")


def fail(problem: str, fix: str) -> SeriesError:
    return SeriesError(problem, fix)


# --- which run ----------------------------------------------------------------------------------


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise fail(f"{path.parent} has no {path.name}", "pass a run folder written by `make run`") from None
    except json.JSONDecodeError as exc:
        raise fail(f"{path} is not valid JSON ({exc.msg})", "run the series again: `make run`") from None


def check_run_dir(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run's status.json and environment.json, or a SeriesError naming what is wrong and the fix."""
    if not run_dir.is_dir():
        raise fail(f"{run_dir} is not a folder", "pass a run folder written by `make run` (runs/<UTC time>-<backend>/)")
    if not (run_dir / "status.json").exists() or not any(run_dir.glob("[0-9][0-9]_*.ipynb")):
        raise fail(
            f"{run_dir} is not a run folder (no status.json or executed NN_*.ipynb)",
            "pass a run folder written by `make run` (runs/<UTC time>-<backend>/)",
        )
    if (run_dir / INCOMPLETE).exists():
        raise fail(
            f"{run_dir} is an INCOMPLETE run (a notebook failed, or the run was interrupted): see its status.json",
            "publish a passing run: `make run`, then `make publish`",
        )
    status = read_json(run_dir / "status.json")
    if status.get("status") != "passed":
        raise fail(
            f"{run_dir} did not pass (status {status.get('status')!r})", "publish a passing run: `make run`, then `make publish`"
        )
    return status, read_json(run_dir / "environment.json")


def newest_passing_run(runs_dir: Path = RUNS_DIR) -> Path:
    """The newest run folder (by its UTC-time name) that finished with every notebook passed."""
    candidates = (
        sorted(
            (p for p in runs_dir.glob("*") if (p / "status.json").exists() and not (p / INCOMPLETE).exists()),
            key=lambda p: p.name,
            reverse=True,
        )
        if runs_dir.is_dir()
        else []
    )
    for run_dir in candidates:
        if read_json(run_dir / "status.json").get("status") == "passed":
            return run_dir
    raise fail(f"No passing run under {runs_dir}", "run the series first: `make run` (then `make publish`)")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].strip("-") or "unknown"


def reference_name(env: dict[str, Any]) -> str:
    """`<backend>-<device>-<UTC date of the run>`, e.g. cpu-amd-epyc-7b13-2026-12-03."""
    return f"{slug(str(env.get('backend')))}-{slug(str(env.get('device_name') or 'unknown'))}-{str(env.get('date_utc', ''))[:10] or 'undated'}"


# --- staleness -----------------------------------------------------------------------------------


def code_sources(nb: dict[str, Any]) -> list[str]:
    """The code cells' sources, without papermill's injected-parameters cell (it holds the run's values)."""
    return [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb["cells"]
        if c["cell_type"] == "code" and INJECTED_TAG not in c.get("metadata", {}).get("tags", [])
    ]


def stale_notebooks(executed_dir: Path, notebook_dir: Path = NOTEBOOK_DIR) -> list[str]:
    """How the executed notebooks in `executed_dir` (a reference run or a run folder) differ from
    the current notebooks' code, one line per notebook (empty: none differs)."""
    problems = []
    current = {p.name: p for p in notebook_paths(notebook_dir)}
    executed = {p.name: p for p in notebook_paths(executed_dir)}
    for name in sorted(current.keys() - executed.keys()):
        problems.append(f"{name}: not in {executed_dir.name} (a notebook added since it ran)")
    for name in sorted(executed.keys() - current.keys()):
        problems.append(f"{name}: in {executed_dir.name} but no longer in {notebook_dir.name}/")
    for name in sorted(current.keys() & executed.keys()):
        now, then = (code_sources(json.loads(p.read_text())) for p in (current[name], executed[name]))
        if now != then:
            first = next((i for i, (a, b) in enumerate(zip(now, then)) if a != b), min(len(now), len(then)))
            problems.append(
                f"{name}: code cell {first + 1} (of {len(now)} now, {len(then)} then) differs from {notebook_dir.name}/{name}"
            )
    return problems


def reference_runs(reference_dir: Path = REFERENCE_RUNS_DIR) -> list[Path]:
    """The committed reference runs (folders; hidden ones are a publish in progress)."""
    if not reference_dir.is_dir():
        return []
    return sorted(p for p in reference_dir.iterdir() if p.is_dir() and not p.name.startswith("."))


# --- scrubbing -----------------------------------------------------------------------------------


@dataclass
class Scrubber:
    """Replaces the machine's absolute paths (longest first) by placeholders in text, and any
    credential: the value of an environment variable named like one (HF_TOKEN, GITHUB_TOKEN,
    AWS_SECRET_ACCESS_KEY, ...) and every token-like string (`helpers.environment.TOKEN_LIKE`)."""

    replacements: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def for_run(cls, run_dir: Path) -> "Scrubber":
        pairs = []
        roots = [(run_dir, "<run>"), (REPO_ROOT, "<repo>"), (Path.home(), "<home>")]
        if not TMP_PATH.fullmatch(tempfile.gettempdir()):  # /tmp itself: TMP_PATH replaces the whole path
            roots.append((Path(tempfile.gettempdir()), "<tmp>"))
        for path, placeholder in roots:
            for form in {str(path), str(path.resolve())}:
                if len(form) > 1:
                    pairs.append((form, placeholder))
        pairs += [(secret, SECRET_PLACEHOLDER) for secret in secret_values()]
        host = socket.gethostname()
        if len(host) >= 6:  # a short name could be an ordinary word
            pairs.append((host, "<host>"))
        return cls(sorted(pairs, key=lambda p: len(p[0]), reverse=True))

    @staticmethod
    def _whole(path: str) -> re.Pattern[str]:
        """`path` as a whole path or path prefix: not inside a longer name (/root, not /rootfs or /x/root)."""
        return re.compile(r"(?<![\w.-])" + re.escape(path) + r"(?![\w.-])")

    def __call__(self, text: str) -> str:
        for path, placeholder in self.replacements:
            text = (
                text.replace(path, placeholder) if placeholder == SECRET_PLACEHOLDER else self._whole(path).sub(placeholder, text)
            )
        return TOKEN_LIKE.sub(SECRET_PLACEHOLDER, TMP_PATH.sub("<tmp>", text))

    def secrets_left(self, text: str) -> list[str]:
        """The credentials still in `text`, by variable value or token format (shown shortened)."""
        known = [s for s, placeholder in self.replacements if placeholder == SECRET_PLACEHOLDER and s in text]
        return [f"{s[:4]}..." for s in known + TOKEN_LIKE.findall(text)]

    def leftovers(self, text: str) -> list[str]:
        known = [
            path
            for path, placeholder in self.replacements
            if placeholder != SECRET_PLACEHOLDER and self._whole(path).search(text)
        ]
        return known + MACHINE_PATH.findall(text)


def kept_verbatim(key: str) -> bool:
    """Fields never scrubbed: base64 image data (not text; it may hold '/tmp/' by chance) and cell
    sources (the notebooks' own text, which the staleness check compares with notebooks/; a path
    there, such as a documented default, is the series' text, not the machine's)."""
    return key == "source" or (key.startswith("image/") and key != "image/svg+xml")


def map_strings(obj: Any, fn: Callable[[str], str], key: str = "") -> Any:
    """`obj` with `fn` applied to every string of a JSON value, except the fields kept verbatim."""
    if isinstance(obj, str):
        return obj if kept_verbatim(key) else fn(obj)
    if isinstance(obj, list):
        return [map_strings(v, fn, key) for v in obj]
    if isinstance(obj, dict):
        return {k: map_strings(v, fn, k) for k, v in obj.items()}
    return obj


def map_notebook_strings(nb: dict[str, Any], fn: Callable[[str], str]) -> dict[str, Any]:
    """`map_strings` over an executed notebook, where papermill's injected-parameters cell (it holds
    the run's OUT_DIR) is the one cell whose source is the run's text and is mapped too."""
    nb = map_strings(nb, fn)
    for cell in nb.get("cells", []):
        if INJECTED_TAG in cell.get("metadata", {}).get("tags", []):
            source = cell["source"]
            cell["source"] = [fn(line) for line in source] if isinstance(source, list) else fn(source)
    return nb


def root_from(folder: Path) -> str:
    """The relative path from `folder` to the repository root, as a markdown link writes it."""
    return Path(os.path.relpath(REPO_ROOT, folder.resolve())).as_posix()


def machine_paths_in(obj: Any, scrub: Scrubber) -> list[str]:
    """Paths of the machine left in a JSON value (a notebook's: see map_notebook_strings) or a text."""
    found: list[str] = []

    def collect(text: str) -> str:
        found.extend(scrub.leftovers(text))
        return text

    if isinstance(obj, dict) and "cells" in obj:
        map_notebook_strings(obj, collect)
    else:
        map_strings(obj, collect)
    return found


# --- the reference folder ------------------------------------------------------------------------


def what_it_shows(stem: str, nb: dict[str, Any]) -> str:
    info = next((n for n in NOTEBOOKS if n.stem == stem), None)
    if info:
        return info.topic
    for cell in nb["cells"]:  # a notebook not (yet) in helpers.series: its first markdown heading
        if cell["cell_type"] == "markdown":
            first = "".join(cell["source"]).strip().splitlines()
            return first[0].lstrip("# ").strip() if first else ""
    return ""


def published_claims(metrics: dict[str, Any], stem: str) -> list[str]:
    entry = metrics.get("notebooks", {}).get(stem, {}).get("claims")
    # a claim's text is often written as a summary's bullet ("- ..."): the index makes its own bullets; one
    # sentence can back several claims (one per metric it compares), and the index prints it once
    texts = [
        c["text"].strip().removeprefix("- ").strip()
        for c in (entry or {}).get("value", [])
        if isinstance(c, dict) and c.get("text")
    ]
    return list(dict.fromkeys(texts))


def index_markdown(
    name: str,
    env: dict[str, Any],
    status: dict[str, Any],
    metrics: dict[str, Any],
    notebooks: list[tuple[str, dict[str, Any]]],
    figures: dict[str, list[str]],
    run: str,
) -> str:
    seconds = {r["notebook"]: r.get("seconds") for r in status.get("notebooks", [])}
    own = sum(s for s in seconds.values() if s)
    device = f"{env.get('device_name')} x{env.get('device_count')}"
    lines = [
        f"# Reference run `{name}`",
        "",
        f"The whole series executed by `make run` on backend `{env.get('backend')}` ({device}), published by "
        "`make publish` (series_tools/publish.py): every notebook with its outputs, as that run left them. "
        "Every number and conclusion below is that run's, on that machine; a run of yours will measure its own. "
        "Terms are defined in the [glossary](../../CHEATSHEET.md#glossary).",
        "",
        "| | |",
        "|---|---|",
        f"| backend | `{env.get('backend')}`: {env.get('reason', '')} |",
        f"| device | {device} |",
        f"| versions | Python {env.get('python')}, torch {env.get('torch')}, torch-neuronx {env.get('torch_neuronx') or '—'}, "
        f"neuronx-cc {env.get('neuronx_cc') or '—'} |",
        f"| machine | {env.get('platform')}, {env.get('cpu_count')} CPUs, instance type {env.get('instance_type') or '—'} |",
        f"| commit | {env.get('git_commit') or '—'} |",
        f"| date (UTC) | {run[:4]}-{run[4:6]}-{run[6:11]}:{run[11:13]}:{run[13:15]} (run `{run}`, the run folder's name; "
        f"its environment was recorded at {env.get('date_utc')}) |",
        f"| run time | {status.get('seconds')} s for {len(notebooks)} notebooks (their own times below add up to {own:.1f} s; "
        "the rest is the work around them: rendering each notebook's HTML handout, merging the metrics, the consistency check) |",
        "",
        "Files: the executed notebooks (below), `environment.json` (the run's environment), `metrics.json` "
        "(every metric the notebooks published, with its unit), `run_times.json` (each notebook's run time, "
        "which the instructor guide and the start lines of runs made after this one quote; the start lines in this run's notebooks "
        "quote the reference run committed before it), `NN_name/*.png` (the figures each notebook saved). "
        "Traces and profile folders are left out (size); a run of your own writes them. Absolute paths of the "
        "machine are replaced by `<run>` (the run folder), `<repo>` (the checkout), `<home>`, `<tmp>` and `<host>`.",
        "",
        "## Notebooks",
        "",
        "| notebook | what it shows | run time (s) | figures |",
        "|---|---|---|---|",
    ]
    for stem, nb in notebooks:
        figs = ", ".join(f"[{Path(f).stem}]({f})" for f in figures.get(stem, [])) or "—"
        lines.append(f"| [{stem}]({stem}.ipynb) | {what_it_shows(stem, nb)} | {seconds.get(stem, '—')} | {figs} |")
    lines += [
        "",
        "![Notebook run times](summary.png)",
        "",
        "## Conclusions this run published",
        "",
        "Each sentence is generated by its notebook from the run's metrics and recorded with the metrics it "
        'compares (its "claims" metric, analysis/claims.py).',
        "",
    ]
    for stem, _ in notebooks:
        claims = published_claims(metrics, stem)
        lines.append(f"### [{stem}]({stem}.ipynb)")
        lines.append("")
        lines += [f"- {text}" for text in claims] or ["No conclusions published as claims: read them in the notebook."]
        lines.append("")
    lines += [
        "## Refresh",
        "",
        f"`{REFRESH_COMMAND}` (a fresh run of the current notebooks, published over this folder). "
        "The test suite fails when a notebook's code differs from this folder's (tests/test_reference_runs.py).",
        "",
    ]
    return "\n".join(lines)


def figure_files(run_dir: Path, stem: str) -> list[Path]:
    """The PNG figures a notebook saved in its folder (none from inside a cache or profile folder)."""
    folder = run_dir / stem
    return sorted(p for p in folder.rglob("*.png") if not any(LEFT_OUT.search(part) for part in p.relative_to(folder).parts[:-1]))


def folder_sizes(folder: Path) -> list[tuple[int, Path]]:
    return sorted(((p.stat().st_size, p) for p in folder.rglob("*") if p.is_file()), key=lambda t: t[0], reverse=True)


def megabytes(n: int) -> str:
    return f"{n / 1e6:.2f} MB"


def run_id(run_dir: Path, env: dict[str, Any]) -> str:
    """The run's id, `YYYYMMDDTHHMMSSZ`: its folder's name (runs/<id>-<backend>/), which the
    notebooks' paths show; the date its environment recorded (a second or so later) only for a
    folder named otherwise. run_times.json and the README's date row both quote it, so they agree."""
    named = re.match(r"\d{8}T\d{6}Z", run_dir.name)
    return named.group(0) if named else re.sub(r"[-:]", "", str(env.get("date_utc", "")))[:15] + "Z"


def run_times(status: dict[str, Any], env: dict[str, Any], run: str) -> dict[str, Any]:
    """The run time of each notebook and the machine that measured them: RUN_TIMES_FILE, which
    helpers.series reads for the notebooks' start lines, 00's plan and the instructor guide. `run`
    is the run's id (`run_id`), as the reference run's README shows it."""
    cores = f"{env['cpu_count']}-core " if env.get("cpu_count") else ""
    return {
        "measured_on": f"a {cores}{env.get('device_name')} machine, torch {env.get('torch')}, run {run}",
        "seconds": {r["notebook"]: r["seconds"] for r in status.get("notebooks", []) if r.get("seconds") is not None},
    }


def write_contents(run_dir: Path, dest: Path, name: str, status: dict[str, Any], env: dict[str, Any], scrub: Scrubber) -> None:
    """Everything of the reference run `name` into `dest` (an empty folder)."""
    metrics = map_strings(read_json(run_dir / METRICS_FILE), scrub)
    notebooks, figures = [], {}
    for path in notebook_paths(run_dir):
        nb = relink(map_notebook_strings(json.loads(path.read_text()), scrub), was=root_from(run_dir))  # run folder's links
        write_atomic(dest / path.name, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        notebooks.append((path.stem, nb))
        for fig in figure_files(run_dir, path.stem):
            target = dest / fig.relative_to(run_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(fig, target)
            figures.setdefault(path.stem, []).append(target.relative_to(dest).as_posix())
    if (run_dir / "summary.png").exists():  # the run times chart, shown in the index
        shutil.copyfile(run_dir / "summary.png", dest / "summary.png")
    env = map_strings(env, scrub)
    write_atomic(dest / "environment.json", json.dumps(env, indent=2, sort_keys=True) + "\n")
    write_atomic(dest / METRICS_FILE, json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    run = run_id(run_dir, env)
    write_atomic(dest / RUN_TIMES_FILE, json.dumps(run_times(status, env, run), indent=2, sort_keys=True) + "\n")
    write_atomic(dest / "README.md", scrub(index_markdown(name, env, status, metrics, notebooks, figures, run)))


def check_contents(dest: Path, scrub: Scrubber, budget: int) -> None:
    """Refuse a folder with a machine path or a credential left in it, or above the size budget."""
    for path in sorted(dest.rglob("*")):
        if path.is_file() and path.suffix in (".ipynb", ".json", ".md"):
            secrets = scrub.secrets_left(path.read_text())  # the whole file: cell sources and images included
            if secrets:
                raise fail(
                    f"{path.name} still holds a credential ({secrets[0]})",
                    "remove it from the notebook's source or output (never print a token), then `make run && make publish`",
                )
            obj = json.loads(path.read_text()) if path.suffix != ".md" else path.read_text()
            left = machine_paths_in(obj, scrub)
            if left:
                raise fail(
                    f"{path.name} still holds a path of this machine: {left[0]!r}",
                    "add its root to series_tools.publish.Scrubber.for_run (or MACHINE_PATH if it is documentation)",
                )
    sizes = folder_sizes(dest)
    total = sum(s for s, _ in sizes)
    if total > budget:
        largest = ", ".join(f"{p.relative_to(dest)} ({megabytes(s)})" for s, p in sizes[:3])
        raise fail(
            f"The reference run would be {megabytes(total)}, above its budget of {megabytes(budget)}; largest: {largest}",
            f"make the largest notebook's outputs smaller (fewer or smaller figures: figsize/dpi; shorter printed "
            f"tables), then `{REFRESH_COMMAND}`",
        )


def publish(
    run_dir: Path, out_dir: Path = REFERENCE_RUNS_DIR, budget: int = SIZE_BUDGET_BYTES, notebook_dir: Path = NOTEBOOK_DIR
) -> Path:
    """Write the reference run of `run_dir` under `out_dir`; return its folder."""
    run_dir = run_dir.resolve()
    status, env = check_run_dir(run_dir)
    if not (run_dir / METRICS_FILE).exists():
        raise fail(f"{run_dir} has no {METRICS_FILE}", "run the series again: `make run`")
    not_run = sorted({p.stem for p in notebook_paths(notebook_dir)} - {r.get("notebook") for r in status.get("notebooks", [])})
    if not_run:  # a run of some notebooks (--notebooks): not a notebook "added since it ran"
        raise fail(
            f"{run_dir.name} is a partial run: it did not run {', '.join(not_run)}",
            "publish a run of the whole series: `make run` (without --notebooks), then `make publish`",
        )
    stale = stale_notebooks(run_dir, notebook_dir)
    if stale:
        raise fail(
            f"{run_dir.name} was not made from the current notebooks: " + "; ".join(stale),
            f"publish a fresh run of them: `{REFRESH_COMMAND}`",
        )
    name = reference_name(env)
    ensure_writable_dir(out_dir)
    final = out_dir / name
    scrub = Scrubber.for_run(run_dir)
    partial = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=out_dir))
    try:
        write_contents(run_dir, partial, name, status, env, scrub)
        partial.chmod(0o755)  # mkdtemp makes it private
        check_contents(partial, scrub, budget)
        replaced = [p for p in reference_runs(out_dir) if p.name.startswith(f"{slug(str(env.get('backend')))}-")]
        old = [p.rename(out_dir / f".{p.name}.replaced-{os.getpid()}") for p in replaced]
        try:
            partial.rename(final)
        except OSError:
            for moved, original in zip(old, replaced):
                moved.rename(original)
            raise
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    for moved in old:
        shutil.rmtree(moved, ignore_errors=True)
    for p in replaced:
        if p.name != name:
            print(f"replaced the earlier {env.get('backend')} reference run {p.name}")
    return final


def write_overview(out_dir: Path = REFERENCE_RUNS_DIR) -> Path:
    """docs/reference-runs/README.md: every committed reference run with a link to each of its
    notebooks. The one stable address the notebooks' intros link to ("see it executed"), since a
    reference run's own folder is named by its date."""
    lines = [
        "# Reference runs",
        "",
        "Each folder is one `make run` published by `make publish`: the executed notebooks with their outputs",
        "and figures, measured on the machine its own README.md names. Nothing here was measured on your machine.",
        "",
    ]
    for run in reference_runs(out_dir):
        notebooks = sorted(p.name for p in run.glob("[0-9][0-9]_*.ipynb"))
        lines += [
            f"## [{run.name}]({run.name}/README.md)",
            "",
            *(f"- [{name.removesuffix('.ipynb')}]({run.name}/{name})" for name in notebooks),
            "",
        ]
    if not reference_runs(out_dir):
        lines.append("None is committed yet: `make run && make publish` makes one.")
    path = out_dir / "README.md"
    write_atomic(path, "\n".join(lines).rstrip() + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m series_tools.publish", description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", nargs="?", help="a passing run folder (default: the newest under runs/)")
    parser.add_argument("--out", default=str(REFERENCE_RUNS_DIR), help="folder of reference runs (default: docs/reference-runs/)")
    args = parser.parse_args(argv)
    try:
        run_dir = Path(args.run_dir) if args.run_dir else newest_passing_run()
        final = publish(run_dir, Path(args.out))
        write_overview(Path(args.out))
    except SeriesError as exc:
        if isinstance(exc, OutputDirError):  # its fix names the notebooks' OUT_DIR; this tool takes --out
            exc = OutputDirError(
                exc.problem,
                f"free space there, or pass --out a folder you can write (e.g. --out {tempfile.gettempdir()}/reference-runs)",
            )
        print(f"error: {exc}", file=sys.stderr)
        return 2
    total = sum(s for s, _ in folder_sizes(final))
    print(
        f"Published {run_dir} as {final} ({megabytes(total)} of {megabytes(SIZE_BUDGET_BYTES)}); "
        f"index: {final / 'README.md'}. Commit it with `git add {final.relative_to(REPO_ROOT) if final.is_relative_to(REPO_ROOT) else final}`."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
