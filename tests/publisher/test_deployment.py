"""The Deployment record: every way a deployment is written into a system reads back the same, the first
version's records are still recognised, and a half-made deployment's state is derived from what exists."""

from __future__ import annotations

import fcntl
import os
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graphsite import __version__
from graphsite.publisher import route, route_files
from graphsite.publisher.cloudflare import Record
from graphsite.publisher.deployment import COMMENT_LIMIT, Claim, Deployment, Stamp

NOW = datetime(2026, 7, 1, 12, 0, 0, tzinfo=UTC)
STAMP = Stamp("graph-eng-0a1b2c", "graph-eng-0a1b2c.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z",
              "2026-07-08T12:00:00Z")


def _record(comment: str, name: str = "graph-eng-0a1b2c.example.com") -> Record:
    return Record(name, "A", "1.2.3.4", 1, False, comment, id="r1")


def test_every_system_s_record_reads_back_the_same_stamp(tmp_path):
    assert Stamp.from_labels(STAMP.labels()) == STAMP
    assert Stamp.from_marker(STAMP.marker("a" * 64)) == STAMP
    assert Stamp.from_route_text(STAMP.route_comment() + "http: {}\n") == STAMP
    assert Stamp.from_record_comment(STAMP.record_comment()) == STAMP


def test_a_deployment_round_trips_through_its_service_labels():
    deployment = Deployment(name="s1", fqdn="s1.example.com", sha256="b" * 64, title="T", created=STAMP.created,
                            expires=STAMP.expires, content="bind", replicas=3, access="private", id="0a1b2c3d",
                            made_by="9.9.9")
    assert Deployment.from_labels(deployment.labels(), replicas=3) == deployment
    assert Deployment.from_labels({"other": "label"}) is None


def test_a_complete_stamp_under_the_domain_in_use_is_ours_and_under_another_domain_is_not():
    assert STAMP.claim("graph-eng-0a1b2c", "example.com") == Claim.OURS
    assert STAMP.claim("graph-eng-0a1b2c", "staging.example.com") == Claim.OTHER
    assert STAMP.claim("another-name", "example.com") == Claim.UNPROVEN  # names another resource


@pytest.mark.parametrize("labels", [
    {"graphsite.subdomain": "s1"},  # the one label alone proves nothing
    {"graphsite.subdomain": "s1", "graphsite.stamp": "2", "graphsite.fqdn": "s1.example.com",
     "graphsite.created": "2026-07-01T12:00:00Z"},  # no deployment id
    {"graphsite.subdomain": "s1", "graphsite.stamp": "2", "graphsite.fqdn": "s1.example.com",
     "graphsite.id": "0a1b2c3d", "graphsite.created": "yesterday"},  # a creation time that is none
    {"graphsite.subdomain": "s1", "graphsite.stamp": "2", "graphsite.fqdn": "s2.example.com",
     "graphsite.id": "0a1b2c3d", "graphsite.created": "2026-07-01T12:00:00Z"},  # an fqdn of another name
])
def test_labels_that_do_not_make_a_complete_stamp_prove_nothing(labels):
    stamp = Stamp.from_labels(labels)
    assert stamp is not None and stamp.claim("s1", "example.com") in (Claim.UNPROVEN, Claim.OLDER)
    assert stamp.claim("s1", "example.com") != Claim.OURS


@pytest.mark.parametrize("comment", [
    "graphsite: made by hand",
    "graphsite: graph-eng-0a1b2c",
    "graphsite: graph-eng-0a1b2c (made by graphsite deploy)",  # graphsite 0.0's comment held no time: unproven
    "graphsite:2 graph-eng-0a1b2c.example.com id=0a1b2c3d",  # no creation time
    "graphsite:2 graph-eng-0a1b2c.example.com id=xyz c=20260701T120000Z",  # an id that is none
    "graphsite:2 graph-eng-0a1b2c.example.com id=0a1b2c3d c=20260701T120000Z and more",
])
def test_a_comment_that_merely_starts_like_graphsite_s_claims_nothing(comment):
    assert _record(comment).claim("example.com") in (None, Claim.UNPROVEN)


