"""graphsite on a three-node Swarm (the lab's manager and two workers in network namespaces of their own): replicas
spread one per node, every task checked, a drain and a node crash under constant requests, a redeploy across nodes,
bind mode pinned, teardown proven on every node."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from graphsite_lab import cluster
from graphsite_lab.docker import docker

pytestmark = pytest.mark.lab
THREE = {"GRAPHSITE_DEPLOY_REPLICAS": "3"}


def _deploy(publab, name: str, *args: str, env: dict | None = None) -> dict:
    result = publab.run("deploy", *args, "--subdomain", name, "--json", env=THREE if env is None else env)
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert {c["status"] for c in answer["checks"]} == {"PASS"}, answer["checks"]
    return answer


def _running(publab, name: str) -> list:
    clients = publab.clients()
    try:
        return [t for t in clients.swarm.tasks(name) if t.state == "running" and t.desired == "running"]
    finally:
        clients.close()


def _origin_evidence(answer: dict) -> str:
    return next(c["evidence"] for c in answer["checks"] if c["name"] == "origin")


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout:.0f} s: {what}"
        time.sleep(0.5)


def test_three_replicas_run_on_three_nodes_and_every_task_serves_the_page(publab, nodes):
    name = publab.name()
    answer = _deploy(publab, name)
    tasks = _running(publab, name)
    assert len(tasks) == 3 and len({t.node for t in tasks}) == 3, tasks
    assert answer["service"]["spread"] == ["node.id"]
    evidence = _origin_evidence(answer)
    assert evidence.startswith("edge ") and "3/3 tasks HTTP 200" in evidence, evidence
    for task in tasks:  # each task was reached by its own address, and named with its node
        assert f"task {task.id} on " in evidence
    listed = {d["subdomain"]: d for d in json.loads(publab.run("list", "--json").stdout)["deployments"]}
    hostnames = {row["hostname"] for row in nodes.table().values()}
    assert sorted(listed[name]["nodes"]) == sorted(hostnames), listed[name]


def test_draining_a_worker_under_constant_requests_fails_no_request(publab, nodes, set_availability,
                                                                    requests_through_edge):
    name = publab.name()
    answer = _deploy(publab, name)
    drained = nodes.node_id(2)
    with requests_through_edge(answer["fqdn"]) as client:
        time.sleep(1)
        set_availability(2, "drain")
        _wait(lambda: {t.node for t in _running(publab, name)} <= set(nodes.table()) - {drained}
              and len(_running(publab, name)) == 3, 60, "the drained worker's task moved")
        time.sleep(1)
    assert client.failures == [], f"{len(client.failures)} of {len(client.seen) + len(client.failures)} failed: " \
                                  f"{client.failures[:3]}"
    assert len(client.seen) > 20 and set(client.seen) == {answer["sha256"]}
    verify = publab.run("verify", name, "--json")
    assert verify.exit_code == 0, verify.stdout + verify.stderr
    assert "3/3 tasks HTTP 200" in verify.stdout


def test_a_worker_crash_reconverges_and_the_worker_rejoins(publab, nodes, run_lab_up, quick_heartbeat):
    name = publab.name()
    _deploy(publab, name)
    crashed = nodes.node_id(1)
    assert crashed in {t.node for t in _running(publab, name)}
    os.kill(nodes.pid(1), signal.SIGKILL)  # the node crashes: its daemon is gone without a word
    _wait(lambda: nodes.table()[crashed]["status"] == "Down", 60, "the manager saw the worker down")
    _wait(lambda: len(_running(publab, name)) == 3 and crashed not in {t.node for t in _running(publab, name)},
          90, "the service re-converged on the remaining nodes")
    verify = publab.run("verify", name, "--json")
    assert verify.exit_code == 0, verify.stdout + verify.stderr
    up = run_lab_up()  # brings the worker's daemon back: it rejoins with its own swarm state
    assert up.returncode == 0, up.stderr
    assert "worker 1" in up.stderr and "started (dockerd)" in up.stderr
    _wait(lambda: nodes.table()[crashed]["status"] == "Ready", 60, "the worker rejoined")
    nodes.records["1"]["pid"] = json.loads(nodes.lab.path("state.json").read_text())["workers"]["1"]["pid"]


def test_a_redeploy_across_nodes_under_constant_requests_fails_none_and_leaves_no_stale_page(
        publab, nodes, requests_through_edge, tmp_path):
    name = publab.name()
    first = _deploy(publab, name)
    assert len({t.node for t in _running(publab, name)}) == 3
    source = tmp_path / "second.md"
    source.write_text("# Second edition\n\n## 1. What changed\n\nThe same name, a new page.\n", encoding="utf-8")
    with requests_through_edge(first["fqdn"]) as client:
        second = _deploy(publab, name, str(source))
        returned = len(client.seen)
        time.sleep(1)
    assert client.failures == [], client.failures[:3]
    assert client.seen[0] == first["sha256"] and second["sha256"] != first["sha256"]
    assert set(client.seen[returned:]) == {second["sha256"]}, "a stale page was served after deploy returned"
    assert "3/3 tasks HTTP 200" in _origin_evidence(second)
    # Spread is a preference: a start-first update places each new task while the old ones still count, so two
    # may share a node afterwards. The new page still runs on more than one node.
    assert len({t.node for t in _running(publab, name)}) >= 2


def test_bind_mode_is_pinned_to_the_manager_and_refuses_replicas(publab, nodes):
    refused = publab.run("deploy", "--subdomain", publab.name(), "--content", "bind", env=THREE)
    assert refused.exit_code != 0
    assert "deploy.replicas: 3 replicas with --content bind" in refused.stderr
    assert "--content config" in refused.stderr
    name = publab.name()
    answer = _deploy(publab, name, "--content", "bind", env={})
    manager = docker("info", "--format", "{{.Swarm.NodeID}}").stdout.strip()
    assert answer["service"]["constraints"] == [f"node.id=={manager}"]
    assert {t.node for t in _running(publab, name)} == {manager}


def test_teardown_removes_the_configs_and_every_node_s_tasks(publab, nodes):
    name = publab.name()
    answer = _deploy(publab, name)
    configs = {c["name"] for c in answer["service"]["configs"]}
    assert publab.run("teardown", name).exit_code == 0
    clients = publab.clients()
    try:
        assert not set(clients.swarm.configs()) & configs and clients.swarm.service(name) is None
    finally:
        clients.close()
    label = f"label=com.docker.swarm.service.name={name}"
    for worker in nodes.plan.workers:  # each worker's own daemon: no container of the service is left
        _wait(lambda worker=worker: cluster.worker_docker(worker, "ps", "--all", "--quiet", "--filter", label)
              .stdout.strip() == "", 30, f"{worker.hostname} removed the service's containers")
    assert docker("ps", "--all", "--quiet", "--filter", label).stdout.strip() == ""
