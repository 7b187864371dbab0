"""`graphsite doctor`: every precondition of a deploy, checked read-only. `facts.py` gathers what the systems
say through the publisher's adapters and `host.py` what this host's files and kernel say, as the values of
`model.py`; `checks.py` judges them with pure functions; this module joins the two.

A package of its own rather than a module of the publisher: it reads all three systems and this host, changes
none of them, and its judgement is tested apart from the adapters' gathering."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphsite.config import Config
from graphsite.errors import DeployError
from graphsite.publisher.check import FAIL, PASS, SKIP, WARN, CheckResult
from graphsite.usecases.doctor.checks import evaluate
from graphsite.usecases.doctor.facts import gather
from graphsite.usecases.doctor.model import Facts

if TYPE_CHECKING:
    from graphsite.publisher.ports import SwarmPort

__all__ = ["FAIL", "PASS", "SKIP", "WARN", "CheckResult", "Facts", "diagnose", "preflight", "preflight_error"]


def diagnose(config: Config) -> tuple[CheckResult, ...]:
    """Return every check of a deploy's preconditions (Docker, Traefik, Cloudflare, DNS, TLS); changes nothing."""
    return evaluate(config, gather(config))


def preflight(config: Config, swarm: SwarmPort | None = None) -> tuple[CheckResult, ...]:
    """Return the cheap subset for deploy's plan step: the daemon, Swarm role, network, IPVS/endpoint mode, the
    dynamic directory, its files, the redirect middleware and deploy.middlewares. No registry or Cloudflare call
    (about 0.15 s on the lab). `swarm`: the deploy's connected adapter, reused and left open; without it one is
    made and closed."""
    return evaluate(config, gather(config, cheap=True, swarm=swarm))


def preflight_error(checks: tuple[CheckResult, ...]) -> DeployError | None:
    """Return the DeployError that names every failed check and its fix, or None when none failed."""
    failed = [c for c in checks if c.status == FAIL]
    if not failed:
        return None
    lines = "".join(f"\n  {c.name}: {c.evidence}" + (f"\n    fix: {c.fix}" if c.fix else "") for c in failed)
    return DeployError(f"the stack is not ready for a deploy ({len(failed)} failed check(s)):{lines}",
                       hint="`graphsite doctor` checks everything; nothing was changed")