def test_a_record_whose_stamp_names_another_fqdn_is_not_proven():
    comment = Stamp("other", "other.example.com", "0a1b2c3d", STAMP.created).record_comment()
    assert _record(comment, "other.example.com").claim("example.com") == Claim.OURS
    assert _record(comment).claim("example.com") == Claim.UNPROVEN  # copied onto another record


def test_the_previous_release_s_stamps_are_still_recognised():
    """graphsite 0.1 wrote name, created and expires; the record's own name and the service's fqdn label say
    which configuration made them; a config, a marker or a route file of 0.1 names no domain."""
    v1_record = _record("graphsite: graph-eng-0a1b2c (created 2026-07-01T12:00:00Z, expires 2026-07-08T12:00:00Z)")
    assert v1_record.claim("example.com") == Claim.OURS and v1_record.claim("other.org") == Claim.OTHER
    service = {"graphsite.subdomain": "s1", "graphsite.created": STAMP.created, "graphsite.expires": "",
               "graphsite.fqdn": "s1.example.com", "graphsite.sha256": "a" * 64}
    deployment = Deployment.from_labels(service)
    assert deployment is not None and deployment.stamp.claim("s1", "example.com") == Claim.OURS
    assert deployment.made_by == "" and not deployment.current and deployment.stamp_version == 1
    config = Stamp.from_labels({"graphsite.subdomain": "s1", "graphsite.created": STAMP.created})
    assert config is not None and config.claim("s1", "example.com") == Claim.OLDER
    marker = Stamp.from_marker(f"made by graphsite deploy: name=s1 created={STAMP.created} expires=\n")
    assert marker is not None and marker.claim("s1", "example.com") == Claim.OLDER
    route_line = Stamp.from_route_text(f"# graphsite: name=s1 created={STAMP.created} expires=\nhttp: {{}}\n")
    assert route_line is not None and route_line.claim("s1", "example.com") == Claim.OLDER


def test_a_redeploy_keeps_the_deployment_s_id_and_gives_an_older_one_an_id():
    new = Deployment("s1", "s1.example.com", created="2026-07-02T00:00:00Z", id="ffffffff")
    assert new.renewed(Deployment("s1", "s1.example.com", created=STAMP.created, id="0a1b2c3d")).id == "0a1b2c3d"
    older = Deployment("s1", "s1.example.com", created=STAMP.created, stamp_version=1)
    renewed = new.renewed(older)
    assert renewed.id == "ffffffff" and renewed.created == STAMP.created and renewed.stamp_version == 2
def test_the_labels_name_the_graphsite_that_wrote_them_and_an_older_one_wrote_none():
    labels = Deployment(name="s1", fqdn="s1.example.com", made_by=__version__).labels()
    assert labels["graphsite.version"] == __version__
    del labels["graphsite.version"]  # what the release before this label wrote
    older = Deployment.from_labels(labels)
    assert older is not None and older.made_by == ""




def test_a_record_comment_fits_cloudflare_s_limit_for_the_longest_name():
    stamp = Stamp("s" * 41, "s" * 41 + ".hhdevs.space", "0a1b2c3d", STAMP.created, STAMP.expires)
    comment = stamp.record_comment()
    assert len(comment) <= COMMENT_LIMIT and stamp.fqdn in comment
    assert Stamp.from_record_comment(comment) == Stamp(stamp.name, stamp.fqdn, stamp.id, stamp.created)
    with pytest.raises(ValueError, match="Cloudflare keeps 100"):
        Stamp("s1", "s1." + "d" * 60 + ".com", "0a1b2c3d", STAMP.created).record_comment()


def test_expiry_and_grace_are_derived_from_the_stamp():
    assert STAMP.expired(NOW + timedelta(days=8)) and not STAMP.expired(NOW)
    assert not Stamp("x").expired(NOW)  # no expiry: never expires
    assert STAMP.older_than(NOW + timedelta(minutes=16), 900) and not STAMP.older_than(NOW, 900)
    assert Stamp("x").older_than(NOW, 900) is None  # says nothing of its age: unknown, not old


