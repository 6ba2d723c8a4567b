"""Projection alerts: once per crossing of the booking's end or the budget by the p90."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from ito_tui.alerting.model import ALERT_KINDS, ProjectionCrossing, projection_alert
from ito_tui.state import Projection, RunState

RUN = "run_7f3a"
NOW = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
END = NOW + timedelta(days=10)
BUDGET = Decimal(30_000)


def proj(
    days_p90: float, usd_p90: float, *, known: bool = True, measured_s: float = 7 * 3600.0
) -> Projection:
    f90 = NOW + timedelta(days=days_p90)
    s90 = Decimal(str(usd_p90))
    return Projection(
        "pretrain",
        NOW + timedelta(days=days_p90 * 0.9),
        f90,
        s90 * Decimal("0.9"),
        s90,
        days_p90 * 0.9 * 86_400 if known else None,
        days_p90 * 86_400 if known else None,
        f90 > END,
        s90 > BUDGET,
        measured_s,
        "",
        "",
        END,
        BUDGET,
    )


def state(seq: int) -> RunState:
    return replace(RunState.empty(RUN), last_seq=seq, current_stage="pretrain")


def test_one_alert_per_crossing_not_per_projection() -> None:
    watch = ProjectionCrossing()
    series = [(9, 20_000), (10.5, 20_000), (11, 20_000), (9.99, 20_000), (10.2, 20_000)]
    # Past the end, still past, just inside (within the re-arm margin), past again: once.
    alerts = [watch.check(state(i), proj(d, u), at=NOW) for i, (d, u) in enumerate(series)]
    sent = [a for a in alerts if a is not None]
    assert len(sent) == 1 and sent[0].kind == "projection" and sent[0].seq == 1
    assert sent[0].title == "Will finish late"
    assert sent[0].summary == (
        f"{RUN}: at the measured pace, p90 finish Dec 10 08:00 UTC, after the booking ends "
        "(Dec 9 20:00 UTC)."
    )
    # Well inside (by more than 2 % of the remaining time), then past again: a new alert.
    assert watch.check(state(10), proj(8, 20_000), at=NOW) is None
    again = watch.check(state(11), proj(10.5, 20_000), at=NOW)
    assert again is not None and again.key() != sent[0].key()


def test_budget_and_both_at_once_and_unknown_projections() -> None:
    watch = ProjectionCrossing()
    assert watch.check(state(1), proj(11, 40_000, known=False), at=NOW) is None
    both = watch.check(state(2), proj(11, 40_000), at=NOW)
    assert both is not None and both.title == "Late and over budget"
    assert "p90 spend $40,000.00, over the budget of $30,000.00" in both.summary
    assert watch.check(state(3), proj(11, 41_000), at=NOW) is None
    alone = projection_alert(state(4), proj(1, 40_000), late=False, over=True, at=NOW)
    assert alone.title == "Will go over budget" and "booking" not in alone.summary
    assert "projection" in ALERT_KINDS


def test_the_summary_is_inert() -> None:
    evil = replace(state(1), run_id="run\x1b]2;pwned\x07")
    a = projection_alert(evil, proj(11, 1), late=True, over=False, at=NOW)
    assert "\x1b" not in a.summary and "\x07" not in a.summary


def test_a_projection_measured_on_too_little_does_not_alert_yet() -> None:
    # An hour measured of a 10-day stage: the p90 still swings; the alert waits for 6 h of
    # the run's clock (or 5 % of what it projects), and then alerts once.
    watch = ProjectionCrossing()
    assert watch.check(state(1), proj(11, 20_000, measured_s=3600.0), at=NOW) is None
    later = watch.check(state(2), proj(11, 20_000, measured_s=6 * 3600.0), at=NOW)
    assert later is not None and later.title == "Will finish late"
    # A short stage settles sooner: 5 % of a 2-day projection is 2.4 h.
    short = ProjectionCrossing()
    assert short.check(state(3), proj(2, 40_000, measured_s=3 * 3600.0), at=NOW) is not None
