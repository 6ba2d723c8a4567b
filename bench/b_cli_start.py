"""#2 `ito-tui --help` and `ito-tui runs --json` against `python -c "import httpx"`.

Rounds rotate the order of the three commands; the ratio is the median of
per-round ratios. `-X importtime` runs of both commands prove (or disprove)
that textual and rich stay out of the CLI path.
"""

from __future__ import annotations

import resource
import subprocess
import time

from . import apps
from .context import Context, backend
from .record import Record
from .stats import ratio, summary

FLOOR = (
    "import httpx, pydantic\n"
    "class M(pydantic.BaseModel):\n    x: int\n"
    "M.model_validate_json(b'{\"x\": 1}')"
)


def _commands(ctx: Context) -> dict[str, list[str]]:
    return {
        "import httpx": [ctx.python, "-c", "import httpx"],
        "--help": [ctx.python, ctx.ito_tui, "--help"],
        "runs --json": [ctx.python, ctx.ito_tui, "runs", "--json"],
        # Not a target: the floor of any command that validates a response with a pydantic
        # model (importing pydantic alone is cheap; building the first model is not).
        "import httpx, pydantic": [ctx.python, "-c", FLOOR],
    }


CPU: dict[str, list[float]] = {}
"""CPU seconds (user + system) of each command's runs, from RUSAGE_CHILDREN deltas."""


def _time(argv: list[str], env: dict[str, str], name: str = "") -> float:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(argv, env=env, capture_output=True, timeout=60, check=False)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if name:
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        CPU.setdefault(name, []).append(cpu)
    if res.returncode != 0:
        raise RuntimeError(f"{argv[2:]} exited {res.returncode}: {res.stderr[-500:]!r}")
    return dt


def heavy_imports(ctx: Context, argv: list[str], env: dict[str, str]) -> dict[str, object]:
    """Which of textual/rich/fastapi/uvicorn a command imports, and its total import time."""
    res = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    found: dict[str, int] = {}
    total_us = 0
    for line in res.stderr.splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        _self_us, cum_us, raw = line[len("import time:") :].split("|")
        if not cum_us.strip().isdigit():
            continue
        name = raw.strip()
        if len(raw) - len(raw.lstrip()) == 1:  # a top-level import: its cumulative time counts
            total_us += int(cum_us)
        top = name.split(".")[0]
        if top in {"textual", "rich", "fastapi", "uvicorn", "starlette"}:
            found[top] = found.get(top, 0) + 1
    return {"heavy_modules": found, "import_ms": round(total_us / 1000, 1)}


def run(ctx: Context) -> list[Record]:
    rounds = ctx.count(12, 2)
    cmds = _commands(ctx)
    with backend(speed=1.0) as be:
        env = apps.app_env(be)
        for argv in cmds.values():
            _time(argv, env)  # warm-up
        times: dict[str, list[float]] = {k: [] for k in cmds}
        for r in range(rounds):
            names = list(cmds)
            names = names[r % len(names) :] + names[: r % len(names)]
            for name in names:
                times[name].append(_time(cmds[name], env, name))
        imports = {k: heavy_imports(ctx, cmds[k], env) for k in ("--help", "runs --json")}
    base = times["import httpx"]
    floor = [a / b for a, b in zip(times["import httpx, pydantic"], base, strict=True)]
    cpu_base = summary(CPU.get("import httpx", []))["median"]
    records = []
    for i, name in enumerate(("--help", "runs --json")):
        per_round = [a / b for a, b in zip(times[name], base, strict=True)]
        r = summary(per_round)["median"]
        imp = imports[name]
        no_textual = "textual" not in imp["heavy_modules"]  # type: ignore[operator]
        ctx.log(f"{name}: imports {imp}")
        records.append(
            Record(
                2,
                "cli_start",
                f"`ito-tui {name}` wall time",
                "s",
                "≤ 1.5× baseline, no textual import",
                summary(times[name]),
                summary(base),
                '`python -c "import httpx"`',
                ratio=r,
                met=r <= 1.5 and no_textual,
                notes=[
                    f"{rounds} rotated rounds; -X importtime: heavy modules "
                    f"{imp['heavy_modules'] or 'none'}, top-level imports "
                    f"{imp['import_ms']} ms",
                    f"CPU time (less sensitive to machine load): "
                    f"{summary(CPU.get(name, []))['median'] * 1000:.0f} ms vs "
                    f"{cpu_base * 1000:.0f} ms, ratio "
                    f"{summary(CPU.get(name, []))['median'] / cpu_base:.2f}×",
                    f"reference: `import httpx, pydantic` + one model validating one body is "
                    f"{summary(floor)['median']:.2f}× the baseline",
                ],
                sub="ab"[i],
                extra={
                    "importtime": imp,
                    "ratio_of_medians": ratio(
                        summary(times[name])["median"], summary(base)["median"]
                    ),
                },
            )
        )
    return records