def test_a_temporary_route_file_a_killed_write_left_is_found_with_its_name(tmp_path):
    from graphsite.atomic import temporary_prefix

    stamped = tmp_path / f"{temporary_prefix(tmp_path / 'gs-1.yml')}abcd1234.tmp"
    stamped.write_text(STAMP.route_comment().replace(STAMP.name, "gs-1") + "http: {}\n")
    empty = tmp_path / ".gs-2.yml.zz99zz99.tmp"  # killed between creating and writing it
    empty.write_text("")
    first_version = tmp_path / ".gs-3.k2j4k2j4.graphsite-tmp"
    first_version.write_text("")
    foreign = tmp_path / ".gs-4.yml.q1q1q1q1.tmp"
    foreign.write_text("# someone else's\n")
    (tmp_path / "gs-5.yml").write_text("http: {}\n")  # not a temporary file
    for chosen in (".yml.\x1b[2J\x1b]0;owned\x07.tmp", ".yml.x9.tmp", ".\x1b[2J.graphsite-tmp",  # not graphsite's
                   ".yml.ab12ab12.tmp\n", ".ab12ab12.graphsite-tmp\n"):  # a name ends where graphsite's does
        (tmp_path / f".gs-5{chosen}").write_text("")
    cut = tmp_path / ".gs-6.yml.ab12ab12.tmp"  # killed inside the stamp's first line
    cut.write_text(Stamp("gs-6", "gs-6.example.com", "0a1b2c3d", STAMP.created).route_comment()[:33])
    (tmp_path / ".gs-7.yml.ab12ab12.tmp").write_text(Stamp("gs-8").route_comment()[:40])  # names another deployment
    staging = Stamp("gs-9", "gs-9.staging.example.com", "0a1b2c3d", STAMP.created).route_comment()
    (tmp_path / ".gs-9.yml.ab12ab12.tmp").write_text(staging + "http: {}\n")  # another configuration's, whole
    (tmp_path / ".gs-9.yml.cd34cd34.tmp").write_text(staging[:70])  # cut, but past its fqdn: another's too
    (tmp_path / ".gs-9.yml.ef56ef56.tmp").write_text(staging[:45])  # cut inside an fqdn that is not this domain's
    # nothing written yet, or cut before its fqdn: it names no domain (ours only beside a proven resource)
    found = route_files.temporaries(tmp_path, "example.com")
    assert {name: {path: left.claim for path, left in paths.items()} for name, paths in found.items()} == {
        "gs-1": {stamped: Claim.OURS}, "gs-2": {empty: Claim.UNFINISHED}, "gs-3": {first_version: Claim.UNFINISHED},
        "gs-6": {cut: Claim.UNFINISHED}}
    # the one read that judges it dates it too: the whole stamp of the finished one, none for the cut ones
    whole = Stamp.from_route_text(stamped.read_text())
    assert whole is not None and found["gs-1"][stamped].stamp == whole
    assert [found[name][path].stamp for name, path in (("gs-2", empty), ("gs-6", cut))] == [None, None]


def test_a_route_file_says_whose_it_is(tmp_path, production):
    path = tmp_path / "gs-1.yml"
    document = route.route_document(route.RouteSettings.from_config(production), "gs-1", "gs-1.hhdevs.space")
    stamp = Stamp("gs-1", "gs-1.hhdevs.space", "0a1b2c3d", STAMP.created, STAMP.expires)
    assert route_files.write_route(path, document, stamp) is True
    assert path.read_text().startswith("# graphsite: stamp=2 name=gs-1 fqdn=gs-1.hhdevs.space id=0a1b2c3d created=")
    assert route_files.route_stamp(path) == stamp
    assert route_files.write_route(path, document, stamp) is False  # unchanged: not rewritten
    other = tmp_path / "gs-2.yml"
    other.write_text(path.read_text())  # the same routers under another file name: not the route of gs-2
    assert route_files.route_stamp(other) is None
    assert oct(path.stat().st_mode & 0o777) == "0o644" and not list(tmp_path.glob(".*"))


