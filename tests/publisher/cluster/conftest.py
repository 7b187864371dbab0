"""Fixtures of the cluster tests: the lab's nodes (from its own state), and a client that requests a page through
the edge without pause. Collected only with GRAPHSITE_CLUSTER=1 (tests/lab/test_cluster.py sets it)."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field

import pytest

from graphsite_lab import cluster
from graphsite_lab.docker import docker
from graphsite_lab.instance import LabInstance

NODES = 3


@dataclass
class Nodes:
    lab: LabInstance
    plan: cluster.ClusterPlan
    records: dict

    def node_id(self, index: int) -> str:
        return self.records[str(index)]["node_id"]

    def pid(self, index: int) -> int:
        return self.records[str(index)]["pid"]

    def table(self) -> dict[str, dict[str, str]]:
        return {row["id"]: row for row in cluster.nodes_table()}


@pytest.fixture(scope="session")
def nodes(lab) -> Nodes:
    instance = LabInstance.from_env()
    state = json.loads(instance.path("state.json").read_text())
    records = state.get("workers") or {}
    assert len(records) == NODES - 1, f"the cluster tests need a lab of {NODES} nodes: LAB_NODES={NODES} scripts/lab up"
    return Nodes(instance, cluster.cluster_plan(instance, NODES), records)


@pytest.fixture
def set_availability(nodes):
    """Set a worker's availability; every worker is active again after the test."""
    def change(index: int, availability: str) -> None:
        docker("node", "update", "--availability", availability, nodes.node_id(index))

    yield change
    for worker in nodes.plan.workers:
        docker("node", "update", "--availability", "active", nodes.node_id(worker.index), check=False)


@pytest.fixture
def quick_heartbeat():
    """Nodes report to the manager every second while the test runs, and the swarm's own period comes back after.
    The manager marks a node Down after about three missed heartbeats: at swarm's default of 5 s a crash waits
    ~15 s to be seen; at 1 s the same real crash, seen the same way, costs the suite ~3 s."""
    spec = "{{.Swarm.Cluster.Spec.Dispatcher.HeartbeatPeriod}}"
    before = docker("info", "--format", spec).stdout.strip()
    docker("swarm", "update", "--dispatcher-heartbeat", "1s")
    assert docker("info", "--format", spec).stdout.strip() == "1s"
    yield
    docker("swarm", "update", "--dispatcher-heartbeat", before or "5s", check=False)


@dataclass
class Client:
    """Requests the page through the edge, one after the other, until stopped (at most `limit` requests)."""

    fqdn: str
    config: object
    limit: int = 20000
    seen: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        from graphsite.publisher import probe

        verify = self.config.verify
        for _ in range(self.limit):
            if self.stop.is_set():
                return
            result = probe.fetch("https", self.fqdn, verify.origin_address, ca_bundle=verify.ca_bundle)
            if result.status == 200:
                self.seen.append(hashlib.sha256(result.body).hexdigest())
            else:
                self.failures.append(result.error or f"HTTP {result.status}")

    def __enter__(self) -> Client:
        self._thread = threading.Thread(target=self.run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self._thread.join(timeout=30)


@pytest.fixture
def requests_through_edge(publab):
    def start(fqdn: str) -> Client:
        return Client(fqdn, publab.config)

    return start


@pytest.fixture
def run_lab_up():
    """Run `scripts/lab up` for this lab (LAB_* and LAB_NODES come from the environment)."""
    import subprocess

    from graphsite_lab.instance import CHECKOUT

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(CHECKOUT / "scripts" / "lab"), "up"], capture_output=True, text=True,
                              timeout=240, check=False)

    return run
