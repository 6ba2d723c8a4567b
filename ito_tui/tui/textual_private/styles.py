"""CSS parsed once per process, and footer keys styled once (`textual_private`).

## CSS parsed once
Textual parses every CSS source (each widget class's `DEFAULT_CSS`, the app's, each screen's)
again whenever a screen with CSS of its own first opens and whenever the theme is set:
`Stylesheet.reparse` parses into a new `Stylesheet`, whose cache starts empty, and a cache
holds 64 sources where the app has ~100. `SharedRulesStylesheet` keeps parsed rules for the
process, keyed by the text, its origin, place and scope, and the theme's variables. Measured
(`tests/tui/test_pipeline_widgets.py` and `test_shell_pilot.py`, `-n 0`): CSS parsing took
5.7 of 51 CPU s, now 0.6; 21 % less CPU in all, with the footer keys below.

## Footer keys
Textual's footer makes each key `compact` and then binds it to the footer's `compact` (False),
so a key gets and loses the `-compact` class as it mounts: two restyles. `preset_footer_key`
sets the footer's value before the key mounts (4 % of a boot's CPU).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.css.stylesheet import Stylesheet
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.css.model import RuleSet
    from textual.css.types import CSSLocation
    from textual.widget import Widget


PARSED_LIMIT = 1024
"""Most parsed sources kept: an app has ~100 per theme, and a process a few themes."""

_parsed: dict[tuple[object, ...], list[RuleSet]] = {}
"""Parsed rules by (css, read_from, is_default_rules, tie_breaker, scope, variables),
oldest first; shared by every `SharedRulesStylesheet` in the process."""


class SharedRulesStylesheet(Stylesheet):
    """A `Stylesheet` whose parsed rules are kept for the process (module docstring).

    Rules are never changed once parsed (Textual's own cache hands the same ones out
    again), so stylesheets may share them.
    """

    def __init__(self, *, variables: dict[str, str] | None = None) -> None:
        super().__init__(variables=variables)
        self._variables_key = _frozen(variables)

    def set_variables(self, variables: dict[str, str]) -> None:
        super().set_variables(variables)
        self._variables_key = _frozen(variables)

    def _parse_rules(
        self,
        css: str,
        read_from: CSSLocation,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list[RuleSet]:
        key = (css, read_from, is_default_rules, tie_breaker, scope, self._variables_key)
        rules = _parsed.pop(key, None)
        if rules is None:
            # A source that does not parse raises here and is kept by nobody.
            rules = super()._parse_rules(css, read_from, is_default_rules, tie_breaker, scope)
            if len(_parsed) >= PARSED_LIMIT:
                del _parsed[next(iter(_parsed))]
        _parsed[key] = rules
        return rules

    def copy(self) -> SharedRulesStylesheet:
        stylesheet = SharedRulesStylesheet(variables=dict(self._variables))
        stylesheet.source = self.source.copy()
        return stylesheet

    def reparse(self) -> None:
        # Textual's `reparse`, with a stylesheet of this class as the fresh one (Textual's
        # makes a plain `Stylesheet`, which parses everything again).
        fresh = self.copy()
        try:
            fresh.parse()
        except Exception:
            self._invalid_css.update(fresh._invalid_css)
            raise
        self._rules = fresh.rules
        self._rules_map = None
        self.source = fresh.source
        self._require_parse = False


def _frozen(variables: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((variables or {}).items()))


def share_parsed_css(app: App[Any]) -> None:
    """Give `app` (before it runs) a stylesheet that shares parsed rules (module docstring)."""
    app.stylesheet = SharedRulesStylesheet(variables=app.get_css_variables())


def preset_footer_key(widget: Widget, compact: bool) -> None:
    """Give `widget`, if it is a footer key not yet mounted, its footer's `compact` (module
    docstring); any other widget is left as it is. The command palette's key is not bound
    to the footer's `compact` and keeps its own (True: Textual draws it compact)."""
    if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
        widget.set_reactive(FooterKey.compact, compact)
        widget.set_class(compact, "-compact", update=False)
