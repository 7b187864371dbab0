"""Chaos on the lab: random scenarios against the real CLI, with real faults, and three numbers at the end.

Not a test (run on demand; it takes minutes). Workers run scenarios side by side, each on names of its own:
deploys and redeploys in either content mode, SIGKILL / SIGTERM / SIGHUP / SIGINT right after a random step,
teardowns, bursts of parallel deploys and teardowns, two deploys of one name, a deploy and a teardown of one
name, gc, Cloudflare answering 429 / 5xx (after carrying out the call, or before), Cloudflare stopped
(SIGSTOP) for a moment, the Docker daemon stopped for a moment (at most a few times, each under 4 s: it is
shared). Then a final `gc` and a `teardown` of every name still held, and it prints:

    scenarios run, residue after the final gc/teardown, tracebacks, deployments lost after a reported success

(target: ≥ 200, 0, 0, 0). A deployment counts as lost when a deploy reported success (exit 0) and, before this
script tore it down or its --ttl passed, some system no longer held a piece of it.

    scripts/lab up   # with the LAB_* variables of your lab
    .venv/bin/python benchmarks/chaos.py [--scenarios 200] [--seconds 1500] [--workers 3] [--seed N]
"""

from __future__ import annotations

import argparse
import contextlib
import random
import secrets
import signal
import sys
import threading
import time
from dataclasses import dataclass, field

from graphsite.lab.client import attach
from graphsite.lab.drive import STEPS, Driver, Run, cloudflare_pid, dockerd_pid, stopped

SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
FAST_DNS = {"GRAPHSITE_DNS_TIMEOUT": "1", "GRAPHSITE_DNS_RETRIES": "1", "GRAPHSITE_DNS_TEARDOWN_DEADLINE": "3",
            "GRAPHSITE_DEPLOY_DOCKER_TIMEOUT": "2"}
WHOLE = {"config": {"config", "service", "route", "record"}, "bind": {"config", "directory", "service", "route",
                                                                       "record"}}
DOCKER_STALLS = 6  # at most, in a whole run


