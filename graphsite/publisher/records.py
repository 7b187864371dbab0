"""The DNS step decided: what to do about the name's existing records (pure; publisher/record_actions.py does it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from graphsite.errors import DeployError
from graphsite.publisher.cloudflare import Record
from graphsite.publisher.deployment import Claim, whose
from graphsite.publisher.plan import DnsRecord

RecordAction = Literal["create", "exists", "restamp", "replace"]


@dataclass(frozen=True)
class RecordDecision:
    """`create`, `exists`, `restamp` (an earlier deploy's record, given this deploy's stamp) or `replace` (with
    --force) the A record; `existing` is the record found."""

    action: RecordAction
    existing: Record | None = None


def decide_record(found: list[Record], wanted: DnsRecord, domain: str, *, force: bool = False) -> RecordDecision:
    """Return what the DNS step does given the A/AAAA/CNAME records named like `wanted` under `domain`; raise
    when it must not."""
    others = [r for r in found if r.type in ("CNAME", "AAAA")]
    if others:
        kinds = ", ".join(owned(r, domain) for r in others)
        raise DeployError(f"DNS: {wanted.name} already has {kinds}; an A record beside it would conflict",
                          hint="choose another subdomain, or remove that record in Cloudflare first")
    a_records = [r for r in found if r.type == "A"]
    if len(a_records) > 1:
        _refuse_several(a_records, wanted, domain)
    same = [r for r in a_records if r.content == wanted.content]
    if same and same[0].claim(domain) == Claim.OURS:
        # an earlier deploy's record (this release's, or an older graphsite's without an id) carries this deploy's
        # stamp from now on: a stamp the next release no longer reads would leave a record nothing removes
        return RecordDecision("exists" if same[0].comment == wanted.comment else "restamp", same[0])
    if same:  # the right address, but not graphsite's: nothing would say whose it is, and gc would call it missing
        if not force:
            raise DeployError(f"DNS: {wanted.name} already points at {wanted.content} (A id={same[0].id}), but "
                              "graphsite did not make that record",
                              hint="choose another subdomain, or pass --force to replace it with graphsite's own")
        return RecordDecision("replace", same[0])
    if a_records:
        if not force:
            record = a_records[0]
            raise DeployError(f"DNS: {wanted.name} already points at {record.content} (A id={record.id}), "
                              f"not {wanted.content}", hint="choose another subdomain, or pass --force to repoint it")
        return RecordDecision("replace", a_records[0])
    return RecordDecision("create")


def _refuse_several(a_records: list[Record], wanted: DnsRecord, domain: str) -> None:
    """Raise for a name with several A records: resolvers hand out each of them, so readers are split between
    the addresses, and graphsite's record (kept, or one that --force would repoint) does not change that."""
    ours = [r for r in a_records if r.content == wanted.content and r.claim(domain) == Claim.OURS]
    if ours:
        beside = ", ".join(owned(r, domain) for r in a_records if r is not ours[0])
        raise DeployError(f"DNS: {wanted.name} has {beside} beside graphsite's {named(ours[0])}: readers are split "
                          "between the addresses",
                          hint=f"remove the other A records in Cloudflare (graphsite keeps one A record of "
                               f"{wanted.name}, id={ours[0].id}), then deploy again")
    raise DeployError(f"DNS: {wanted.name} has {len(a_records)} A records "
                      f"({', '.join(owned(r, domain) for r in a_records)}), "
                      "not one", hint="choose another subdomain, or remove them in Cloudflare first (--force "
                                      "repoints one A record, never several)")


def named(record: Record) -> str:
    """Return the record as messages name it: 'A 192.0.2.7 (id=…)'."""
    return f"{record.type} {record.content} (id={record.id})"


def owned(record: Record, domain: str) -> str:
    """Return the record as messages name it, with whose it is under `domain`: 'A 192.0.2.7 (id=…, graphsite did
    not make it)'. One of this configuration's may sit at an old address (dns.record_content changed since)."""
    owner, stamp = record.claim(domain), record.stamp
    if owner == Claim.OURS:
        who = f"this configuration's, deployment {stamp.id}" if stamp and stamp.id else "this configuration's"
    else:
        who = whose(owner, stamp)
    return f"{record.type} {record.content} (id={record.id}, {who})"


def describe(record: Record) -> str:
    return (f"id={record.id} name={record.name} content={record.content} "
            f"proxied={str(record.proxied).lower()} ttl={record.ttl}")
