"""One deployment, one value: what a deployment is, and the one place that knows how each of its fields is
written into a system (labels, the route file's comment, the bind directory's marker, the DNS record's
comment) and read back. "Is this ours, and for which name?" is answered here and nowhere else.

Every resource a deploy makes carries the deployment's name, creation time and expiry from the moment it exists,
so that a half-made deployment is still fully visible from the systems alone (no local state file).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from graphsite import __version__

PREFIX = "graphsite"
STAMP_VERSION = 2  # the stamp this release writes; version 1 (graphsite 0.1) is still read
# The labels: the systems' own record of a deployment. Configs carry the stamp's; the service all of them.
NAME, CREATED, EXPIRES = f"{PREFIX}.subdomain", f"{PREFIX}.created", f"{PREFIX}.expires"
FQDN, SHA256, TITLE, CONTENT, ACCESS = (f"{PREFIX}.fqdn", f"{PREFIX}.sha256", f"{PREFIX}.title",
                                         f"{PREFIX}.content", f"{PREFIX}.access")
ID, STAMP, VERSION = f"{PREFIX}.id", f"{PREFIX}.stamp", f"{PREFIX}.version"
REPLACED = f"{PREFIX}.replaced"  # the service's: the sha256 of the page its last deploy or rollback replaced
MARKER = ".graphsite"  # the file in a bind directory that says graphsite made it
RECORD_COMMENT = "graphsite:"  # how every DNS record comment graphsite writes starts
ROUTE_COMMENT = "# graphsite:"  # the first line of every route file graphsite writes
COMMENT_LIMIT = 100  # Cloudflare keeps at most 100 characters of a record's comment on most plans
_ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
_COMPACT = r"\d{8}T\d{6}Z"
_ID = r"[0-9a-f]{8}"
_HOST = r"[a-z0-9.-]{1,253}"
_LABEL = r"[a-z0-9-]{1,63}"
# Version 2: every field present, in this order, nothing else on the line.
_FIELDS_V2 = (rf"stamp=2 name=(?P<name>{_LABEL}) fqdn=(?P<fqdn>{_HOST}) id=(?P<id>{_ID}) "
              rf"created=(?P<created>{_ISO}) expires=(?P<expires>(?:{_ISO})?)")
_ROUTE_V2 = re.compile(rf"^{re.escape(ROUTE_COMMENT)} {_FIELDS_V2}$")
_MARKER_V2 = re.compile(rf"^made by graphsite deploy: {_FIELDS_V2}(?: sha256=[0-9a-f]{{64}})?$")
_RECORD_V2 = re.compile(rf"^graphsite:2 (?P<fqdn>{_HOST}) id=(?P<id>{_ID}) c=(?P<created>{_COMPACT})"
                        rf"(?: e=(?P<expires>{_COMPACT}))?$")
# Version 1 (graphsite 0.1): name, created and expires; no fqdn, no id.
_V1 = rf"name=(?P<name>{_LABEL}) created=(?P<created>(?:{_ISO})?) expires=(?P<expires>(?:{_ISO})?)"
_ROUTE_V1 = re.compile(rf"^{re.escape(ROUTE_COMMENT)} {_V1}$")
_MARKER_V1 = re.compile(rf"^made by graphsite deploy: {_V1}(?: sha256=[0-9a-f]{{64}})?$")
_RECORD_V1 = re.compile(rf"^graphsite: (?P<name>{_LABEL}) \(created (?P<created>{_ISO})"
                        rf"(?:, expires (?P<expires>{_ISO}))?\)$")


def iso(moment: datetime) -> str:
    """Return `moment` as the stamp every record uses: 2026-07-01T12:00:00Z."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse_stamp(stamp: str) -> datetime | None:
    """Return the moment of a stamp, or None when it is empty or not one."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _compact(stamp: str) -> str:
    return stamp.replace("-", "").replace(":", "")


def _expanded(compact: str | None) -> str:
    if not compact:
        return ""
    return f"{compact[:4]}-{compact[4:6]}-{compact[6:11]}:{compact[11:13]}:{compact[13:]}"


def new_id() -> str:
    """Return a fresh deployment id: 8 random hex digits, made at a name's first deploy."""
    return secrets.token_hex(4)


