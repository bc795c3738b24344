"""The session's progress on the console: every event of ``optimizer.events`` shown, one line or two each.

``show`` dispatches on the event's type; its ``assert_never`` makes an event added to ``optimizer.events`` and not
handled here a mypy error, so no event is dropped silently.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from typing_extensions import assert_never

from optimizer.events import (
    BaselineStarted,
    Event,
    LadderDone,
    PointsScreened,
    Progress,
    ProposalMade,
    RoundEnded,
    RoundStarted,
    SessionDone,
    Stopped,
    SubmitFailed,
    Submitted,
    UnseenFlagged,
)

__all__ = ["printer", "show"]


def printer(console: Console) -> Progress:
    """A session's ``progress`` callback printing to ``console``."""
    return lambda event: show(console, event)


def show(console: Console, event: Event) -> None:
    match event:
        case BaselineStarted(candidate=candidate, backend=backend):
            console.print(f"[bold]baseline[/bold] {escape(str(candidate))} on {backend}")
            if backend == "interpreter":
                console.print("[yellow]timing unavailable:[/yellow] the Triton interpreter checks correctness only; "
                              "rounds are validated but cannot be ranked (use --backend cuda on a GPU)")
        case RoundStarted(round=i, base=base):
            console.print(f"[bold]round {i}[/bold] ladder on {escape(base)}")
        case LadderDone(levels=levels, summary=summary):
            console.print(f"  {' > '.join(levels)}: {escape(summary)}")
        case PointsScreened(summary=summary):
            console.print(f"  screen: {escape(summary)}")
        case ProposalMade(family=family, description=description):
            console.print(f"  rewrite {escape(family)}: {escape(description)}")
        case RoundEnded(round=r):
            sp = r.timing.geomean_speedup if r.timing else None
            extra = f" {sp:.3f}x" if sp else ""
            if r.validation is not None and not r.validation.passed:
                extra += f" ({escape(r.validation.failure_reason[:160])})"
            console.print(f"  -> [cyan]{r.outcome}[/cyan]{extra}")
        case Stopped(reason=reason):
            console.print(f"[yellow]stopped early:[/yellow] {escape(reason)}")
        case UnseenFlagged(flags=flags):
            console.print(f"[yellow]unseen cases:[/yellow] the best is flagged {', '.join(flags)}")
        case Submitted(stored=stored, id=tid):
            console.print(f"trajectory {tid} " + ("submitted to the KB" if stored else "already in the KB (same id)"))
        case SubmitFailed(error=error):
            console.print(f"[yellow]trajectory submission failed:[/yellow] {escape(error)} (the trajectory is on disk)")
        case SessionDone(path=path):
            console.print(f"trajectory written to {escape(str(path))}")
        case _:
            assert_never(event)
