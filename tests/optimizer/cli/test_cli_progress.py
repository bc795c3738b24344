"""The session's progress on the console: every event type is shown, the screen's summary included."""

from __future__ import annotations

import io

from event_samples import ROUND, samples
from rich.console import Console

from optimizer.cli.progress import printer, show
from optimizer.events import Event, PointsScreened, RoundEnded, Stopped


def _render(event: Event) -> str:
    buf = io.StringIO()
    show(Console(file=buf, width=200, color_system=None), event)
    return buf.getvalue()


def test_every_event_type_prints_a_line() -> None:
    for event in samples():
        assert _render(event).strip(), type(event).__name__


def test_the_screen_summary_is_shown() -> None:
    out = _render(PointsScreened(round=2, summary="3 points of num-warps screened: v1 goes on"))
    assert "screen: 3 points of num-warps screened: v1 goes on" in out


def test_a_round_end_shows_outcome_speedup_and_failure() -> None:
    assert _render(RoundEnded(ROUND)).strip() == "-> failed 1.250x (max_abs_err 3.0 on case n=4096)"


def test_text_that_looks_like_markup_is_printed_as_is() -> None:
    buf = io.StringIO()
    printer(Console(file=buf, width=200, color_system=None))(Stopped("cause [bold]sync_bound[/bold] at L4"))
    assert "cause [bold]sync_bound[/bold] at L4" in buf.getvalue()
