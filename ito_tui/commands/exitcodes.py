"""Exit codes of the `ito-tui` command, and how a run's outcome maps onto them."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What `ito-tui` returns to the shell; scripts may rely on these values."""

    OK = 0
    """Success; for `watch` and `train --watch`: the run completed."""
    ERROR = 1
    """Unexpected error (e.g. a backend answer that does not match the contract)."""
    USAGE = 2
    """Bad usage or validation (invalid spec or flag, no completed booking, no --yes)."""
    GATE_FAILED = 3
    """The run was stopped by a failed stage gate."""
    RUN_FAILED = 4
    """The run failed otherwise (budget exhausted, fatal error)."""
    CANCELLED = 5
    """The run was cancelled."""
    NOT_IMPLEMENTED = 6
    """The backend does not implement a capability this command needs (it is named)."""
    AUTH = 7
    """Authentication: no token, token rejected (401/403), or no usable keyring."""
    UNREACHABLE = 8
    """The backend could not be reached (connection refused, timeout, 5xx, rate limited)."""
    REFUSED = 9
    """The backend refused a submission or decision (refusal reasons are printed)."""
    CONFORMANCE = 10
    """`check-backend`: at least one conformance check failed."""
    NOT_FOUND = 11
    """No such run, booking or proposal (the backend answered 404): not a usage error."""
    UNTIL = 12
    """`watch --until proposal|gate`: what it waited for happened (a proposal was created,
    a gate passed); a failed gate exits 3 and `--until end` with the run's outcome."""


OUTCOME_EXIT: dict[str | None, ExitCode] = {
    "completed": ExitCode.OK,
    "gate_failed": ExitCode.GATE_FAILED,
    "failed": ExitCode.RUN_FAILED,
    "cancelled": ExitCode.CANCELLED,
}
"""`RunState.outcome` -> exit code of `watch` / `train --watch`."""


def exit_for_outcome(outcome: str | None) -> ExitCode:
    """The exit code for a run outcome; a run still going (None) is an error here."""
    return OUTCOME_EXIT.get(outcome, ExitCode.ERROR)


EXIT_CODES_EPILOG = """\
exit codes:
  0  ok; for watch and train --watch: the run completed
  1  unexpected error (e.g. a backend answer that does not match the contract)
  2  bad usage or validation (also: no completed booking, no --yes without a terminal)
  3  run stopped by a failed stage gate
  4  run failed otherwise (budget exhausted, fatal)
  5  run cancelled
  6  capability not implemented by the backend (named, e.g. runs.create)
  7  authentication: no token, token rejected, or no usable keyring
  8  backend unreachable
  9  submission or decision refused by the backend (reasons printed)
 10  check-backend: a conformance check failed
 11  not found: no such run, booking or proposal
 12  watch --until proposal|gate: it happened (a failed gate exits 3)"""
