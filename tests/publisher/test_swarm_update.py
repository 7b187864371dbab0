"""The adapter's half of ensure_service's update (swarm.Swarm over a recording low-level Docker client, as
fixtures/make_v01.py's _Recorder): the version it sends, and how it reads Docker's answer. Docker's own answers are
made by the SDK's own translation of an HTTP error (docker.errors.create_api_error_from_http_exception), so they
are the exceptions the adapter meets against a real daemon; the lab checks it against one (test_lab_redeploy)."""

from __future__ import annotations

import copy
import json
from typing import Any

import docker.errors
import pytest
import requests

from graphsite.publisher.plan import DeployPlan
from graphsite.publisher.swarm import Expected, ServiceOutcome, Swarm, SwarmError

OUT_OF_SEQUENCE = "rpc error: code = Unknown desc = update out of sequence"


def _docker_error(status: int, message: str) -> docker.errors.APIError:
    """Return the exception the SDK raises for a daemon's answer `status` {"message": message}."""
    response = requests.Response()
    response.status_code, response.url, response.reason = status, "http+docker://localhost/services/x/update", "No"
    response._content = json.dumps({"message": message}).encode()
    try:
        docker.errors.create_api_error_from_http_exception(requests.exceptions.HTTPError(response=response))
    except docker.errors.APIError as exc:
        return exc
    raise AssertionError("the SDK always raises")


class _Docker:
    """A low-level Docker client holding one service, which answers an update as the daemon does: at the service's
    version it is applied (the version moves), at another it is refused "update out of sequence". It records the
    version of every update it was sent."""

    def __init__(self, plan: DeployPlan, version: int) -> None:
        self.api = self
        self.raw: dict[str, Any] = {"ID": "svc-1", "Version": {"Index": version}, "Spec": {
            "Name": plan.service.name, "Labels": {"graphsite.title": "Before"},
            "Mode": {"Replicated": {"Replicas": 1}},
            "TaskTemplate": {"ContainerSpec": {"Image": plan.service.image, "Configs": []}}}}
        self.sent: list[int] = []
        self.answers: list[Exception] = []  # what the next updates raise instead, in order
        self.moves_before_each_answer = 0  # Swarm's own writes between an update's arrival and its check

    def ping(self) -> bool:
        return True

    def configs(self, filters: dict[str, str]) -> list[dict[str, Any]]:
        return [{"ID": f"cfg-{filters['name']}", "Spec": {"Name": filters["name"]}}]

    def inspect_service(self, name: str) -> dict[str, Any]:
        if name != self.raw["Spec"]["Name"]:
            raise docker.errors.NotFound(f"service {name} not found")
        return copy.deepcopy(self.raw)

    def bookkeeping(self) -> None:
        """Write the service again with its Spec as it is (Swarm's updater: a rollout started, completed)."""
        self.raw["Version"]["Index"] += 1

    def update_service(self, service: str, version: int, **spec: Any) -> dict[str, Any]:
        assert service == self.raw["ID"]
        self.sent.append(version)
        for _ in range(self.moves_before_each_answer):
            self.bookkeeping()
        if self.answers:
            raise self.answers.pop(0)
        if version != self.raw["Version"]["Index"]:
            raise _docker_error(500, OUT_OF_SEQUENCE)
        self.raw["Spec"]["Labels"] = spec["labels"]
        self.raw["Version"]["Index"] += 1
        return {}


@pytest.fixture
def docker_at_7(fixed_plan) -> tuple[_Docker, Swarm, Expected]:
    """Return the client, the adapter over it, and what a plan that read the service at version 7 expects."""
    client = _Docker(fixed_plan, version=7)
    swarm = Swarm(client)  # the SDK's client, as far as the adapter asks it
    return client, swarm, Expected.read(swarm.service(fixed_plan.service.name))


def test_the_update_carries_the_version_the_plan_read(fixed_plan, docker_at_7):
    client, swarm, read = docker_at_7
    assert swarm.ensure_service(fixed_plan.service, read) is ServiceOutcome.UPDATED
    assert client.sent == [7]
    assert client.raw["Spec"]["Labels"] == dict(fixed_plan.service.labels)


@pytest.mark.parametrize("moves", [1, 2])
def test_a_version_only_swarm_s_bookkeeping_moved_is_sent_again_at_the_new_one(fixed_plan, docker_at_7, moves):
    """Not the version the adapter looked at just before the write (9), the plan's (7): refused, then the Spec is
    read again, found the plan's, and the update sent at the version Docker holds now."""
    client, swarm, read = docker_at_7
    for _ in range(moves):
        client.bookkeeping()
    assert swarm.ensure_service(fixed_plan.service, read) is ServiceOutcome.UPDATED
    assert client.sent == [7, 7 + moves]
    assert client.raw["Spec"]["Labels"] == dict(fixed_plan.service.labels)


