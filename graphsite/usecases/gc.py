"""`graphsite gc`: tear down what has expired, and what a run that died halfway left behind.

The decision is made twice: once from the survey, to know whom to visit, and again under the name's lock from a
fresh look, because a redeploy may have renewed the name in between (it holds the lock while it does): a name
that is no longer expired is left alone. gc carries on past a name that fails and reports every one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from graphsite.config import Config
from graphsite.errors import GraphsiteError
from graphsite.publisher.clients import Clients
from graphsite.publisher.deployment import Stamp
from graphsite.publisher.lock import LockBusy, Swept, subdomain_lock, sweep
from graphsite.publisher.ports import Reporter
from graphsite.usecases.inventory import Holding, holding, survey
from graphsite.usecases.teardown import TeardownReport, TeardownSettings, check_edge, teardown_locked

TORE_DOWN, WOULD_TEAR_DOWN, RENEWED, BUSY, FAILED = "tore down", "would tear down", "kept", "skipped", "failed"
GONE, UNDECIDED = "already gone", "not decided"


@dataclass(frozen=True)
class GcSettings:
    """The settings gc needs: a teardown's, and how long a partial deployment is left alone."""

    teardown: TeardownSettings
    grace: float  # deploy.gc_grace, seconds

    @classmethod
    def from_config(cls, config: Config) -> GcSettings:
        return cls(TeardownSettings.from_config(config), config.deploy.gc_grace)


def reason(held: Holding, now: datetime, grace: float) -> str:
    """Return why gc removes `held` (expired, or partial and older than the grace period), or '' to keep it. A
    partial deployment a missing part of which is occupied (`occupied`) is kept: that part is unproven, not gone."""
    if held.empty:  # gone already (another gc or a teardown got there first): nothing to tear down
        return ""
    state = held.state(now)
    if state == "expired":
        return f"expired {held.expires}"
    if state == "partial" and not held.occupied \
            and Stamp(held.name, created=held.created).older_than(now, grace) is True:
        why = [f"no {', '.join(held.missing())}"] if held.missing() else []
        why += ["temporary files left"] if held.leftovers else []
        return f"partial for over {grace / 60:g} min ({'; '.join(why)})"
    return ""


# what makes each kind of occupant graphsite's again, so that the deployment is whole and proven once more
_RESTORE = {"route": "undo the edit (a middleware of the operator's goes in deploy.middlewares), or remove the "
                     "file and deploy {name} again",
            "record": "deploy {name} again with --force (graphsite's own record replaces it)"}


def occupied(held: Holding, now: datetime) -> str:
    """Return why gc keeps a partial deployment a missing part of which is occupied by something not proven this
    configuration's (a route file edited by hand, an A record whose comment was rewritten), or ''."""
    if held.empty or held.state(now) != "partial" or not held.occupied:
        return ""
    there = "; ".join(f"{f.kind} {f.name} is {f.why}" for f in held.occupied)
    restore = "; ".join(_RESTORE[kind].format(name=held.name) for kind in dict.fromkeys(f.kind for f in held.occupied))
    return (f"partial, not collected: {there}: not proven, so not taken for absent, and nothing is removed. If it "
            f"is {held.name}'s: {restore}; if not, `graphsite teardown {held.name}` removes the rest and keeps it")


def undated(held: Holding, now: datetime) -> str:
    """Return why gc keeps a partial deployment it cannot date (no resource of it says when it was made), or ''."""
    if held.empty or held.state(now) != "partial" or held.created:
        return ""
    return (f"partial, made at an unknown time: nothing of it says when, so it is not collected; "
            f"`graphsite teardown {held.name}` removes it if it is yours")


