"""The DNS step done: a record decision (publisher/records.py) carried out through the DNS port, and undone."""

from __future__ import annotations

from collections.abc import Callable

from graphsite.publisher.cloudflare import Record
from graphsite.publisher.plan import DnsRecord
from graphsite.publisher.ports import DnsPort
from graphsite.publisher.records import RecordDecision, describe


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