def test_a_spec_changed_since_the_plan_read_it_is_changed_and_left_as_it_is(fixed_plan, docker_at_7):
    client, swarm, read = docker_at_7
    client.raw["Spec"]["Labels"] = theirs = {"graphsite.title": "Theirs"}
    client.bookkeeping()  # their update moved the version
    assert swarm.ensure_service(fixed_plan.service, read) is ServiceOutcome.CHANGED
    assert client.sent == [7] and client.raw["Spec"]["Labels"] == theirs


def test_a_version_that_keeps_moving_is_tried_three_times_then_refused(fixed_plan, docker_at_7):
    client, swarm, read = docker_at_7
    client.moves_before_each_answer = 1  # every update arrives after Swarm wrote the service again
    with pytest.raises(SwarmError) as refused:
        swarm.ensure_service(fixed_plan.service, read)
    assert client.sent == [7, 8, 9]
    name = fixed_plan.service.name
    assert refused.value.detail == (f"Docker: update service {name}: refused as out of sequence 3 times (last at "
                                    "version 9), though its spec stayed the one this run read: Swarm kept writing "
                                    "its rollout's state meanwhile; the service was left as it is")
    assert refused.value.hint == f"wait until `docker service ps {name}` shows its tasks settled, then run the " \
                                 "command again"


def test_a_spec_changed_between_the_second_look_and_the_retry_is_refused_by_docker_and_changed(
        fixed_plan, docker_at_7):
    """Swarm's bookkeeping moved the version (7 → 8); the adapter looks again, finds the plan's Spec and sends
    at 8; meanwhile another run's update lands (8 → 9, their labels): Docker refuses, the next look finds their
    Spec: CHANGED, their labels kept."""
    client, swarm, read = docker_at_7
    client.bookkeeping()
    theirs = {"graphsite.title": "Theirs"}
    looks = 0
    inspect = client.inspect_service

    def looking(name: str) -> dict[str, Any]:
        nonlocal looks
        raw = inspect(name)
        looks += 1
        if looks == 2:  # right after the adapter's second look, before its retry arrives
            client.raw["Spec"]["Labels"] = theirs
            client.bookkeeping()
        return raw

    client.inspect_service = looking  # type: ignore[method-assign]
    assert swarm.ensure_service(fixed_plan.service, read) is ServiceOutcome.CHANGED
    assert client.sent == [7, 8] and client.raw["Spec"]["Labels"] == theirs


def test_a_spec_changed_to_this_run_s_own_is_still_a_change_never_unchanged(fixed_plan, docker_at_7):
    """Another writer put exactly this run's labels there, and more: the adapter's verdict would be UNCHANGED,
    and a later step's undo would roll the service back over their write. A Spec the plan did not read is a change."""
    client, swarm, read = docker_at_7
    update = client.update_service

    def theirs_first(service: str, version: int, **spec: Any) -> dict[str, Any]:
        if not client.sent:  # their update lands just before this run's first one arrives
            ours = [{"ConfigName": c.name} for c in fixed_plan.service.configs]
            client.raw["Spec"] = {**copy.deepcopy(client.raw["Spec"]), "Labels": dict(fixed_plan.service.labels),
                                  "EndpointSpec": {"Mode": "vip"}}
            client.raw["Spec"]["TaskTemplate"]["ContainerSpec"]["Configs"] = ours
            client.bookkeeping()
        return update(service, version, **spec)

    client.update_service = theirs_first  # type: ignore[method-assign]
    assert swarm.ensure_service(fixed_plan.service, read) is ServiceOutcome.CHANGED
    assert client.sent == [7] and client.raw["Spec"]["EndpointSpec"] == {"Mode": "vip"}


@pytest.mark.parametrize("status, message", [
    (400, "rpc error: code = InvalidArgument desc = ContainerSpec: image reference must be provided"),
    (500, "rpc error: code = Unavailable desc = the raft leader is unreachable"),
])
def test_any_other_refusal_keeps_docker_s_words(fixed_plan, docker_at_7, status, message):
    client, swarm, read = docker_at_7
    client.answers.append(_docker_error(status, message))
    with pytest.raises(SwarmError) as refused:
        swarm.ensure_service(fixed_plan.service, read)
    assert client.sent == [7]
    assert refused.value.detail == f"Docker: update service {fixed_plan.service.name}: {message}"
