"""The DNS step: what to do about the name's existing records (pure), and doing it (through Dns)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from graphsite.errors import DeployError
from graphsite.publisher.cloudflare import Record
from graphsite.publisher.deployment import Claim
from graphsite.publisher.plan import DnsRecord
from graphsite.publisher.ports import DnsPort

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


def apply_record(dns: DnsPort, wanted: DnsRecord, decision: RecordDecision) -> tuple[str, Record]:
    """Carry out `decision`; return the line to print (CREATED / EXISTS / REPLACED …) and the record."""
    existing = decision.existing
    if decision.action == "exists" and existing is not None:
        return f"EXISTS id={existing.id}", existing
    if decision.action == "restamp" and existing is not None:
        made = dns.restamp(existing, wanted.comment)
        return f"UPDATED id={made.id} comment={made.comment}", made
    if decision.action == "replace" and existing is not None:
        dns.delete(existing.id)
        made = dns.create(wanted)
        return f"REPLACED {existing.content} with {describe(made)}", made
    made = dns.create(wanted)
    return f"CREATED {describe(made)}", made


def restore_record(dns: DnsPort, previous: Record, remove_mine: Callable[[], bool]) -> bool:
    """Undo a --force repoint: remove the record this run made, then make the previous one again (same name,
    content, ttl, proxied and comment; Cloudflare gives it a new id)."""
    remove_mine()
    if any(r.type == "A" and r.content == previous.content for r in dns.records(previous.name)):
        return False
    dns.create(DnsRecord(name=previous.name, type="A", content=previous.content, ttl=previous.ttl,
                         proxied=previous.proxied, comment=previous.comment))
    return True
