"""ensure_service's rule (swarm.service_verdict), on the fake that shares it with the adapter: what is created,
rolled, left unchanged, or left as it is because the name no longer holds what the plan read; and the version
the plan read, which an update carries (a service changed since is left as it is: Docker refuses the update)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from graphsite.publisher.plan import DeployPlan
from graphsite.publisher.swarm import NOTHING_READ, Expected, Service, ServiceOutcome
from tests.publisher.fakes import FakeSwarm


def _swarm(plan: DeployPlan) -> FakeSwarm:
    swarm = FakeSwarm()
    for item in plan.service.configs:
        swarm.ensure_config(plan.stamp, item)
    return swarm


def _deployed(plan: DeployPlan) -> tuple[FakeSwarm, Service]:
    """Return a swarm where the plan's service runs, and the service as a plan reads it."""
    swarm = _swarm(plan)
    assert swarm.ensure_service(plan.service, NOTHING_READ) is ServiceOutcome.CREATED
    read = swarm.service(plan.service.name)
    assert read is not None
    return swarm, read


def test_none_read_and_none_there_is_created(fixed_plan):
    swarm = _swarm(fixed_plan)
    assert swarm.ensure_service(fixed_plan.service, NOTHING_READ) is ServiceOutcome.CREATED
    assert swarm.created[-1] == f"service {fixed_plan.service.name}"


def test_none_read_but_one_there_now_is_left_as_it_is(fixed_plan):
    swarm = _swarm(fixed_plan)
    swarm.add_service(fixed_plan.service.name, {"graphsite.fqdn": "other.example.org"})
    theirs = swarm.services_by_name[fixed_plan.service.name]
    assert swarm.ensure_service(fixed_plan.service, NOTHING_READ) is ServiceOutcome.EXISTS
    assert swarm.services_by_name[fixed_plan.service.name] == theirs


def test_the_service_read_running_the_spec_is_unchanged(fixed_plan):
    swarm, read = _deployed(fixed_plan)
    assert swarm.ensure_service(fixed_plan.service, Expected.read(read)) is ServiceOutcome.UNCHANGED
    assert swarm.services_by_name[fixed_plan.service.name] == read


@pytest.mark.parametrize("other", [
    {"labels": {"graphsite.title": "Before"}},
    {"configs": ("another-config",)},
    {"replicas": 2},
    {"image": "caddy:2.7-alpine"},
], ids=["labels", "configs", "replicas", "image"])
def test_the_service_read_running_another_spec_is_rolled_to_this_one(fixed_plan, other):
    """Before, the fake judged "unchanged" from the labels and configs only, while the adapter also compares the
    replicas and the image: a rule proven on the fake was not the adapter's."""
    swarm, read = _deployed(fixed_plan)
    name = fixed_plan.service.name
    swarm.services_by_name[name] = before = replace(read, **other)
    assert swarm.ensure_service(fixed_plan.service, Expected.read(before)) is ServiceOutcome.UPDATED
    now = swarm.services_by_name[name]
    assert (replace(now, version=read.version), now.version) == (read, before.version + 1)


def test_an_image_swarm_resolved_to_a_digest_is_the_configured_one(fixed_plan):
    swarm, read = _deployed(fixed_plan)
    name = fixed_plan.service.name
    swarm.services_by_name[name] = resolved = replace(read, image=f"{read.image}@sha256:{'0' * 64}")
    assert swarm.ensure_service(fixed_plan.service, Expected.read(resolved)) is ServiceOutcome.UNCHANGED


def test_a_service_removed_since_the_read_is_not_made_again(fixed_plan):
    swarm, read = _deployed(fixed_plan)
    swarm.remove_service(fixed_plan.service.name)
    assert swarm.ensure_service(fixed_plan.service, Expected.read(read)) is ServiceOutcome.GONE
    assert fixed_plan.service.name not in swarm.services_by_name