class Claim(StrEnum):
    """Whose a resource that carries a graphsite stamp is, judged against the configuration in use."""

    OURS = "ours"  # a complete stamp for this name under this configuration's domain
    OTHER = "another configuration"  # a complete stamp for another domain: never touched
    OLDER = "older graphsite"  # a complete version-1 stamp that cannot name its domain: see `adopted`
    UNFINISHED = "unfinished write"  # a temporary a kill cut short before its stamp named a domain: see `adopted`
    UNPROVEN = "not proven"  # a lookalike: a partial stamp, or one that names another resource


# The claims that name no domain: a resource of this name that proves this configuration must vouch for them.
NEEDS_PROOF = frozenset({Claim.OLDER, Claim.UNFINISHED})


@dataclass(frozen=True)
class Leftover:
    """A temporary a killed write left (a route file, a page directory), as the one look at it found it: whose it
    is, and the whole stamp it carries when it has one (which dates it: a leftover is collected past the grace
    period, not kept as undated). Both come from the same read, so they cannot disagree."""

    claim: Claim
    stamp: Stamp | None = None


@dataclass(frozen=True)
class PageDirectory:
    """A deployment's page directory (`bind_dir`) as one look found it: whether anything is there, where a
    symbolic link there leads (never followed: a link is never graphsite's, it has no marker), and the stamp its
    marker holds, whatever name it gives (None: no marker that can be graphsite's, or one that does not parse).
    Whose it is and whether it is a deployment's are judged on this one read. A marker that could not be read is
    no PageDirectory: that look raises, naming the file."""

    path: Path
    there: bool = False
    link: str | None = None
    stamp: Stamp | None = None

    @property
    def own_stamp(self) -> Stamp | None:
        """Return the stamp when it names the directory's own name (one naming another deployment is not this
        name's), else None."""
        return self.stamp if self.stamp is not None and self.stamp.name == self.path.name else None


def adopted(owner: Claim | None, proven: bool) -> bool:
    """Return whether a resource whose stamp claims `owner` is this configuration's: the one rule of ownership.

    A complete current stamp naming this domain is. A stamp that names no domain (an older graphsite's, complete:
    name and creation time parse and name the resource; or a temporary a kill cut short before its domain) is
    only when `proven`: another resource of the same name carries a complete stamp naming this domain. Anything
    else (a partial stamp, another domain's, a lookalike, none) is foreign: shown, never touched."""
    return owner == Claim.OURS or (owner in NEEDS_PROOF and proven)


