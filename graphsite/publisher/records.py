"""The DNS step decided: what to do about the name's existing records (pure; publisher/record_actions.py does it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from graphsite.errors import DeployError
from graphsite.publisher.cloudflare import Record
from graphsite.publisher.deployment import Claim
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
        kinds = ", ".join(f"{r.type} {r.content} (id={r.id})" for r in others)
        raise DeployError(f"DNS: {wanted.name} already has {kinds}; an A record beside it would conflict",
                          hint="choose another subdomain, or remove that record in Cloudflare first")
    a_records = [r for r in found if r.type == "A"]
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


def describe(record: Record) -> str:
    return (f"id={record.id} name={record.name} content={record.content} "
            f"proxied={str(record.proxied).lower()} ttl={record.ttl}")
