"""The undo of a failed or interrupted deploy: a stack of compensations, each registered before its effect,
run in reverse order whatever one of them raises."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Undo:
    """What this run started, to be undone in reverse order when a later step fails. Each action returns True
    when it undid something, False when there was nothing to undo."""

    steps: list[tuple[str, str, Callable[[], bool]]] = field(default_factory=list)
    failed: list[tuple[str, str, Callable[[], bool]]] = field(default_factory=list)  # to try once more
    settled: dict[str, str] = field(default_factory=dict)  # resource: why this run knows there is nothing to undo

    def push(self, resource: str, done: str, action: Callable[[], bool]) -> None:
        """Register the undo of `resource` (e.g. "service NAME"); `done` says what the action does, in the past
        tense (e.g. "removed service NAME")."""
        self.steps.append((resource, done, action))

    def settle(self, resource: str, why: str) -> None:
        """Say that this run knows `resource` holds nothing of its own (its write was refused, another run's change
        left in place): its undo is not run, and its line says `why` rather than "already as it was"."""
        self.settled[resource] = why

    def pending(self) -> list[str]:
        return [resource for resource, _, _ in [*reversed(self.steps), *self.failed] if resource not in self.settled]

    def run(self) -> list[str]:
        """Run every step, whatever one of them raises, then once more each step that failed (a daemon that
        stalled past its timeout may answer again by then); return one true line per step."""
        lines = self._pass(last_try=False)
        self.steps, self.failed = self.failed[::-1], []  # a stack again: the second try keeps the undo's order
        return lines + self._pass(last_try=True)

    def _pass(self, *, last_try: bool) -> list[str]:
        """Run the steps, the last registered first, and return a line for each step it ended; a step that
        raises waits for the second pass, or on the last try is reported NOT undone."""
        lines: list[str] = []
        while self.steps:
            step = resource, done, action = self.steps[-1]  # pending while it runs: a second signal names it
            if resource in self.settled:
                self.steps.pop()
                lines.append(f"nothing to undo: {resource} ({self.settled[resource]})")
                continue
            try:
                did = action()
            except Exception as exc:  # every step runs: one failure must not keep the others behind
                if last_try:
                    reason = (getattr(exc, "message", None) or str(exc) or type(exc).__name__).splitlines()[0]
                    lines.append(f"NOT undone: {resource}: {reason}")
                else:
                    self.failed.append(step)
                continue
            finally:
                self.steps.pop()
            lines.append(f"undone: {done}" if did else _as_it_was(resource, second_try=last_try))
        return lines


def _as_it_was(resource: str, *, second_try: bool) -> str:
    """The line of a step that found nothing to undo. On the second try, its first try failed: most often a
    daemon whose answer came after the client's timeout had applied it, but this run cannot tell that apart from
    another hand putting it back, so it says what it saw."""
    if second_try:
        return f"undone: {resource} is as it was (found so on a second try, after the first failed)"
    return f"nothing to undo: {resource} (already as it was)"
