"""Measure: how many Docker Engine API and Cloudflare API requests one deploy, one redeploy, one rollback and one
history make on the lab, step by step.

Not a test, and not timed: it counts requests. The Docker ones through a response hook on the docker SDK's own
session (the client handed to `Swarm`), the Cloudflare ones from the lab's fake Cloudflare's count of the calls
it answered. The converge and verify steps poll until the world has converged, so their count depends on timing:
it is printed apart. To compare with an older commit, run the same file with that commit's `graphsite` first on
the path:

    scripts/lab up
    .venv/bin/python benchmarks/api_calls.py [--content config|bind] [--no-verify] [--each]
    git archive OLD graphsite | tar -x -C /tmp/old && cp -r graphsite/_data /tmp/old/graphsite/
    PYTHONPATH=/tmp/old .venv/bin/python benchmarks/api_calls.py
"""

from __future__ import annotations

import argparse
import re
import secrets
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

POLLING = frozenset({"converge", "verify"})  # steps that ask until the world has converged


class _Counting:
    """A reporter that remembers the step each request was made in, and counts them."""

    def __init__(self, cloudflare: Any) -> None:
        self.step_now, self.cloudflare = "", cloudflare
        self.docker: Counter[tuple[bool, str]] = Counter()
        self.dns_polled: int | None = 0  # the Cloudflare requests of the polling steps (None: unknown)

    def on_docker(self, response: Any, *args: Any, **kwargs: Any) -> None:
        path = re.sub(r"^/v[0-9.]+", "", response.request.path_url.split("?")[0])
        path = re.sub(r"/(services|configs|tasks|nodes|networks)/[^/]+", lambda m: f"/{m[1]}/ID", path)
        self.docker[(self.step_now in POLLING, f"{response.request.method} {path}")] += 1

    def dns_count(self) -> tuple[str, int]:
        """Return the lab's fake Cloudflare's run (an id of its start) and how many API calls it has answered in
        it: its count, not the length of its request log, which keeps the last 2,000 (on a lab the tests have
        used, every difference was 0)."""
        health = self.cloudflare.health()
        if not health.get("run"):
            sys.exit("the fake Cloudflare does not say which run it is: `scripts/lab up` restarts it as it is now")
        return str(health["run"]), int(health["answered"])

    def dns_since(self, before: tuple[str, int]) -> int | None:
        """Return how many API calls the fake Cloudflare has answered since the count `before`; None (unknown) when
        it restarted meanwhile, for its count began again (the difference could be anything, even negative)."""
        run, answered = self.dns_count()
        return answered - before[1] if run == before[0] and answered >= before[1] else None

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        before, self.step_now = self.dns_count() if label in POLLING else None, label
        try:
            yield
        finally:
            if before is not None:
                polled = self.dns_since(before)
                self.dns_polled = None if polled is None or self.dns_polled is None else self.dns_polled + polled
            self.step_now = ""

    def line(self, label: str, before: tuple[str, int]) -> str:
        """Return the line of the run `label`, begun at the fake Cloudflare's count `before`."""
        fixed = sum(n for (polled, _), n in self.docker.items() if not polled)
        polled = sum(n for (polled, _), n in self.docker.items() if polled)
        total = self.dns_since(before)
        if total is None or self.dns_polled is None:
            dns = "Cloudflare unknown (the fake Cloudflare restarted during the step: its count began again)"
        else:
            dns = f"Cloudflare {total - self.dns_polled:2} (+{self.dns_polled} in verify)"
        return f"{label:9} Docker {fixed:3} (+{polled} while polling)  {dns}"

    def info(self, message: str) -> None:
        return None

    def warn(self, message: str) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--content", choices=["config", "bind"], default="config")
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--each", action="store_true", help="list the Docker requests of each run")
    options = parser.parse_args()

    import docker

    import graphsite
    from graphsite.publisher.clients import Clients, site
    from graphsite.publisher.cloudflare import Dns
    from graphsite.publisher.swarm import Swarm
    from graphsite.usecases.deploy import DeployRequest, deploy
    from graphsite.usecases.history import history
    from graphsite.usecases.inventory import SurveySettings
    from graphsite.usecases.rollback import RollbackRequest, rollback
    from graphsite.usecases.teardown import TeardownSettings, teardown
    from graphsite_lab.client import attach

    lab = attach()
    if isinstance(lab, str):
        sys.exit(f"the lab is not up ({lab}): run scripts/lab up")
    config = site(lab.config)
    client = docker.from_env(timeout=60)
    counting = _Counting(lab.cloudflare)
    client.api.hooks["response"].append(counting.on_docker)
    clients = Clients(dns=Dns(config), swarm=Swarm(client))
    name, verify = f"calls-{secrets.token_hex(3)}", not options.no_verify
    print(f"graphsite {Path(graphsite.__file__).parent}, --content {options.content}, "
          f"{'with' if verify else 'without'} verify, on {lab.config_path}")

    def run(label: str, action: Callable[[], object]) -> None:
        counting.docker.clear()
        counting.dns_polled, before = 0, counting.dns_count()
        action()
        print(counting.line(label, before))
        for (was_polled, request), n in sorted(counting.docker.items()) if options.each else ():
            if not was_polled:
                print(f"    {n:3} {request}")

    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "report.md"
        try:
            for label, text in (("deploy", "One."), ("redeploy", "Two.")):
                source.write_text(f"# Counting requests\n\n{text}\n")
                run(label, lambda: deploy(config, DeployRequest(source=source, subdomain=name, verify=verify,
                                                                content=options.content), clients, counting))
            run("rollback", lambda: rollback(config, RollbackRequest(name, verify=verify), clients, counting))
            run("history", lambda: history(SurveySettings.from_config(config), name, clients))
        finally:
            teardown(TeardownSettings.from_config(config), name, clients, counting)
            clients.close()


if __name__ == "__main__":
    main()