def test_another_service_made_since_the_read_is_left_as_it_is(fixed_plan):
    swarm, read = _deployed(fixed_plan)
    name = fixed_plan.service.name
    swarm.remove_service(name)
    swarm.add_service(name, {"graphsite.fqdn": "other.example.org"})
    theirs = swarm.services_by_name[name]
    assert swarm.ensure_service(replace(fixed_plan.service, replicas=2), Expected.read(read)) is ServiceOutcome.ANOTHER
    assert swarm.services_by_name[name] == theirs


def test_an_update_from_a_stale_read_is_refused_and_the_other_run_s_change_kept(fixed_plan):
    """Another run (another host) rolls the service between this run's read and its write: the write carries the
    version this run read, and is refused as Docker refuses it ("update out of sequence"), never overwriting."""
    swarm, read = _deployed(fixed_plan)
    name = fixed_plan.service.name
    theirs = replace(fixed_plan.service, labels=(*fixed_plan.service.labels, ("ops.note", "theirs")))
    assert swarm.ensure_service(theirs, Expected.read(swarm.service(name))) is ServiceOutcome.UPDATED
    changed = swarm.services_by_name[name]
    assert swarm.ensure_service(replace(fixed_plan.service, replicas=2), Expected.read(read)) is ServiceOutcome.CHANGED
    assert swarm.services_by_name[name] == changed


def test_a_stale_read_of_a_service_that_already_runs_the_spec_writes_nothing(fixed_plan):
    """Nothing to write, nothing to refuse: another run put exactly this spec there since the read."""
    swarm, read = _deployed(fixed_plan)
    name = fixed_plan.service.name
    swarm.services_by_name[name] = now = replace(read, version=read.version + 1)
    assert swarm.ensure_service(fixed_plan.service, Expected.read(read)) is ServiceOutcome.UNCHANGED
    assert swarm.services_by_name[name] == now


@pytest.mark.parametrize("writes", [1, 2])
def test_a_version_moved_by_swarm_s_own_bookkeeping_alone_is_rolled(fixed_plan, writes):
    """Swarm's updater writes the service again with its spec as it was (a rollout started, completed): the spec
    is still the one read, so nobody else changed the service and the update goes through at the new version."""
    swarm, read = _deployed(fixed_plan)
    name = fixed_plan.service.name
    for _ in range(writes):
        swarm.bookkeeping(name)
    assert swarm.ensure_service(replace(fixed_plan.service, replicas=2), Expected.read(read)) is ServiceOutcome.UPDATED
    now = swarm.services_by_name[name]
    assert (now.id, now.replicas, now.version) == (read.id, 2, read.version + writes + 1)


def test_a_spec_changed_after_swarm_s_own_bookkeeping_is_still_refused(fixed_plan):
    """Swarm's bookkeeping, then another run's change: the spec is no longer the one read, so the update is
    refused, whatever moved the version first."""
    swarm, read = _deployed(fixed_plan)
    name = fixed_plan.service.name
    swarm.bookkeeping(name)
    swarm.services_by_name[name] = theirs = replace(swarm.services_by_name[name], labels={"ops.note": "theirs"},
                                                    version=read.version + 2)
    assert swarm.ensure_service(replace(fixed_plan.service, replicas=2), Expected.read(read)) is ServiceOutcome.CHANGED
    assert swarm.services_by_name[name] == theirs


def test_what_a_plan_read_is_made_only_from_its_read():
    """Before, Expected had defaults: Expected() was a read of nothing, and Expected(id=None, version=7) or a
    service at version 0 passed for what a plan read."""
    with pytest.raises(TypeError):
        Expected()  # type: ignore[call-arg]
    for nonsense in [(None, 7, ""), (None, 0, "d1"), ("svc1", 0, "d1"), ("svc1", 3, "")]:
        with pytest.raises(ValueError, match="is not what a plan can read: make it with Expected.read"):
            Expected(*nonsense)
    assert Expected.read(None) is NOTHING_READ
    assert Expected.read(Service("svc1", "site-1", {}, 1, (), 3, spec_digest="d1")) == Expected("svc1", 3, "d1")
