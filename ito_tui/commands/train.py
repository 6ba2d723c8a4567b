"""`estimate` and `train`: the seed's `ecc ito train` flags against a completed booking.

`train` shows the estimate on stderr, asks for confirmation on a terminal (`--yes`
for scripts; without a terminal and without `--yes` it refuses), submits once with
an Idempotency-Key and prints only the run id on stdout (`--json`: the Run), so
`RUN=$(ito-tui train … --yes)` works; `--watch` then follows the run, exactly as
`watch` (with `--json`: one event per line, the terminal event last).
"""

from __future__ import annotations

import argparse
import uuid
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from ito_tui.describe import SPEC_FLAGS, field_name
from ito_tui.format import usd

from .bookings import NO_BOOKING_HINT
from .context import CommandError, Context, print_refusals
from .exitcodes import ExitCode
from .ids import complete_ids
from .output import confirm, interactive, safe, schema_help
from .render import render_estimate

if TYPE_CHECKING:
    from ito_tui.client import ItoClient
    from ito_tui.contract import Booking, Capabilities, TrainingSpec, TrainingSpecEcho

SPEC_EXAMPLE = (
    "--booking bk_123 --model-size 8B --data catalog://fineweb-edu@1.3 \\\n"
    "      --target general --budget-usd 30000 --post-training dpo"
)


def _money_arg(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"not an amount in USD: {text!r}") from None
    if not value.is_finite() or value <= 0:
        raise argparse.ArgumentTypeError("must be a positive amount in USD")
    return value


def _spec_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("training spec (the seed's flags)")
    complete_ids(
        g.add_argument(
            "--from",
            dest="from_run",
            metavar="RUN",
            help="start from that run's spec (booking, data, model size, tokens, budget, …); "
            "the flags given override its fields",
        ),
        "runs",
    )
    complete_ids(
        g.add_argument("--booking", metavar="ID", help="a completed booking id (see `bookings`)"),
        "bookings",
    )
    g.add_argument("--model-size", metavar="SIZE", help="e.g. 150M, 1.5B, 8B, 70B")
    g.add_argument("--data", metavar="REF", help="s3://…, hf://org/ds@rev, catalog://name@ver")
    g.add_argument("--target", metavar="CAP", help="target capability, e.g. general")
    g.add_argument("--budget-usd", metavar="N", type=_money_arg, help="spend ceiling in USD")
    g.add_argument(
        "--post-training",
        choices=("sft", "dpo", "rlvr", "none"),
        help="last phase (none: no post-training, e.g. over --from's)",
    )
    g.add_argument("--data-kind", choices=("curated", "custom"), help="default curated")
    g.add_argument("--tokens", metavar="N", type=int, help="target tokens (default 20 × params)")
    g.add_argument("--seq-len", metavar="N", type=int, help="sequence length (default 8192)")
    # Simulator-only knobs for demos and tests; sent only to a simulated backend.
    g.add_argument("--scenario", help=argparse.SUPPRESS)
    g.add_argument("--seed", type=int, help=argparse.SUPPRESS)


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add estimate and train to the subcommands."""
    p = sub.add_parser(
        "estimate",
        parents=[common],
        formatter_class=fmt,
        help="plan, time and cost of a training spec (submits nothing)",
        description="Ask the backend to plan a training spec on a completed booking: "
        "parallelism and precision, memory per GPU against HBM, throughput, time and cost "
        "p50/p90 against the budget, warnings and refusals. Exit 9 when refused.",
        epilog=f"examples:\n  ito-tui estimate {SPEC_EXAMPLE}",
    )
    _spec_arguments(p)
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help("print the Estimate as JSON", "Estimate"),
    )
    p.set_defaults(handler=cmd_estimate)

    p = sub.add_parser(
        "train",
        parents=[common],
        formatter_class=fmt,
        help="submit a training run on a completed booking",
        description="Estimate, confirm, then submit a training run. Asks for confirmation on "
        "a terminal; --yes for scripts (without a terminal it refuses unless --yes).",
        epilog=f"examples:\n  ito-tui train {SPEC_EXAMPLE} --yes --watch\n"
        "  ito-tui train --from run_123 --budget-usd 40000    (run_123's spec, a new budget)\n"
        f"  RUN=$(ito-tui train {SPEC_EXAMPLE} --yes -q)\n"
        f"  ito-tui train {SPEC_EXAMPLE} --yes --watch --json | jq -r .type",
    )
    _spec_arguments(p)
    p.add_argument("--yes", "-y", action="store_true", help="submit without asking")
    p.add_argument("--watch", action="store_true", help="follow the run; exit with its outcome")
    p.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no estimate or hints on stderr (the estimate is still shown before asking, and "
        "a refusal's reasons always are)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help(
            "print the Run as JSON instead of its id; with --watch one event per line, "
            "exactly as `watch --json`",
            "Run",
        ),
    )
    p.set_defaults(handler=cmd_train)


async def completed_booking(client: ItoClient, booking_id: str | None) -> Booking:
    """The booking to train on, or a CommandError saying a completed booking is needed."""
    from ito_tui.client.errors import NotFound

    if not booking_id:
        done = await client.bookings(status="completed")
        have = ", ".join(safe(b.booking_id) for b in done[:8])
        raise CommandError(
            "--booking is required: "
            + (f"completed bookings: {have}" if have else NO_BOOKING_HINT),
            ExitCode.USAGE,
        )
    try:
        booking = await client.booking(booking_id)
    except NotFound:
        raise CommandError(
            f"booking {safe(booking_id)} not found: {NO_BOOKING_HINT}", ExitCode.NOT_FOUND
        ) from None
    if str(booking.status) != "completed":
        raise CommandError(
            f"booking {safe(booking_id)} is {safe(booking.status)}, not completed: "
            f"{NO_BOOKING_HINT}",
            ExitCode.USAGE,
        )
    return booking


SPEC_ARGS: dict[str, str] = {
    "booking_id": "booking",
    "model_size": "model_size",
    "data_ref": "data",
    "data_kind": "data_kind",
    "target_capability": "target",
    "budget_usd": "budget_usd",
    "post_training": "post_training",
    "target_tokens": "tokens",
    "seq_len": "seq_len",
}
"""The argparse dest of each TrainingSpec field's flag (`describe.SPEC_FLAGS` names them)."""


