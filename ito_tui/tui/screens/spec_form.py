"""SpecFormScreen: fill a training spec for one booking, watch the live estimate, submit once.

Every change re-validates the form (messages next to the fields) and, once the
spec is complete, asks the backend for an estimate in an exclusive, debounced
worker: a new keystroke cancels the pending request, so only the latest spec is
ever estimated. Submit is enabled only for a valid spec whose fresh estimate
the backend did not refuse; it confirms, then POSTs with one Idempotency-Key
per spec, so pressing it twice creates one run.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Collapsible, Input, Select, Static
from textual.worker import Worker

from ito_tui.describe import SPEC_LABELS
from ito_tui.format import count, ends_in
from ito_tui.textsafe import safe
from ito_tui.tui.errors import forward_failure
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.forms import (
    CUSTOM_DATA_NOTE,
    FIELDS,
    FormValues,
    build_spec,
    default_tokens,
    server_errors,
)
from ito_tui.tui.messages import RunSubmitted
from ito_tui.tui.screens.confirm_submit import ConfirmSubmitModal
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.estimate import EstimatePanel
from ito_tui.tui.widgets.field_row import FieldRow
from ito_tui.tui.widgets.header import HeaderStrip
from ito_tui.tui.widgets.spec_fields import spec_fields
from ito_tui.tui.widgets.steady_footer import SteadyFooter

if TYPE_CHECKING:
    from ito_tui.contract import Booking, Capabilities, Estimate, TrainingSpec

DEBOUNCE_S = 0.35
"""Quiet time after the last change before an estimate is requested."""

_INPUTS = ("model_size", "data_ref", "budget_usd", "target_tokens", "seq_len")
_SELECTS = ("data_kind", "target_capability", "post_training")


class SpecFormScreen(StyledOnFirstShow, Screen[None]):
    """The spec form for `booking`; posts `RunSubmitted` once the backend accepted a run."""

    AUTO_FOCUS = "#f-model_size"  # focused as shown (see ProposalModal)

    TITLE = "New run"
    CSS_PATH = "spec_form.tcss"

    BINDINGS = [
        Binding(
            "ctrl+g",
            "submit",
            "Submit…",
            id="spec.submit",
            tooltip="Review and submit the run (asks for confirmation first)",
        ),
        Binding(
            "escape",
            "back",
            "Back",
            id="spec.back",
            tooltip="Back to the bookings; nothing is sent",
        ),
    ]

    def __init__(self, booking: Booking, *, values: FormValues | None = None) -> None:
        super().__init__()
        self.booking = booking
        self.initial = values or FormValues()
        self.spec: TrainingSpec | None = None
        self.estimate: Estimate | None = None
        self.estimated_spec: TrainingSpec | None = None
        self.submitting = False
        self._touched: set[str] = set()
        self._server: dict[str, str] = {}
        self._keys: dict[str, str] = {}
        self._ready: bool | None = None

    # ------------------------------------------------------------ layout

    @property
    def capabilities(self) -> Capabilities | None:
        return shell(self).session.capabilities

    def compose(self) -> ComposeResult:
        session = shell(self).session
        caps = self.capabilities
        yield HeaderStrip(
            backend_host=session.backend_host,
            operator=session.operator,
            connection=session.connection,
            demo=session.demo,
            read_only=session.read_only,
            title="New run",
        )
        b = self.booking
        with Horizontal(id="spec-body"):
            with VerticalScroll(id="spec-form"):
                yield Static(
                    Content.assemble(
                        ("Booking      ", "$text-muted"),
                        (safe(b.booking_id), "bold"),
                        "\n",
                        f"{safe(b.gpu_sku.split('-')[0])} {b.node_count}×{b.gpus_per_node}"
                        f" · {ends_in(b.ends_at, session.clock())}",
                    ),
                    id="spec-booking",
                )
                yield from spec_fields(caps, self.initial)
                yield Static("", id="spec-form-error")
                with Horizontal(id="spec-buttons"):
                    yield Button("Submit…", id="spec-submit", variant="success", disabled=True)
                    yield Button("Back", id="spec-back")
            with VerticalScroll(id="spec-estimate"):
                yield EstimatePanel(id="estimate")
        yield SteadyFooter()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_failure(self, event)

    def on_mount(self) -> None:
        panel = self.query_one(EstimatePanel)
        hours_left = (self.booking.ends_at - shell(self).session.clock()).total_seconds() / 3600
        panel.window_h = max(0.0, hours_left)
        self._changed(None)

    # ------------------------------------------------------------ validation

    def values(self) -> FormValues:
        """The form's current raw values."""
        texts = {name: self.query_one(f"#f-{name}", Input).value for name in _INPUTS}
        for name in _SELECTS:
            value = self.query_one(f"#f-{name}", Select).value
            texts[name] = value if isinstance(value, str) else ""
        return FormValues(**texts)

    @on(Input.Changed)
    @on(Select.Changed)
    def _on_field_changed(self, event: Input.Changed | Select.Changed) -> None:
        name = (event.control.id or "").removeprefix("f-")
        if name in FIELDS:
            self._touched.add(name)
            self._server.pop(name, None)
            self._server.pop("", None)
            self._changed(name)

    @on(Input.Submitted)
    def _next_field(self, event: Input.Submitted) -> None:
        event.stop()
        self.focus_next()

    def _changed(self, name: str | None) -> None:
        values = self.values()
        caps = self.capabilities
        self.spec, errors = build_spec(
            self.booking.booking_id,
            values,
            budget_ceiling=caps.limits.max_budget_usd if caps else None,
            targets=caps.target_capabilities if caps else (),
        )
        self._show_errors(errors)
        tokens = default_tokens(values.model_size)
        tokens_field = self.query_one("#f-target_tokens", Input)
        placeholder = f"default {count(tokens)} (20 × params)" if tokens else "default 20 × params"
        if tokens_field.placeholder != placeholder:
            tokens_field.placeholder = placeholder
        self.query_one("#row-data_kind", FieldRow).hint = (
            CUSTOM_DATA_NOTE if values.data_kind == "custom" else ""
        )
        panel = self.query_one(EstimatePanel)
        panel.budget = self.spec.budget_usd if self.spec else None
        if self.spec is None:
            # Nothing to estimate: drop a pending request, keep the last answer as stale.
            self.workers.cancel_group(self, "estimate")
            panel.stale = panel.estimate is not None
        elif self.spec == self.estimated_spec:
            self.workers.cancel_group(self, "estimate")
            panel.stale = False
        else:
            panel.stale = True
            self._estimate(self.spec)
        self._update_submit()

    def _show_errors(self, errors: Mapping[str, str], *, all_fields: bool = False) -> None:
        # Server messages (422) first, then the fresh estimate's refusals, then our own checks.
        refused: Mapping[str, str] = {}
        if self.estimate is not None and self.estimated_spec == self.spec:
            refused = server_errors(refusals=self.estimate.refusals)
        for name in FIELDS:
            if name == "booking_id":
                continue
            row = self.query_one(f"#row-{name}", FieldRow)
            shown = all_fields or name in self._touched
            row.error = (
                self._server.get(name)
                or refused.get(name)
                or (errors.get(name, "") if shown else "")
            )
        booking_error = (
            self._server.get("booking_id")
            or self._server.get("")
            or refused.get("booking_id")
            or refused.get("", "")
        )
        self.query_one("#spec-form-error", Static).update(
            Content.styled(f"✗ {booking_error}", "$error") if booking_error else ""
        )

    def submittable(self) -> bool:
        """Valid, freshly estimated, not refused, not read-only, not already submitting."""
        return (
            self.spec is not None
            and self.estimate is not None
            and self.estimated_spec == self.spec
            and not self.estimate.refused
            and not self._server
            and not self.submitting
            and not shell(self).session.read_only
        )

    def _update_submit(self) -> None:
        ready = self.submittable()
        if ready == self._ready:
            return
        self._ready = ready
        button = self.query_one("#spec-submit", Button)
        button.disabled = not ready
        button.display = not shell(self).session.read_only

    # ------------------------------------------------------------ estimate

    @work(group="estimate", exclusive=True, exit_on_error=False)
    async def _estimate(self, spec: TrainingSpec) -> None:
        """Debounced: a newer call cancels this one while it sleeps or waits. A backend that
        gave no answer is asked again (`client.patience`) until it answers or the form
        changes, the panel saying so: a filled form never waits on an edit to be estimated."""
        from ito_tui.client import CapabilityMissing, ItoError, ValidationFailed
        from ito_tui.client.patience import until_answered

        await asyncio.sleep(DEBOUNCE_S)
        panel = self.query_one(EstimatePanel)

        def waiting(problem: str, seconds: float) -> None:
            panel.error = f"{problem}; asking again in {seconds:.0f} s"

        try:
            estimate = await until_answered(lambda: shell(self).client.estimate(spec), waiting)
        except ValidationFailed as exc:
            self._server.update(server_errors(errors=exc.errors))
            panel.error = "the backend rejected a field (see the form)"
        except CapabilityMissing as exc:
            panel.error = f"this backend does not provide {safe(exc.capability)} yet"
        except ItoError as exc:
            panel.error = str(exc)
        else:
            self.estimate, self.estimated_spec = estimate, spec
            # Stale at once if the form moved on while the answer was on its way.
            panel.estimate, panel.error, panel.stale = estimate, None, spec != self.spec
        self._show_errors(self._client_errors())
        self._update_submit()

    # ------------------------------------------------------------ submit

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "submit":
            # Offered until the spec is ready too: pressed early, it says what is missing
            # (`action_submit`) instead of doing nothing; the Submit button shows readiness.
            return not shell(self).session.read_only
        return True

    @on(Button.Pressed, "#spec-submit")
    def _submit_pressed(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#spec-back")
    def _back_pressed(self) -> None:
        self.action_back()

    def action_back(self) -> None:
        self.dismiss()

    def action_submit(self) -> None:
        if shell(self).session.read_only:
            self.notify("Read-only mode: submitting runs is disabled.", severity="warning")
            return
        if self.submitting:
            return
        if not self.submittable() or self.spec is None or self.estimate is None:
            errors = self._client_errors()
            # Shown from now on until fixed (editing another field no longer hides them),
            # and the first one takes the keys: the operator types the fix at once.
            self._touched.update(name for name in errors if name in FIELDS)
            self._show_errors(errors, all_fields=True)
            self.notify(self._not_ready(errors), severity="warning")
            rows = (name for name in FIELDS if name in errors and name != "booking_id")
            if first := next(rows, None):
                self._focus_field(first)
            return
        spec, estimate = self.spec, self.estimate
        self.app.push_screen(
            ConfirmSubmitModal(spec, self.booking, estimate),
            callback=lambda ok: self._confirmed(spec, bool(ok)),
        )

    def _focus_field(self, name: str) -> None:
        """Focus the field `name`, opening Advanced if it is there."""
        field = self.query_one(f"#f-{name}")
        advanced = self.query_one("#spec-advanced", Collapsible)
        if advanced.collapsed and field in advanced.walk_children():
            advanced.collapsed = False
            self.call_after_refresh(field.focus)
        else:
            field.focus()

    def _not_ready(self, errors: Mapping[str, str]) -> str:
        """Why Submit cannot go on yet, in the form's words."""
        fields = [SPEC_LABELS.get(name, name) for name in FIELDS if name in errors]
        if fields:
            return f"Not ready to submit: check {', '.join(fields)}."
        if self._server:
            return "Not ready to submit: the backend refused a field (see the form)."
        if self.estimate is None or self.estimated_spec != self.spec:
            return "Not ready to submit: the pre-flight estimate is not back yet."
        if self.estimate.refused:
            return "Not ready to submit: the pre-flight estimate refuses this spec."
        return "Not ready to submit: see the form and the estimate."

    def _client_errors(self) -> dict[str, str]:
        caps = self.capabilities
        return build_spec(
            self.booking.booking_id,
            self.values(),
            budget_ceiling=caps.limits.max_budget_usd if caps else None,
            targets=caps.target_capabilities if caps else (),
        )[1]

    def _confirmed(self, spec: TrainingSpec, ok: bool) -> None:
        if not ok or self.submitting or spec != self.spec:
            return
        self.submitting = True
        self._update_submit()
        # One key per spec: a retry of the same spec is replayed, never a second run.
        key = self._keys.setdefault(spec.model_dump_json(), str(uuid.uuid4()))
        self.run_worker(
            self._submit(spec, key), group="submit", exclusive=True, exit_on_error=False
        )

    async def _submit(self, spec: TrainingSpec, key: str) -> None:
        from ito_tui.client import CapabilityMissing, ItoError, Refused, ValidationFailed

        try:
            run = await shell(self).client.create_run(spec, idempotency_key=key)
        except Refused as exc:
            self._server.update(server_errors(refusals=exc.refusals))
            self.notify("The backend refused this run: see the form.", severity="error")
        except ValidationFailed as exc:
            self._server.update(server_errors(errors=exc.errors))
            self.notify("The backend rejected the spec: see the form.", severity="error")
        except CapabilityMissing:
            self.submitting = False
            self._update_submit()
            raise  # the app's error handler names the capability and stops the flow
        except ItoError as exc:
            self._server[""] = f"Not submitted: {safe(exc)}"
        else:
            # Stays `submitting`: this form is done; the app moves on to the run.
            self.post_message(RunSubmitted(run))
            return
        self.submitting = False
        self._show_errors(self._client_errors())
        self._update_submit()