@dataclass(frozen=True)
class Collected:
    name: str
    outcome: str  # tore down, would tear down, kept, already gone, skipped, failed
    reason: str
    report: TeardownReport | None = None

    @property
    def failed(self) -> bool:
        return self.outcome in (FAILED, UNDECIDED) or (self.report is not None and not self.report.clean)

    def line(self) -> str:
        return f"{self.outcome} {self.name} ({self.reason})"

    def as_json(self) -> dict[str, Any]:
        return {"subdomain": self.name, "outcome": self.outcome, "reason": self.reason,
                "teardown": self.report.as_json() if self.report else None}


@dataclass(frozen=True)
class GcReport:
    collected: tuple[Collected, ...]
    unreadable: dict[str, str]
    dry_run: bool
    # the lock directory's entries the sweep left, with why (a warning: no deployment's state is in them)
    locks_left: tuple[tuple[Path, str], ...] = ()

    @property
    def ok(self) -> bool:
        return not self.unreadable and not any(c.failed for c in self.collected)


def collect(settings: GcSettings, clients: Clients, reporter: Reporter, *, dry_run: bool = False, prefix: str = "",
            now: datetime | None = None, wait: float = 0.0) -> GcReport:
    """Tear down every expired deployment and every partial one older than `deploy.gc_grace` whose name starts
    with `prefix`; return one outcome per name visited (each teardown's progress goes to `reporter`)."""
    grace = settings.grace
    check_edge(settings.teardown)  # a CA bundle that cannot load refuses the run, before any name is visited
    inventory = survey(settings.teardown.survey, clients)
    if not inventory.complete:  # nothing is decided, let alone removed, on a state that was not fully read
        return GcReport((), dict(inventory.unreadable), dry_run)
    collected = []
    for name, held in inventory.holdings.items():
        if not name.startswith(prefix):
            continue
        why = reason(held, now or datetime.now(UTC), grace)
        if not why:
            kept = occupied(held, now or datetime.now(UTC)) or undated(held, now or datetime.now(UTC))
            collected += [Collected(name, RENEWED, kept)] if kept else []
            continue
        if dry_run:
            collected.append(Collected(name, WOULD_TEAR_DOWN, why))
            continue
        collected.append(_collect_one(settings, clients, reporter, name, wait, now))
    # lock files of runs that were killed (no run holds them); an entry it cannot judge is named, never raised:
    # the teardowns above are done and their report must be shown
    swept = Swept() if dry_run else sweep(settings.teardown.lock_dir, prefix)
    return GcReport(tuple(collected), dict(inventory.unreadable), dry_run, swept.left)


def _collect_one(settings: GcSettings, clients: Clients, reporter: Reporter, name: str, wait: float,
                 now: datetime | None) -> Collected:
    try:
        with subdomain_lock(settings.teardown.lock_dir, name, wait=wait):
            # under the lock: a redeploy may have renewed it
            fresh, unreadable = holding(settings.teardown.survey, clients, name)
            if unreadable:
                return Collected(name, UNDECIDED, "could not read " + "; ".join(
                    f"{system}: {why}" for system, why in unreadable.items()))
            why = reason(fresh, now or datetime.now(UTC), settings.grace)
            if not why:
                if fresh.empty:
                    return Collected(name, GONE, "another run removed it first")
                kept = occupied(fresh, now or datetime.now(UTC))  # something unproven came into a part's place
                if kept:
                    return Collected(name, RENEWED, kept)
                return Collected(name, RENEWED, f"no longer expired: {fresh.state(now or datetime.now(UTC))}"
                                                f"{', expires ' + fresh.expires if fresh.expires else ''}")
            report = teardown_locked(settings.teardown, name, clients, reporter)
    except LockBusy:
        return Collected(name, BUSY, "another run holds its lock; the next gc looks again")
    except GraphsiteError as exc:
        return Collected(name, FAILED, exc.message.splitlines()[0])
    if not report.clean:  # what is left, then why (a stray in the page directory: what to move out)
        why = "".join(f"; {o.detail}" for o in report.outcomes if o.failed and o.detail)
        return Collected(name, FAILED, "left: " + ", ".join(report.left or ["the page still served"]) + why, report)
    return Collected(name, TORE_DOWN, why, report)