@dataclass(frozen=True)
class Stamp:
    """What every resource says about itself: made by graphsite for `name` at `fqdn`, in deployment `id`, when,
    and until when. `version` 1 stamps (graphsite 0.1) carry no id and, but for the service's, no fqdn."""

    name: str
    fqdn: str = ""
    id: str = ""
    created: str = ""
    expires: str = ""
    version: int = STAMP_VERSION

    def expired(self, now: datetime) -> bool:
        moment = parse_stamp(self.expires)
        return moment is not None and moment <= now

    def older_than(self, now: datetime, seconds: float) -> bool | None:
        """True when the resource was made more than `seconds` ago, False when not; None when it says nothing of
        when it was made: unknown, never "old" (gc does not collect what it cannot date)."""
        moment = parse_stamp(self.created)
        return None if moment is None else (now - moment).total_seconds() > seconds

    def claim(self, resource: str, domain: str) -> Claim:
        """Return whose the resource named `resource` (a subdomain) carrying this stamp is, for `domain`."""
        if self.name != resource or not parse_stamp(self.created):
            return Claim.UNPROVEN
        if self.version < STAMP_VERSION and not self.fqdn:
            return Claim.OLDER
        if self.fqdn.split(".", 1)[0] != self.name or (self.version >= STAMP_VERSION and not self.id):
            return Claim.UNPROVEN
        return Claim.OURS if self.fqdn == f"{self.name}.{domain}" else Claim.OTHER

    # --- labels (Swarm configs and services) --------------------------------------------------------------

    def labels(self) -> dict[str, str]:
        return {NAME: self.name, FQDN: self.fqdn, ID: self.id, CREATED: self.created, EXPIRES: self.expires,
                STAMP: str(STAMP_VERSION)}

    @classmethod
    def from_labels(cls, labels: Mapping[str, str] | None) -> Stamp | None:
        """Return the stamp of a Swarm object's labels (complete or not), or None when they carry none."""
        labels = labels or {}
        name = labels.get(NAME)
        if not name:
            return None
        version = STAMP_VERSION if labels.get(STAMP) == str(STAMP_VERSION) else 1
        expires = labels.get(EXPIRES, "")
        # a bad expiry, or a stamp version this release does not know (version 1 wrote none): unproven
        whole = (not expires or parse_stamp(expires)) and (version > 1 or STAMP not in labels)
        created = labels.get(CREATED, "") if whole else ""
        return cls(name, labels.get(FQDN, ""), labels.get(ID, "") if version > 1 else "", created, expires,
                   version)

    # --- the bind directory's marker file --------------------------------------------------------------------

    def marker(self, sha256: str = "") -> str:
        tail = f" sha256={sha256}" if sha256 else ""
        return f"made by graphsite deploy: {self._fields()}{tail}\n"

    def _fields(self) -> str:
        return (f"stamp={STAMP_VERSION} name={self.name} fqdn={self.fqdn} id={self.id} created={self.created} "
                f"expires={self.expires}")

    @classmethod
    def from_marker(cls, text: str) -> Stamp | None:
        """Return the stamp a marker file holds, or None when it holds none that parses completely."""
        return _parsed(text.strip(), _MARKER_V2, _MARKER_V1)

    # --- the route file's first line ------------------------------------------------------------------------

    def route_comment(self) -> str:
        return f"{ROUTE_COMMENT} {self._fields()}\n"

    @classmethod
    def from_route_text(cls, text: str) -> Stamp | None:
        """Return the stamp of a route file's leading comment, or None when it has none that parses completely."""
        return _parsed(text.split("\n", 1)[0].rstrip("\r"), _ROUTE_V2, _ROUTE_V1)

    # --- the DNS record's comment ---------------------------------------------------------------------------

    def record_comment(self, limit: int = COMMENT_LIMIT) -> str:
        """Return `graphsite:2 FQDN id=ID c=CREATED e=EXPIRES` (compact times), without the expiry when it would
        pass `limit`; raise ValueError when even that does not fit."""
        comment = f"{RECORD_COMMENT}{STAMP_VERSION} {self.fqdn} id={self.id} c={_compact(self.created)}"
        if self.expires and len(comment) + 3 + len(_compact(self.expires)) <= limit:
            return f"{comment} e={_compact(self.expires)}"
        if len(comment) > limit:
            raise ValueError(f"the ownership stamp needs {len(comment)} characters; Cloudflare keeps {limit}")
        return comment

    @classmethod
    def from_record_comment(cls, comment: str) -> Stamp | None:
        """Return the stamp of a record comment (complete, or a version-1 one), or None: a comment that merely
        starts like graphsite's is no stamp."""
        comment = (comment or "").strip()
        if (match := _RECORD_V2.match(comment)) is not None:
            return cls(match["fqdn"].split(".", 1)[0], match["fqdn"], match["id"], _expanded(match["created"]),
                       _expanded(match["expires"]))
        if (match := _RECORD_V1.match(comment)) is not None:
            return cls(match["name"], "", "", match["created"], match["expires"] or "", version=1)
        return None


def _parsed(line: str, current: re.Pattern[str], older: re.Pattern[str]) -> Stamp | None:
    if (match := current.match(line)) is not None:
        return Stamp(match["name"], match["fqdn"], match["id"], match["created"], match["expires"])
    if (match := older.match(line)) is not None:
        return Stamp(match["name"], "", "", match["created"], match["expires"], version=1)
    return None


