"""Chaos on the lab: random scenarios against the real CLI, with real faults, and four invariants checked after
every scenario and at the end.

Not a test (run on demand; it takes minutes). Workers run scenarios side by side, each on names of its own, most
under the lab's configuration (production) and some under a second one on the same Swarm and zone (staging:
another domain, another route directory): deploys and redeploys in either content mode, SIGKILL / SIGTERM /
SIGHUP / SIGINT right after a random step, teardowns, bursts of parallel deploys and teardowns, two deploys of
one name, a deploy and a teardown of one name, gc (of the worker's names, or of every name of the run under
either configuration), Cloudflare answering 429 / 5xx, Cloudflare lying (every kind of graphsite_lab.faults.Kind,
on a read and on a write, carried out first or not), one configuration's deploy, teardown and gc aimed at the
other's deployment, Cloudflare stopped (SIGSTOP) for a moment, the Docker daemon stopped for a moment (at most a
few times, each under 4 s: it is shared). Foreign resources that look like graphsite's are planted first:
records whose comment merely starts like graphsite's, a whole stamp copied onto another record name, complete
stamps of another domain on records, a Swarm service and config, bind directories and route files. Then a final
`gc` under both configurations at once, a `teardown` of every name still held, and it prints:

    scenarios run, seconds, residue, tracebacks, deployments lost, foreign resources touched

(target: ≥ 300, -, 0, 0, 0, 0). Residue: what a teardown or gc reporting a name gone left of it, and what is
left after the final gc/teardown. Lost: a deploy reported success and, before this script tore it down or its
--ttl passed, some system no longer held a piece of it. Touched: a planted resource gone or not byte-identical,
or a deploy under one configuration that succeeded on a name the other one holds.

On a shared lab, run it with `--no-docker-stall --no-cloudflare-stall` (the daemons are everyone's). Its faults
are matched on its own names only and set only while no other session's fault is pending (the fake Cloudflare
holds one at a time); lies to zone-wide listings carry no name, so `--zone-lies` is for a lab of your own.

    scripts/lab up   # with the LAB_* variables of your lab
    .venv/bin/python benchmarks/chaos.py [--scenarios 300] [--seconds 1500] [--workers 3] [--staging-workers 1]
        [--seed N] [--no-docker-stall] [--no-cloudflare-stall] [--zone-lies]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import secrets
import shutil
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field

from chaos_world import FaultSlot, Foreign, Staging, scratch

from graphsite_lab.client import attach
from graphsite_lab.drive import STEPS, Driver, Run, cloudflare_pid, dockerd_pid, stopped
from graphsite_lab.faults import VARIANTS, Kind

SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
FAST_DNS = {"GRAPHSITE_DNS_TIMEOUT": "1", "GRAPHSITE_DNS_RETRIES": "1", "GRAPHSITE_DNS_TEARDOWN_DEADLINE": "3",
            "GRAPHSITE_DEPLOY_DOCKER_TIMEOUT": "2"}
QUICK = {"GRAPHSITE_DNS_RETRIES": "1", "GRAPHSITE_DNS_TIMEOUT": "3"}
GRACE_0 = {"GRAPHSITE_DEPLOY_GC_GRACE": "0"}
WHOLE = {"config": {"config", "service", "route", "record"}, "bind": {"config", "directory", "service", "route",
                                                                       "record"}}
DOCKER_STALLS = 6  # at most, in a whole run
READ_LIES = tuple(k for k in Kind if k != Kind.ERROR)
WRITE_LIES = tuple(k for k in READ_LIES if k not in (Kind.EMPTY_PAGE, Kind.BAD_PAGINATION))  # a page's lies: lists
LIES = [(k, "read", after) for k in READ_LIES for after in (False, True)] + [
    (k, "write", after) for k in WRITE_LIES for after in (False, True)]


@dataclass
class Tally:
    scenarios: int = 0
    runs: int = 0
    tracebacks: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    residue: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)  # `list` saying other than the systems hold
    errors: list[str] = field(default_factory=list)  # this script's own failures
    kinds: dict[str, int] = field(default_factory=dict)
    lies: dict[str, list[int]] = field(default_factory=dict)  # kind/side[/after] -> calls answered, per setting
    lie_order: list[tuple[Kind, str, bool]] = field(default_factory=list)
    docker_stalls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, found: list[str], items: list[str]) -> None:
        with self.lock:
            found += [item for item in items if item not in found]

    def next_lie(self) -> tuple[Kind, str, bool]:
        """Return the next (kind, read/write, after) in a shuffled cycle: every one is told before any twice."""
        with self.lock:
            self.lie_order.append(self.lie_order.pop(0))
            return self.lie_order[-1]


@dataclass
class Shared:
    """What every worker shares: the run's prefix, both configurations' drivers, the fault slot, the planted
    foreign resources and the switches."""

    prefix: str
    drivers: dict[str, Driver]  # production, staging (for the main thread)
    slot: FaultSlot
    foreign: Foreign
    docker_stall: bool = True
    cloudflare_stall: bool = True
    zone_lies: bool = False
    only: tuple[str, ...] = ()
    made_by_other: dict[str, str] = field(default_factory=dict)  # a name -> the configuration it was deployed under


class Worker:
    """One thread of scenarios on names `GROUP…` of its own under one configuration; remembers which deployments
    reported success."""

    def __init__(self, drivers: tuple[Driver, Driver], group: str, tally: Tally, rng: random.Random, lab,
                 shared: Shared) -> None:
        (self.driver, self.other), self.group = drivers, group  # this worker's configuration, and the other one
        self.tally, self.rng, self.lab, self.shared = tally, rng, lab, shared
        self.configuration = "staging" if isinstance(self.driver, Staging) else "production"
        self.live: dict[str, float] = {}  # name -> the moment its --ttl ends (deploys that reported success)
        self.planted: set[str] = set()  # names of the foreign resources planted in this group

    # --- running and recording ---------------------------------------------------------------------------------

    def name(self) -> str:
        while (name := f"{self.group}{secrets.token_hex(3)[:4]}") in self.planted:
            pass
        return name

    def known(self) -> list[str]:
        return sorted(n for n in self.driver.names_held() if n.startswith(self.group))

    def pick(self, share: float) -> str:
        """Return a name this worker holds something of (with probability `share`), else a fresh one."""
        names = self.known()
        return self.rng.choice(names) if names and self.rng.random() < share else self.name()

    def record(self, run: Run, name: str = "", ttl: float = 3600.0) -> Run:
        with self.tally.lock:
            self.tally.runs += 1
            if run.traceback:
                self.tally.tracebacks.append(f"{self.configuration}: {' '.join(run.args)}:\n{run.stderr[-1500:]}")
        if name and run.args[:1] == ("deploy",) and run.code == 0:
            self.live[name] = time.time() + ttl
        if name and run.args[:1] == ("teardown",):  # asked to go: what it removed (even if it failed) is not lost
            self.live.pop(name, None)
        return run

    def deploy_args(self, name: str, ttl: str = "1h") -> tuple[str, ...]:
        mode = self.rng.choice(("config", "bind"))
        return ("deploy", "--subdomain", name, "--content", mode, "--ttl", ttl, "--no-verify", "--wait", "30")

    def left(self, driver: Driver, name: str) -> set[tuple[str, str]]:
        """Return what the systems hold of `name`, but for the planted foreign resources."""
        return driver.held(name) - self.shared.foreign.identities()

    def gone(self, name: str, said: str, driver: Driver | None = None) -> None:
        """`said` reported `name` gone: nothing of it may be left (only this worker makes names of its group)."""
        if not name.startswith(self.group):
            return
        left = self.left(driver or self.driver, name)
        if left:
            self.tally.add(self.tally.residue, [f"{name}: {said} reported it gone, left {sorted(left)}"])

    def collected(self, run: Run) -> None:
        """Check every name a `gc --json` run says it tore down."""
        with contextlib.suppress(ValueError):
            for item in json.loads(run.stdout).get("collected", []) if run.stdout.strip() else []:
                if item["outcome"] == "tore down":
                    self.gone(item["subdomain"], f"gc ({self.configuration})")

    def check(self) -> None:
        """The invariants after a scenario: every live deployment whole, every foreign resource untouched."""
        self.check_live()
        self.tally.add(self.tally.touched, self.shared.foreign.touched())

    def check_live(self) -> None:
        """Every deployment that reported success, not torn down by us and not expired, is whole."""
        for name, until in list(self.live.items()):
            if time.time() > until - 2:
                self.live.pop(name)  # expired (or about to): gc may take it, legitimately
                continue
            kinds = {kind for kind, _ in self.left(self.driver, name)}
            mode = "bind" if "directory" in kinds else "config"
            if not WHOLE[mode] <= kinds:
                self.tally.add(self.tally.lost, [f"{self.configuration} {name}: holds only {sorted(kinds)}"])
                self.live.pop(name)

    def expired(self) -> str:
        """Deploy a fresh name with a TTL that has passed once this returns; return it ('' if the deploy failed)."""
        name = self.name()
        made = self.record(self.driver.run(*self.deploy_args(name, "1s")))  # not live: it expires at once
        time.sleep(1.1)
        return name if made.code == 0 else ""

    def with_record(self) -> tuple[str, str]:
        """Return a live name of this worker and the id of its record (deploying one if none is live)."""
        for name in self.rng.sample(sorted(self.live), len(self.live)):
            mine = [r["id"] for r in self.driver.records(name) if r.get("comment", "").startswith("graphsite:2 ")]
            if mine:
                return name, mine[0]
        name = self.name()
        self.record(self.driver.run(*self.deploy_args(name)), name)
        mine = [r["id"] for r in self.driver.records(name) if r.get("comment", "").startswith("graphsite:2 ")]
        return (name, mine[0]) if mine else ("", "")

    # --- scenarios ---------------------------------------------------------------------------------------------

    def deploy(self) -> None:
        name = self.pick(0.4)
        ttl = self.rng.choice(("1h", "1h", "2s"))
        self.record(self.driver.run(*self.deploy_args(name, ttl)), name, 2.0 if ttl == "2s" else 3600.0)

    def signalled(self) -> None:
        name = self.pick(0.3)
        sig, step = self.rng.choice(SIGNALS), self.rng.choice(STEPS)
        run = self.driver.signal_after(step, sig, *self.deploy_args(name))
        self.record(run, name)

    def teardown(self) -> None:
        names = self.known()
        if names:
            name = self.rng.choice(names)
            if self.record(self.driver.run("teardown", name, "--wait", "30"), name).code == 0:
                self.gone(name, "teardown")

    def burst(self) -> None:
        batch = [self.name() for _ in range(self.rng.randint(2, 4))]
        processes = [(n, self.driver.start(*self.deploy_args(n))) for n in batch]
        for name, process in processes:
            out, err = process.communicate(timeout=180)
            self.record(Run(("deploy", "--subdomain", name), process.returncode, out, err), name)
        self.check_live()
        processes = [(n, self.driver.start("teardown", n, "--wait", "30")) for n in batch]
        for name, process in processes:
            out, err = process.communicate(timeout=180)
            if self.record(Run(("teardown", name), process.returncode, out, err), name).code == 0:
                self.gone(name, "teardown in a burst")

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
        with self.shared.slot.holding(self.rng.randint(1, 4), f"graphsite:2 {self.driver.fqdn(name)} ",
                                      status=status, retry_after=1, after=self.rng.random() < 0.6):
            self.record(self.driver.run(*self.deploy_args(name), env={"GRAPHSITE_DNS_RETRIES": "2"}), name)

    def lie(self) -> None:
        """Cloudflare lies (each kind in turn) to a read (the name's lookup during deploy, teardown, gc or list
        NAME) or to a write (the record's create during deploy, its delete during teardown or gc)."""
        kind, side, after = self.tally.next_lie()
        fault = {"kind": kind, "after": after, "variant": self.rng.choice(VARIANTS.get(kind, ("",)))}
        count, key = self.rng.randint(1, 3), f"{kind}/{side}{'/after' if after else ''}"
        if side == "write" and self.rng.random() < 0.5:  # the create
            name = self.name()
            with self.shared.slot.holding(count, f"graphsite:2 {self.driver.fqdn(name)} ", **fault) as used:
                self.record(self.driver.run(*self.deploy_args(name), env=QUICK), name)
            return self.told(key + " create", used)
        if side == "write":  # the delete, by gc of an expired deployment or by teardown
            if kind == Kind.WRONG_TYPES:  # a delete answers an id alone: it cannot lack a name
                fault["variant"] = self.rng.choice(("string", "no_id"))
            op = "gc" if self.rng.random() < 0.3 else "teardown"
            name, record_id = (self.expired(), "") if op == "gc" else self.with_record()
            if name and not record_id:
                record_id = next((r["id"] for r in self.driver.records(name)), "")
            if not record_id:
                return None
            return self.lied_to(name, f"dns_records/{record_id}", count, fault, f"{key} delete", op)
        ops = ("deploy", "teardown", "gc", "list") + (("zone",) if self.shared.zone_lies else ())
        op = self.rng.choice(ops)
        if op == "gc":
            name = self.expired()
        elif op == "zone":
            name = self.group
        elif kind == Kind.WRONG_TYPES and fault["variant"] != "string":  # it takes a field out of a record
            name = self.with_record()[0]
        else:
            name = self.pick(0.6)
        if not name:
            return None
        match = "type=A" if op == "zone" else f"name.exact={self.driver.fqdn(name)}"
        return self.lied_to(name, match, count, fault, f"{key} {op}", op)

    def lied_to(self, name: str, match: str, count: int, fault: dict, key: str, op: str) -> None:
        """Run `op` (deploy, teardown, gc, list, or zone: gc of every name of the worker) on `name`, lied to."""
        with self.shared.slot.holding(count, match, **fault) as used:
            if op == "deploy":
                run = self.record(self.driver.run(*self.deploy_args(name), env=QUICK), name)
            elif op == "teardown":
                run = self.record(self.driver.run("teardown", name, "--wait", "30", env=QUICK), name)
            elif op in ("gc", "zone"):
                run = self.record(self.driver.run("gc", "--prefix", name, "--wait", "30", "--json", env=QUICK))
            else:
                run = self.record(self.driver.run("list", name, "--json", env=QUICK))
        self.told(key, used)
        if op == "teardown" and run.code == 0:
            self.gone(name, f"teardown lied to ({key})")
        elif op in ("gc", "zone"):
            self.collected(run)
        elif op == "list" and run.code == 0:
            entry = next(iter(run.json().get("deployments", [])), None)
            if self.driver.listed_resources(entry) != self.left(self.driver, name):
                self.tally.add(self.tally.mismatched, [f"list {name} lied to ({key}) said {entry}"])

    def told(self, key: str, used: list[int]) -> None:
        with self.tally.lock:
            self.tally.lies.setdefault(key.split(" ")[0], []).extend(used or [-1])  # -1: the slot was busy

    def cross(self) -> None:
        """The other configuration deploys a name; this one tears it down, deploys it or gcs it (grace 0): the
        other's deployment must be whole afterwards, and this configuration's deploy refused."""
        other, name = self.other, self.name()
        with self.tally.lock:
            self.shared.made_by_other[name] = "staging" if isinstance(other, Staging) else "production"
        made = self.record(other.run(*self.deploy_args(name)))
        if made.code == 0:
            action = self.rng.choice(("teardown", "deploy", "gc"))
            if action == "teardown":
                self.record(self.driver.run("teardown", name, "--wait", "30"))
            elif action == "deploy":
                run = self.record(self.driver.run(*self.deploy_args(name)))
                if run.code == 0:
                    self.tally.add(self.tally.touched, [f"{self.configuration} deploy took over {name}"])
            else:
                self.collected(self.record(self.driver.run("gc", "--prefix", name, "--json", env=GRACE_0)))
            kinds = {kind for kind, _ in self.left(other, name)}
            mode = "bind" if "directory" in kinds else "config"
            if not WHOLE[mode] <= kinds:
                self.tally.add(self.tally.lost, [f"{name} after a {action} under {self.configuration}: "
                                                 f"holds only {sorted(kinds)}"])
        if self.record(other.run("teardown", name, "--wait", "30")).code == 0:
            self.gone(name, "the other configuration's teardown", other)

    def copy_stamp(self) -> None:
        """Copy a live deployment's record comment (its whole stamp) onto a record of another name."""
        name, record_id = self.with_record()
        comment = next((r["comment"] for r in self.driver.records(name) if r["id"] == record_id), "")
        copy = f"{self.group}c{secrets.token_hex(2)[:3]}"
        if comment and copy not in self.known():
            self.planted.add(copy)
            self.shared.foreign.record(copy, self.driver.lab.domain, comment, content="192.0.2.8")
            self.collected(self.record(self.driver.run("gc", "--prefix", self.group, "--json", env=GRACE_0)))

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
        prefix = self.group if self.rng.random() < 0.5 else self.shared.prefix  # both configurations' names
        self.collected(self.record(self.driver.run("gc", "--prefix", prefix, "--wait", "30", "--json")))

    KINDS = (("deploy", 18), ("signalled", 20), ("teardown", 12), ("burst", 5), ("same_name", 6),
             ("cloudflare_fault", 8), ("lie", 24), ("cross", 6), ("copy_stamp", 2), ("cloudflare_stall", 4),
             ("docker_stall", 3), ("gc", 6))

    def one(self) -> str:
        kinds = [(k, w) for k, w in self.KINDS if (k != "docker_stall" or self.shared.docker_stall)
                 and (k != "cloudflare_stall" or self.shared.cloudflare_stall)
                 and (not self.shared.only or k in self.shared.only)]
        kind = self.rng.choices([k for k, _ in kinds], weights=[w for _, w in kinds])[0]
        try:
            getattr(self, kind)()
        except Exception:  # this script's failure (a run past its timeout, the lab not answering): say so, go on
            self.tally.add(self.tally.errors, [f"{kind}: {traceback.format_exc(limit=3)}"])
            self.shared.slot.clear_own()
        self.check()
        return kind


def _options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=1500.0, help="stop starting scenarios after this long")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--staging-workers", type=int, default=1, help="how many of the workers run as staging")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--no-docker-stall", action="store_true", help="never stop the (shared) Docker daemon")
    parser.add_argument("--no-cloudflare-stall", action="store_true", help="never stop the (shared) fake Cloudflare")
    parser.add_argument("--zone-lies", action="store_true",
                        help="lie to zone-wide listings too (they carry no name: only on a lab of your own)")
    parser.add_argument("--foreign-temporaries", action="store_true",
                        help="plant another configuration's temporary page directory and route file too")
    parser.add_argument("--only", default="", metavar="KIND,…", help="run only these scenario kinds (to reproduce)")
    return parser.parse_args()