async def spec_base(ctx: Context, client: ItoClient) -> TrainingSpecEcho | None:
    """`--from RUN`'s spec (a run that is not found: exit 11), or None without `--from`.

    Its fields fill every flag not given, so the flags override the run's spec."""
    a = ctx.args
    if a.from_run is None:
        return None
    from ito_tui.client.errors import NotFound

    try:
        run = await client.run(a.from_run)
    except NotFound:
        raise CommandError(
            f"--from: run {safe(a.from_run)} not found (see `ito-tui runs`)", ExitCode.NOT_FOUND
        ) from None
    base = run.spec
    for field, dest in SPEC_ARGS.items():
        if getattr(a, dest) is None:
            value = getattr(base, field)
            setattr(a, dest, value)
    return base


def free_booking_check(ctx: Context, booking: Booking, base: TrainingSpecEcho | None) -> None:
    """With `--from` and no `--booking`, the run's booking must be free: else say so and
    how to pick another, before any estimate (a busy booking would be refused anyway)."""
    if base is None or ctx.args.booking != base.booking_id or not booking.active_run_id:
        return
    raise CommandError(
        f"booking {safe(booking.booking_id)} of run {safe(ctx.args.from_run)} is busy with "
        f"{safe(booking.active_run_id)}: pass --booking ID (see `ito-tui bookings`)",
        ExitCode.USAGE,
    )