@dataclass(frozen=True)
class Deployment:
    """Everything a deployment is. Built once: from the plan for a new deploy, from the service's labels for
    list, verify, teardown and gc."""

    name: str
    fqdn: str
    sha256: str = ""
    title: str = ""
    created: str = ""
    expires: str = ""
    content: str = "config"
    replicas: int = 1
    access: str = "public"
    id: str = ""  # random, made at the name's first deploy, carried by every resource of the deployment
    made_by: str = ""  # the graphsite version that wrote the service ("" : graphsite 0.1, which did not say)
    stamp_version: int = STAMP_VERSION
    replaced: str = ""  # the sha256 of the page the last deploy or rollback replaced ("" : none, or not said)

    @property
    def url(self) -> str:
        return f"https://{self.fqdn}/"

    @property
    def stamp(self) -> Stamp:
        return Stamp(self.name, self.fqdn, self.id, self.created, self.expires, self.stamp_version)

    @property
    def current(self) -> bool:
        """True when this release's graphsite wrote the deployment (its labels, Caddyfile and stamps)."""
        return self.made_by == __version__

    def expired(self, now: datetime) -> bool:
        return self.stamp.expired(now)

    def labels(self) -> dict[str, str]:
        """Return the service's labels."""
        return {**self.stamp.labels(), SHA256: self.sha256, CONTENT: self.content, TITLE: self.title,
                ACCESS: self.access, VERSION: self.made_by, **({REPLACED: self.replaced} if self.replaced else {})}

    @classmethod
    def from_labels(cls, labels: Mapping[str, str] | None, replicas: int = 1) -> Deployment | None:
        """Return the deployment a service's labels describe, or None when they carry no graphsite stamp (whose it
        is, is `deployment.stamp.claim(...)`'s to say)."""
        stamp = Stamp.from_labels(labels)
        if stamp is None or labels is None:
            return None
        return cls(name=stamp.name, fqdn=stamp.fqdn, sha256=labels.get(SHA256, ""), title=labels.get(TITLE, ""),
                   created=stamp.created, expires=stamp.expires, content=labels.get(CONTENT, "config"),
                   replicas=replicas, access=labels.get(ACCESS, "public"), id=stamp.id,
                   made_by=labels.get(VERSION, "") if stamp.version > 1 else "", stamp_version=stamp.version,
                   replaced=labels.get(REPLACED, ""))

    def renewed(self, previous: Deployment) -> Deployment:
        """Return this deployment keeping `previous`'s creation time and id (an older deployment, which had no
        id, gets this one's), and its expiry unless this one sets one; it replaces `previous`'s page (the same
        page again replaces what that one did). The stamp written is this release's."""
        replaced = previous.sha256 if previous.sha256 != self.sha256 else previous.replaced
        return replace(self, created=previous.created or self.created, expires=self.expires or previous.expires,
                       id=previous.id or self.id, replaced=replaced)

    # --- where its resources live ---------------------------------------------------------------------------

    def route_path(self, dynamic_dir: str | Path) -> Path:
        return route_path(dynamic_dir, self.name)


def route_path(dynamic_dir: str | Path, name: str) -> Path:
    """Return the route file of deployment `name`: `<dynamic_dir>/NAME.yml`."""
    return Path(dynamic_dir) / f"{name}.yml"


def bind_dir(bind_root: str | Path, name: str) -> Path:
    """Return the bind directory of deployment `name`: `<bind_root>/NAME`."""
    return Path(bind_root) / name


def whose(owner: Claim | None, stamp: Stamp | None) -> str:
    """Return, in words, whose a resource that is not this configuration's is (for `kept` lines and refusals)."""
    if owner is None:
        return "graphsite did not make it"
    if owner == Claim.OTHER:
        return f"another graphsite configuration's ({stamp.fqdn})" if stamp else "another graphsite configuration's"
    if owner in NEEDS_PROOF:
        return (f"its stamp names no domain ({owner}) and no resource of its name proves it is this "
                "configuration's")
    return f"its graphsite stamp proves nothing ({owner})"


def whose_now(stamp: Stamp | None, resource: str, domain: str) -> str:
    """Return, in words, whose the resource named `resource` carrying `stamp` is, found changed since a plan read
    it: this configuration's (which deployment), or `whose`."""
    owner = claim(stamp, resource, domain)
    return f"this configuration's, deployment {stamp.id}" if owner == Claim.OURS and stamp else whose(owner, stamp)


def claim(stamp: Stamp | None, resource: str, domain: str) -> Claim | None:
    """Return whose a resource named `resource` is by its stamp under `domain`; None when it carries no stamp."""
    return None if stamp is None else stamp.claim(resource, domain)