def main() -> int:
    args = _options()
    lab = attach()
    if isinstance(lab, str):
        sys.exit(f"the lab is not running ({lab}): run `scripts/lab up` with your LAB_* variables")
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    prefix, routes = f"gsrelc{secrets.token_hex(2)}", scratch()
    drivers: dict[str, Driver] = {"production": Driver(lab, prefix), "staging": Staging(lab, prefix, routes)}
    shared = Shared(prefix, drivers, FaultSlot(lab.cloudflare), Foreign(drivers["production"]),
                    not args.no_docker_stall, not args.no_cloudflare_stall, args.zone_lies,
                    tuple(k for k in args.only.split(",") if k))
    tally, started = Tally(lie_order=random.Random(seed).sample(LIES, len(LIES))), time.monotonic()
    print(f"chaos: seed {seed}, prefix {prefix}, {args.workers} workers ({args.staging_workers} staging), "
          f"{args.scenarios} scenarios or {args.seconds:.0f} s; dockerd stalls {'on' if shared.docker_stall else 'off'}"
          f", Cloudflare stalls {'on' if shared.cloudflare_stall else 'off'}", flush=True)
    workers = []
    for number in range(args.workers):
        staging = number >= args.workers - args.staging_workers
        pair = (Staging(lab, prefix, routes), Driver(lab, prefix))  # a Docker client per thread
        worker = Worker(pair if staging else pair[::-1], f"{prefix}-{'s' if staging else 'w'}{number}", tally,
                        random.Random(seed * 100 + number), lab, shared)
        worker.planted |= set(shared.foreign.plant(worker.group, worker.driver.lab.domain,
                                                   routes if staging else None, args.foreign_temporaries))
        workers.append(worker)

    def work(worker: Worker) -> None:
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
                print(f"  {count} scenarios, {time.monotonic() - started:.0f} s; residue {len(tally.residue)}, "
                      f"tracebacks {len(tally.tracebacks)}, lost {len(tally.lost)}, touched {len(tally.touched)}",
                      flush=True)
        worker.check()

    threads = [threading.Thread(target=work, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shared.slot.clear_own()
    residue = _end(shared, workers, tally)
    for worker in workers:
        worker.driver.close()
        worker.other.close()
    shutil.rmtree(routes, ignore_errors=True)
    for driver in drivers.values():
        driver.close()
    return _report(tally, residue, time.monotonic() - started, shared.slot.busy)


def _end(shared: Shared, workers: list[Worker], tally: Tally) -> dict[str, list]:
    """gc under both configurations at once (partial deployments count as abandoned now), then the checks, then
    a teardown of whatever is still held; return what is left of each name."""
    drivers, foreign = shared.drivers, shared.foreign

    def driver_of(name: str) -> Driver:
        """The configuration `name` was deployed under."""
        group = next((w for w in workers if name.startswith(w.group)), None)
        configuration = shared.made_by_other.get(name) or (group.configuration if group else "production")
        return drivers[configuration]

    finals = [d.start("gc", "--prefix", shared.prefix, "--wait", "60", "--json", env=GRACE_0)
              for d in drivers.values()]
    for process in finals:
        out, err = process.communicate(timeout=600)
        tally.tracebacks += [err] if "Traceback (most recent call last)" in err else []
        for item in json.loads(out).get("collected", []) if out.strip().startswith("{") else []:
            worker = next((w for w in workers if item["subdomain"].startswith(w.group)), None)
            if worker and item["outcome"] == "tore down":
                worker.gone(item["subdomain"], "the final gc", driver_of(item["subdomain"]))
    for worker in workers:  # the final gc must not have removed a live deployment
        worker.check()

    names = set().union(*(d.names_held() for d in drivers.values()))
    for configuration, driver in drivers.items():
        mine = [n for n in names if driver_of(n) is driver]
        for attempt in range(3):  # another session's lie to a zone-wide listing reaches this one too
            listed, run = driver.listing()
            if run.code == 0:
                break
            time.sleep(2 * attempt + 1)
        tally.add(tally.mismatched, [f"{configuration} list of {n}" for n in mine
                                     if driver.listed_resources(listed.get(n)) != driver.held(n)
                                     - foreign.identities()])
    for name in sorted(names):
        run = driver_of(name).run("teardown", name, "--wait", "60")
        tally.tracebacks += [run.stderr] if run.traceback else []
    tally.add(tally.touched, foreign.touched())
    foreign.remove()
    names = set().union(*(d.names_held() for d in drivers.values()))
    return {name: sorted(driver_of(name).held(name)) for name in sorted(names) if driver_of(name).held(name)}


def _report(tally: Tally, residue: dict[str, list], seconds: float, busy: int) -> int:
    told = {k: sum(u for u in v if u > 0) for k, v in sorted(tally.lies.items())}
    unanswered = sorted(k for k, v in tally.lies.items() if not any(u > 0 for u in v))
    print(f"kinds: {', '.join(f'{k} {v}' for k, v in sorted(tally.kinds.items()))}; CLI runs {tally.runs}")
    print(f"lies told (calls answered with a lie): {', '.join(f'{k} {v}' for k, v in told.items())}")
    print(f"lies set but never answered: {unanswered or 'none'}; faults not set (the slot was busy): {busy}")
    print(f"list disagreeing with the systems: {len(tally.mismatched)} {tally.mismatched or ''}")
    print(f"this script's own errors: {len(tally.errors)}")
    for text in tally.errors[:3]:
        print(text)
    print(f"scenarios run: {tally.scenarios}")
    print(f"seconds: {seconds:.0f}")
    found = tally.residue + [f"{name}: left after the final gc/teardown: {left}" for name, left in residue.items()]
    print(f"residue: {len(found)} {found or ''}")
    print(f"tracebacks: {len(tally.tracebacks)}")
    for text in tally.tracebacks[:3]:
        print(text)
    print(f"deployments lost: {len(tally.lost)} {tally.lost or ''}")
    print(f"foreign resources touched: {len(tally.touched)} {tally.touched or ''}")
    return 0 if not (found or tally.tracebacks or tally.lost or tally.touched or tally.mismatched) else 1


if __name__ == "__main__":
    sys.exit(main())