def build_spec(ctx: Context, caps: Capabilities) -> TrainingSpec:
    """The TrainingSpec from the flags (and `--from`'s spec under them, `spec_base`); sim
    knobs only for a simulated backend."""
    from pydantic import ValidationError

    from ito_tui.contract import SimOptions, TrainingSpec

    a = ctx.args
    missing = [
        flag
        for flag, value in (
            ("--model-size", a.model_size),
            ("--data", a.data),
            ("--target", a.target),
            ("--budget-usd", a.budget_usd),
        )
        if value is None
    ]
    if missing:
        raise CommandError(f"missing {', '.join(missing)}", ExitCode.USAGE)
    # The form's own checks and words (`Use a number and M or B, e.g. 8B`), under the flag.
    from ito_tui.spec_checks import check_data_ref, check_model_size

    problems = [
        f"{flag}: {message}"
        for flag, message in (
            ("--model-size", check_model_size(a.model_size)),
            ("--data", check_data_ref(a.data)),
        )
        if message
    ]
    if problems:
        raise CommandError("invalid spec: " + safe("; ".join(problems)), ExitCode.USAGE)
    fields: dict[str, Any] = {
        "booking_id": a.booking,
        "model_size": a.model_size,
        "data_ref": a.data,
        "data_kind": a.data_kind or "curated",
        "target_capability": a.target,
        "budget_usd": a.budget_usd,
        "post_training": None if a.post_training == "none" else a.post_training,
        "target_tokens": a.tokens,
    }
    if a.seq_len is not None:
        fields["seq_len"] = a.seq_len
    if a.scenario is not None or a.seed is not None:
        if caps.simulated:
            fields["sim"] = SimOptions(scenario=a.scenario, seed=a.seed)
        else:
            ctx.out.warn("--scenario/--seed ignored: the backend is not simulated")
    try:
        return TrainingSpec(**fields)
    except ValidationError as exc:
        lines = [
            f"{field_name(err['loc'], SPEC_FLAGS)}: {err['msg']}"
            for err in exc.errors(include_url=False, include_input=False)
        ]
        raise CommandError("invalid spec: " + safe("; ".join(lines)), ExitCode.USAGE) from None


def cmd_estimate(ctx: Context) -> int:
    """Print the backend's estimate; exit 9 when the spec would be refused."""

    async def body() -> int:
        async with ctx.client() as client:
            caps = await client.capabilities()
            await client.require("estimates.create")
            await spec_base(ctx, client)
            booking = await completed_booking(client, ctx.args.booking)
            spec = build_spec(ctx, caps)
            est = await client.estimate(spec)
        if ctx.args.json:
            ctx.out.json(est)
        else:
            _demo_banner(ctx, caps)
            render_estimate(ctx.out, est, spec.budget_usd, booking)
        return int(ExitCode.REFUSED if est.refused else ExitCode.OK)

    return ctx.run(body)


def _demo_banner(ctx: Context, caps: Capabilities) -> None:
    if caps.simulated:
        ctx.out.info(ctx.out.style("DEMO: simulated backend", "yellow", err=True))


def cmd_train(ctx: Context) -> int:
    """Estimate, confirm, submit (one Idempotency-Key), print the run id, maybe watch."""
    from .follow import follow

    async def body() -> int:
        async with ctx.client() as client:
            caps = await client.capabilities()
            # Say "not implemented" before asking anything of the operator.
            await client.require("runs.create")
            base = await spec_base(ctx, client)
            booking = await completed_booking(client, ctx.args.booking)
            free_booking_check(ctx, booking, base)
            spec = build_spec(ctx, caps)
            _demo_banner(ctx, caps)
            if base is not None and not ctx.args.quiet:
                ctx.out.info(f"spec from {safe(ctx.args.from_run)}, with the flags given over it")
            # stdout carries the run id (or the Run) only: the estimate is for a person.
            quiet = ctx.args.quiet and ctx.args.yes
            if caps.has("estimates.create"):
                est = await client.estimate(spec)
                if not quiet:
                    render_estimate(ctx.out.to_stderr(), est, spec.budget_usd, booking)
                if est.refused:
                    ctx.out.error("not submitted: the backend refuses this spec")
                    if quiet:
                        print_refusals(ctx.out, est.refusals, err=True)
                    return int(ExitCode.REFUSED)
            elif not quiet:
                ctx.out.warn("the backend offers no estimates; submitting without one")
            if not ctx.args.yes:
                if not interactive():
                    raise CommandError(
                        "not submitted: confirmation needed; pass --yes to submit "
                        "without a terminal",
                        ExitCode.USAGE,
                    )
                question = (
                    f"Submit this run on {safe(booking.booking_id)} with a budget of "
                    f"{usd(spec.budget_usd)}?"
                )
                if not confirm(ctx.out, question):
                    ctx.out.info("not submitted")
                    return 0
            run = await client.create_run(spec, idempotency_key=str(uuid.uuid4()))
            if not quiet:
                ctx.out.info(f"submitted; follow it with: ito-tui watch {safe(run.run_id)}")
            as_json: bool = ctx.args.json
            if as_json and not ctx.args.watch:
                ctx.out.json(run)
            elif not as_json:
                ctx.out.line(safe(run.run_id))
            if not ctx.args.watch:
                return 0
            return await follow(ctx, client, run.run_id, as_json=as_json, since_seq=0)

    return ctx.run(body)