def test_a_lock_file_lives_only_while_its_run_does(tmp_path):
    from graphsite.publisher.lock import subdomain_lock

    with subdomain_lock(tmp_path, "s1") as path:
        assert path.read_text() == f"pid {os.getpid()}"
    assert list(tmp_path.iterdir()) == []


def test_a_run_that_opened_the_lock_file_before_it_was_removed_takes_the_new_one(tmp_path):
    """The holder removes the file as it finishes; a run that opened the old file meanwhile must not hold a lock
    on a nameless file while a third run locks the new one: both checks go through the name."""
    import threading

    from graphsite.publisher.lock import subdomain_lock

    inside: list[str] = []
    release, entered = threading.Event(), threading.Event()

    def holder() -> None:
        with subdomain_lock(tmp_path, "s1"):
            inside.append("first")
            entered.set()
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    assert entered.wait(5), "the first holder never got the lock"
    threading.Timer(0.2, release.set).start()
    with subdomain_lock(tmp_path, "s1", wait=5) as path:
        probe = os.open(path, os.O_RDWR)  # the lock held is on the file the name leads to: it cannot be taken
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(probe)
        inside.append("second")
    thread.join()
    assert inside == ["first", "second"] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("present,missing", [
    ({"deployment", "configs", "route", "records"}, []),
    ({"deployment", "configs"}, ["route", "record"]),
    ({"route"}, ["service", "record", "configs"]),
    ({"records"}, ["service", "route", "configs"]),
])
def test_what_a_partial_deployment_lacks_is_derived(present, missing):
    from graphsite.usecases.inventory import Holding

    fields = {"deployment": Deployment("s1", "s1.x", created=STAMP.created), "configs": ("s1-page-x",),
              "route": Path("/d/s1.yml"), "records": (object(),)}
    held = Holding(name="s1", fqdn="s1.x", stamps=(Stamp("s1", created=STAMP.created),),
                   **{k: v for k, v in fields.items() if k in present})
    assert held.missing() == missing
    assert held.state(NOW) == ("partial" if missing else "deployed")


def test_what_could_not_be_read_is_not_called_missing():
    from graphsite.usecases.inventory import DNS, Holding

    held = Holding(name="s1", fqdn="s1.x", deployment=Deployment("s1", "s1.x"), configs=("c",),
                   route=Path("/d/s1.yml"), unknown=(DNS,))
    assert held.missing() == [] and held.state(NOW) == "deployed"


def test_an_a_record_with_the_right_address_that_graphsite_did_not_make_is_refused_or_replaced():
    """A foreign record would make the deployment look partial forever (nothing says whose it is), and gc would
    then tear a live page down: refused without --force, replaced by graphsite's own with it. graphsite's own
    record is kept, and given this deploy's stamp when an earlier deploy stamped it otherwise."""
    from graphsite.errors import DeployError
    from graphsite.publisher.cloudflare import Record
    from graphsite.publisher.plan import DnsRecord
    from graphsite.publisher.records import decide_record

    wanted = DnsRecord("s1.x", "A", "1.2.3.4", 60, False, STAMP.record_comment())
    foreign = Record("s1.x", "A", "1.2.3.4", 60, False, "made by hand", id="r1")
    ours = Record("s1.x", "A", "1.2.3.4", 60, False, Stamp("s1", "s1.x", "0a1b2c3d", STAMP.created).record_comment(),
                  id="r2")
    with pytest.raises(DeployError, match="graphsite did not make that record"):
        decide_record([foreign], wanted, "x")
    assert decide_record([foreign], wanted, "x", force=True).action == "replace"
    assert decide_record([ours], replace(wanted, comment=ours.comment), "x").action == "exists"
    assert decide_record([ours], wanted, "x").action == "restamp"  # kept, with this deploy's stamp
    with pytest.raises(DeployError, match="graphsite did not make that record"):
        decide_record([ours], wanted, "other.x")  # another configuration's record is not taken over