@dataclass
class Tally:
    scenarios: int = 0
    runs: int = 0
    tracebacks: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)
    docker_stalls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Worker:
    """One thread of scenarios on names `PREFIX-wN…` of its own; remembers which deployments reported success."""

    def __init__(self, driver: Driver, number: int, tally: Tally, rng: random.Random, lab) -> None:
        self.driver, self.tally, self.rng, self.lab = driver, tally, rng, lab
        self.group = f"{driver.prefix}-w{number}"
        self.live: dict[str, float] = {}  # name -> the moment its --ttl ends (deploys that reported success)

    # --- running and recording ---------------------------------------------------------------------------------

    def name(self) -> str:
        return f"{self.group}{secrets.token_hex(3)[:4]}"

    def known(self) -> list[str]:
        return sorted(n for n in self.driver.names_held() if n.startswith(self.group))

    def record(self, run: Run, name: str = "", ttl: float = 3600.0) -> Run:
        with self.tally.lock:
            self.tally.runs += 1
            if run.traceback:
                self.tally.tracebacks.append(f"{' '.join(run.args)}:\n{run.stderr[-1500:]}")
        if name and run.args[:1] == ("deploy",) and run.code == 0:
            self.live[name] = time.time() + ttl
        if name and run.args[:1] == ("teardown",):  # asked to go: what it removed (even if it failed) is not lost
            self.live.pop(name, None)
        return run

    def deploy_args(self, name: str, ttl: str = "1h") -> tuple[str, ...]:
        mode = self.rng.choice(("config", "bind"))
        return ("deploy", "--subdomain", name, "--content", mode, "--ttl", ttl, "--no-verify", "--wait", "30")

    def check_live(self) -> None:
        """Every deployment that reported success, not torn down by us and not expired, is whole."""
        for name, until in list(self.live.items()):
            if time.time() > until - 2:
                self.live.pop(name)  # expired (or about to): gc may take it, legitimately
                continue
            kinds = {kind for kind, _ in self.driver.held(name)}
            mode = "bind" if "directory" in kinds else "config"
            if not WHOLE[mode] <= kinds:
                with self.tally.lock:
                    self.tally.lost.append(f"{name}: holds only {sorted(kinds)}")
                self.live.pop(name)

    # --- scenarios ---------------------------------------------------------------------------------------------

    def deploy(self) -> None:
        names = self.known()
        name = self.rng.choice(names) if names and self.rng.random() < 0.4 else self.name()
        ttl = self.rng.choice(("1h", "1h", "2s"))
        self.record(self.driver.run(*self.deploy_args(name, ttl)), name, 2.0 if ttl == "2s" else 3600.0)

    def signalled(self) -> None:
        names = self.known()
        name = self.rng.choice(names) if names and self.rng.random() < 0.3 else self.name()
        sig, step = self.rng.choice(SIGNALS), self.rng.choice(STEPS)
        run = self.driver.signal_after(step, sig, *self.deploy_args(name))
        self.record(run, name)

    def teardown(self) -> None:
        names = self.known()
        if names:
            name = self.rng.choice(names)
            self.record(self.driver.run("teardown", name, "--wait", "30"), name)

    def burst(self) -> None:
        batch = [self.name() for _ in range(self.rng.randint(2, 4))]
        processes = [(n, self.driver.start(*self.deploy_args(n))) for n in batch]
        for name, process in processes:
            out, err = process.communicate(timeout=180)
            self.record(Run(self.deploy_args(name), process.returncode, out, err), name)
        self.check_live()
        processes = [(n, self.driver.start("teardown", n, "--wait", "30")) for n in batch]
        for name, process in processes:
            out, err = process.communicate(timeout=180)
            self.record(Run(("teardown", name), process.returncode, out, err), name)

    def same_name(self) -> None:
        name = self.name()
        other = (self.deploy_args(name) if self.rng.random() < 0.5 else ("teardown", name, "--wait", "30"))
        first = self.driver.start(*self.deploy_args(name))
        time.sleep(self.rng.uniform(0, 1.0))
        second = self.driver.start(*other)
        for args, process in ((self.deploy_args(name), first), (other, second)):
            out, err = process.communicate(timeout=180)
            self.record(Run(args, process.returncode, out, err), name)
        if other[0] == "teardown" and not self.driver.held(name):
            self.live.pop(name, None)  # the teardown came last: the success before it is legitimately gone

    def cloudflare_fault(self) -> None:
        name = self.name()
        status = self.rng.choice((429, 500, 502, 503))
        self.driver.cloudflare.fail_next(self.rng.randint(1, 4), status=status, retry_after=1,
                                         match=f"graphsite:2 {name}.", after=self.rng.random() < 0.6)
        self.record(self.driver.run(*self.deploy_args(name), env={"GRAPHSITE_DNS_RETRIES": "2"}), name)

    def cloudflare_stall(self) -> None:
        names = self.known()
        pid = cloudflare_pid(self.lab)
        if names and self.rng.random() < 0.5:
            name = self.rng.choice(names)
            with stopped(pid, at_most=self.rng.uniform(1, 4)):
                self.record(self.driver.run("teardown", name, "--wait", "30", env=FAST_DNS), name)
            return
        name, step = self.name(), self.rng.choice(("converge", "route", "plan"))
        with contextlib.ExitStack() as stack:
            run = self.driver.script([(f"  {step} … done", lambda _: stack.enter_context(
                stopped(pid, at_most=self.rng.uniform(1, 4))))], *self.deploy_args(name), env=FAST_DNS)
        self.record(run, name)

    def docker_stall(self) -> None:
        with self.tally.lock:
            spent = self.tally.docker_stalls >= DOCKER_STALLS
            self.tally.docker_stalls += 0 if spent else 1
        if spent:  # the shared daemon has been stopped often enough: a plain deploy instead
            return self.deploy()
        name, step = self.name(), self.rng.choice(("plan", "content", "service", "converge"))
        daemon = dockerd_pid()
        with contextlib.ExitStack() as stack:
            run = self.driver.script([(f"  {step} … done", lambda _: stack.enter_context(
                stopped(daemon, at_most=self.rng.uniform(2.5, 3.5))))], *self.deploy_args(name), env=FAST_DNS)
        self.record(run, name)
        return None

    def gc(self) -> None:
        self.record(self.driver.run("gc", "--prefix", self.group, "--wait", "30", "--json"))

    KINDS = (("deploy", 22), ("signalled", 25), ("teardown", 14), ("burst", 6), ("same_name", 8),
             ("cloudflare_fault", 12), ("cloudflare_stall", 5), ("docker_stall", 3), ("gc", 5))

    def one(self) -> str:
        kind = self.rng.choices([k for k, _ in self.KINDS], weights=[w for _, w in self.KINDS])[0]
        getattr(self, kind)()
        self.check_live()
        return kind


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=1500.0, help="stop starting scenarios after this long")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    lab = attach()
    if isinstance(lab, str):
        sys.exit(f"the lab is not running ({lab}): run `scripts/lab up` with your LAB_* variables")
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    driver = Driver(lab, prefix=f"gsrelc{secrets.token_hex(2)}")
    tally, started = Tally(), time.monotonic()
    print(f"chaos: seed {seed}, prefix {driver.prefix}, {args.workers} workers, {args.scenarios} scenarios "
          f"or {args.seconds:.0f} s", flush=True)

    def work(number: int) -> None:
        own = Driver(lab, prefix=driver.prefix)  # a Docker client per thread
        worker = Worker(own, number, tally, random.Random(seed * 100 + number), lab)
        while time.monotonic() - started < args.seconds:
            with tally.lock:
                if tally.scenarios >= args.scenarios:
                    break
                tally.scenarios += 1
                count = tally.scenarios
            kind = worker.one()
            with tally.lock:
                tally.kinds[kind] = tally.kinds.get(kind, 0) + 1
            if count % 20 == 0:
                print(f"  {count} scenarios, {time.monotonic() - started:.0f} s", flush=True)
        worker.check_live()
        driver.outputs += own.outputs
        own.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(args.workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    driver.cloudflare.fail_next(0)

    # The end: gc (partial deployments count as abandoned now), then teardown of whatever is still held.
    final = driver.run("gc", "--prefix", driver.prefix, "--wait", "60", env={"GRAPHSITE_DEPLOY_GC_GRACE": "0"})
    tally.tracebacks += [final.stderr] if final.traceback else []
    listed, _ = driver.listing()
    mismatched = [n for n in driver.names_held() if driver.listed_resources(listed.get(n)) != driver.held(n)]
    for name in sorted(driver.names_held()):
        run = driver.run("teardown", name, "--wait", "60")
        tally.tracebacks += [run.stderr] if run.traceback else []
    residue = {name: sorted(driver.held(name)) for name in driver.names_held()}
    driver.close()

    print(f"kinds: {', '.join(f'{k} {v}' for k, v in sorted(tally.kinds.items()))}; CLI runs {tally.runs}; "
          f"{time.monotonic() - started:.0f} s")
    print(f"list disagreeing with the systems before the final teardown: {len(mismatched)} {mismatched}")
    print(f"scenarios run: {tally.scenarios}")
    print(f"residue after the final gc/teardown: {sum(len(v) for v in residue.values())} {residue or ''}")
    print(f"tracebacks: {len(tally.tracebacks)}")
    for text in tally.tracebacks[:3]:
        print(text)
    print(f"deployments lost after a reported success: {len(tally.lost)} {tally.lost or ''}")
    return 0 if not (residue or tally.tracebacks or tally.lost or mismatched) else 1


if __name__ == "__main__":
    sys.exit(main())
