"""One deployment, one value: what a deployment is, and the one place that knows how each of its fields is
written into a system (labels, the route file's comment, the bind directory's marker, the DNS record's
comment) and read back. "Is this ours, and for which name?" is answered here and nowhere else.

Every resource a deploy makes carries the deployment's name, creation time and expiry from the moment it exists,
so that a half-made deployment is still fully visible from the systems alone (no local state file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from graphsite import __version__
from graphsite.labels import check_label

PREFIX = "graphsite"
# The service's labels: the systems' own record of a deployment. Configs carry the first three.
NAME, CREATED, EXPIRES = f"{PREFIX}.subdomain", f"{PREFIX}.created", f"{PREFIX}.expires"
FQDN, SHA256, TITLE, CONTENT, ACCESS = (f"{PREFIX}.fqdn", f"{PREFIX}.sha256", f"{PREFIX}.title",
                                         f"{PREFIX}.content", f"{PREFIX}.access")
VERSION = f"{PREFIX}.version"  # the graphsite that wrote the labels (absent: a release before this label)
MARKER = ".graphsite"  # the file in a bind directory that says graphsite made it
RECORD_COMMENT = "graphsite:"  # how every DNS record comment graphsite writes starts
ROUTE_COMMENT = "# graphsite:"  # the first line of every route file graphsite writes
COMMENT_LIMIT = 100  # Cloudflare keeps at most 100 characters of a record's comment on most plans
_STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
_RECORD = re.compile(rf"^graphsite: (?P<name>[a-z0-9-]+)(?: \((?:created (?P<created>{_STAMP}))?"
                     rf"(?:,? ?expires (?P<expires>{_STAMP}))?[^)]*\))?$")
_FIELDS = re.compile(r"\b(name|created|expires)=(\S+)")


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


@dataclass(frozen=True)
class Stamp:
    """What every resource says about itself: made by graphsite for `name`, when, and until when."""

    name: str
    created: str = ""
    expires: str = ""

    def expired(self, now: datetime) -> bool:
        moment = parse_stamp(self.expires)
        return moment is not None and moment <= now

    def older_than(self, now: datetime, seconds: float) -> bool:
        """True when the resource was made more than `seconds` ago (or says nothing of when it was made)."""
        moment = parse_stamp(self.created)
        return moment is None or (now - moment).total_seconds() > seconds

    # --- labels (Swarm configs and services) --------------------------------------------------------------

    def labels(self) -> dict[str, str]:
        return {NAME: self.name, CREATED: self.created, EXPIRES: self.expires}

    @classmethod
    def from_labels(cls, labels: dict | None) -> Stamp | None:
        """Return the stamp of a Swarm object's labels, or None when graphsite did not make it."""
        name = (labels or {}).get(NAME)
        if not name:
            return None
        return cls(name, (labels or {}).get(CREATED, ""), (labels or {}).get(EXPIRES, ""))

    # --- the bind directory's marker file --------------------------------------------------------------------

    def marker(self, sha256: str = "") -> str:
        tail = f" sha256={sha256}" if sha256 else ""
        return f"made by graphsite deploy: name={self.name} created={self.created} expires={self.expires}{tail}\n"

    @classmethod
    def from_marker(cls, text: str, directory_name: str) -> Stamp:
        """Return the stamp a marker file holds (a marker of the first version holds none: the directory's name)."""
        fields = dict(_FIELDS.findall(text))
        return cls(fields.get("name") or directory_name, fields.get("created", ""), fields.get("expires", ""))

    # --- the route file's first line ------------------------------------------------------------------------

    def route_comment(self) -> str:
        return f"{ROUTE_COMMENT} name={self.name} created={self.created} expires={self.expires}\n"

    @classmethod
    def from_route_text(cls, text: str) -> Stamp | None:
        """Return the stamp of a route file's leading comment, or None when it has none."""
        first = text.split("\n", 1)[0]
        if not first.startswith(ROUTE_COMMENT):
            return None
        fields = dict(_FIELDS.findall(first))
        return cls(fields["name"], fields.get("created", ""), fields.get("expires", "")) if "name" in fields else None

    # --- the DNS record's comment ---------------------------------------------------------------------------

    def record_comment(self) -> str:
        """Return `graphsite: NAME (created …, expires …)`, without the expiry when it would pass the limit."""
        parts = [f"created {self.created}"] if self.created else []
        if self.expires:
            parts.append(f"expires {self.expires}")
        while parts:
            comment = f"{RECORD_COMMENT} {self.name} ({', '.join(parts)})"
            if len(comment) <= COMMENT_LIMIT:
                return comment
            parts.pop()
        return f"{RECORD_COMMENT} {self.name}"

    @classmethod
    def from_record_comment(cls, comment: str, record_name: str = "") -> Stamp | None:
        """Return the stamp of a record comment graphsite wrote, or None when graphsite did not write it."""
        comment = (comment or "").strip()
        if not comment.startswith(RECORD_COMMENT):
            return None
        match = _RECORD.match(comment)
        if match:
            return cls(match["name"], match["created"] or "", match["expires"] or "")
        # an older comment ("graphsite: NAME (made by graphsite deploy)") or one cut short: the name is the label
        return cls(record_name.split(".", 1)[0]) if record_name else None


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
    made_by: str = ""  # the graphsite version that made it ("": an older release, which wrote no version)

    @property
    def url(self) -> str:
        return f"https://{self.fqdn}/"

    @property
    def stamp(self) -> Stamp:
        return Stamp(self.name, self.created, self.expires)

    def expired(self, now: datetime) -> bool:
        return self.stamp.expired(now)

    def labels(self) -> dict[str, str]:
        """Return the service's labels."""
        return {**self.stamp.labels(), FQDN: self.fqdn, SHA256: self.sha256, CONTENT: self.content,
                TITLE: self.title, ACCESS: self.access, VERSION: __version__}

    @classmethod
    def from_labels(cls, labels: dict | None, replicas: int = 1) -> Deployment | None:
        """Return the deployment a service's labels describe, or None when graphsite did not make the service."""
        stamp = Stamp.from_labels(labels)
        if stamp is None or labels is None:
            return None
        return cls(name=stamp.name, fqdn=labels.get(FQDN, ""), sha256=labels.get(SHA256, ""),
                   title=labels.get(TITLE, ""), created=stamp.created, expires=stamp.expires,
                   content=labels.get(CONTENT, "config"), replicas=replicas, access=labels.get(ACCESS, "public"),
                   made_by=labels.get(VERSION, ""))

    def renewed(self, previous: Deployment) -> Deployment:
        """Return this deployment keeping `previous`'s creation time, and its expiry unless this one sets one."""
        return replace(self, created=previous.created or self.created, expires=self.expires or previous.expires)

    # --- where its resources live ---------------------------------------------------------------------------

    def route_path(self, dynamic_dir: str | Path) -> Path:
        return route_path(dynamic_dir, self.name)


def route_path(dynamic_dir: str | Path, name: str) -> Path:
    """Return the route file of deployment `name`: `<dynamic_dir>/NAME.yml`."""
    return Path(dynamic_dir) / f"{name}.yml"


def bind_dir(bind_root: str | Path, name: str) -> Path:
    """Return the bind directory of deployment `name`: `<bind_root>/NAME`."""
    return Path(bind_root) / name


def owned_by(stamp: Stamp | None, name: str) -> bool:
    """True when a resource's stamp says graphsite made it for `name`."""
    return stamp is not None and stamp.name == name


def subdomain_of(name: str, domain: str) -> str:
    """Return the subdomain of NAME, which may be the subdomain or the full fqdn under `domain`."""
    suffix = "." + domain.lower()
    return check_label(name.strip().lower().removesuffix(suffix), what="NAME")
