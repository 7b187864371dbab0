"""A deployment's versions, as data: each deploy's page is a content-addressed Swarm config (`NAME-page-<sha12>`)
that later deploys keep instead of removing, stamped like every resource of the deployment and labelled with what
the version is (its sha256, when it went live first, the graphsite that made it, the source's title and date).

The service mounts the live version at /srv/index.html and every kept one at /srv/v/<sha12>/index.html, so each is
served at https://NAME.DOMAIN/v/<sha12>/ (with noindex) and a rollback is a start-first update that mounts another
kept config at the root: the same zero-downtime path as a redeploy. Which versions stay, and which one a rollback
takes, are decided here from what the systems hold (pure functions); nothing is kept in a local file.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphsite.errors import DeployError
from graphsite.publisher import caddy
from graphsite.publisher.caddy import SITE_ROOT
from graphsite.publisher.deployment import (
    PREFIX,
    SHA256,
    STAMP_VERSION,
    TITLE,
    VERSION,
    Claim,
    Deployment,
    Stamp,
    claim,
    whose,
)

DEPLOYED, DATE = f"{PREFIX}.deployed", f"{PREFIX}.date"  # a version's own labels, beside the deployment's stamp
VERSION_PATH = "/v/"  # where the versions are served, each under its short sha
ROOT_PAGE = f"{SITE_ROOT}/index.html"
SHORT = 12  # the short sha of a config's name and a version's path



def short(sha256: str) -> str:
    return sha256[:SHORT]


def version_target(sha256: str) -> str:
    """Return where the service mounts the version of `sha256`: /srv/v/<sha12>/index.html."""
    return f"{SITE_ROOT}{VERSION_PATH}{short(sha256)}/index.html"


def version_url(fqdn: str, sha256: str) -> str:
    return f"https://{fqdn}{VERSION_PATH}{short(sha256)}/"


def version_labels(deployed: str, title: str, date: str, made_by: str) -> dict[str, str]:
    """Return the labels that say what a version is (the deployment's stamp and the sha256 are beside them)."""
    return {DEPLOYED: deployed, TITLE: title, DATE: date, VERSION: made_by}


_MARKER_SHA = re.compile(r" sha256=(?P<sha256>[0-9a-f]{64})$")
_SHA256 = re.compile(r"[0-9a-f]{64}")  # a sha256 label, as history.schema.json says it


def version_marker(stamp: Stamp, sha256: str, labels: Mapping[str, str]) -> str:
    """Return the marker of a version kept in a bind directory (v/<sha12>/.graphsite): the deployment's stamp
    with the page's sha256, as the directory's own marker says it, then the version's labels as one JSON line."""
    return stamp.marker(sha256) + json.dumps(dict(labels), sort_keys=True, ensure_ascii=True) + "\n"


def marker_labels(text: str | None) -> dict[str, str]:
    """Return the labels a version marker stands for, as a page config would carry them (the stamp's, the sha256,
    the version's); empty when it holds no complete current stamp with a sha256 (then it proves nothing)."""
    first, _, rest = (text or "").partition("\n")
    stamp = Stamp.from_marker(first)
    match = _MARKER_SHA.search(first.strip())
    if stamp is None or match is None or stamp.version != STAMP_VERSION:
        return {}
    try:
        extra = json.loads(rest) if rest.strip() else {}
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth: no extra labels
        extra = {}
    own = {key: value for key, value in extra.items() if key in (DEPLOYED, TITLE, DATE, VERSION)
           and isinstance(value, str)} if isinstance(extra, dict) else {}
    return {**stamp.labels(), SHA256: match["sha256"], **own}


def bind_pages(markers: Mapping[str, str | None], name: str,
               directory: Path) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """Return the versions of a bind directory (`markers`: {sha12: its marker's text, None without one}) as
    `read_versions` reads page configs: ({NAME-page-<sha12>: labels}, {NAME-page-<sha12>: its directory})."""
    labelled = {f"{name}-page-{sha12}": marker_labels(text) for sha12, text in markers.items()}
    places = {f"{name}-page-{sha12}": str(directory / VERSION_PATH.strip("/") / sha12) for sha12 in markers}
    return labelled, places


def is_page(config: str, name: str) -> bool:
    """True when `config` is named like a page of deployment `name`: NAME-page-<12 hex>."""
    rest = config.removeprefix(f"{name}-page-")
    return rest != config and len(rest) == SHORT and all(c in "0123456789abcdef" for c in rest)


@dataclass(frozen=True)
class Held:
    """What a bind directory's v/ holds, as one read found it: {sha12: its marker's text (None: none that can be
    graphsite's)}. A deploy reads it once, in its plan step, and decides from this value both which versions it
    serves and what its content step keeps."""

    directory: Path
    markers: Mapping[str, str | None]

    def markers_of(self, directory: Path) -> Mapping[str, str | None] | None:
        """Return what this reading found when it is the reading of `directory`, else None (read it anew): one
        directory's versions are never decided from another's."""
        return self.markers if directory == self.directory else None


@dataclass(frozen=True)
class Version:
    """One kept page of a deployment, as its config's labels say."""

    config: str
    sha256: str
    deployed: str = ""  # when it went live first ('' : a config made before versions were kept)
    title: str = ""
    date: str = ""
    made_by: str = ""
    live: bool = False

    @property
    def short(self) -> str:
        return short(self.sha256)

    def labels(self) -> dict[str, str]:
        return version_labels(self.deployed, self.title, self.date, self.made_by)

    def as_json(self, fqdn: str) -> dict[str, Any]:
        return {"sha256": self.sha256, "short": self.short, "config": self.config, "live": self.live,
                "deployed": self.deployed or None, "title": self.title or None, "date": self.date or None,
                "made_by": self.made_by or None, "url": version_url(fqdn, self.sha256)}


@dataclass(frozen=True)
class Unproven:
    """A page config of the name whose stamp does not prove it is this deployment's: shown, never removed."""

    config: str
    why: str

    def as_json(self) -> dict[str, str]:
        return {"config": self.config, "why": self.why}


@dataclass(frozen=True)
class Versions:
    """A deployment's kept versions, newest first, and the page configs of its name that are not proven its."""

    versions: tuple[Version, ...]
    unproven: tuple[Unproven, ...] = ()

    @property
    def live(self) -> Version | None:
        return next((v for v in self.versions if v.live), None)


def read_versions(labelled: Mapping[str, Mapping[str, str]], deployment: Deployment, domain: str, *,
                  places: Mapping[str, str] | None = None) -> Versions:
    """Return the versions of `deployment` among the configs `labelled` (name: labels, as Swarm lists them): a
    page config counts when its stamp is this configuration's for the name and carries the deployment's id, and its
    sha256 label is the one its name ends with. Newest first; a version of unknown time last. `places` names
    where each is when it is no config (bind_pages)."""
    found, unproven = [], []
    for key, labels in sorted(labelled.items()):
        if not is_page(key, deployment.name):
            continue
        config = (places or {}).get(key, key)
        stamp = Stamp.from_labels(labels)
        owner = claim(stamp, deployment.name, domain)
        sha256 = labels.get(SHA256, "")
        if owner == Claim.OLDER:
            continue  # graphsite 0.1's page: the deployment it belonged to is taken over, not versioned
        if owner != Claim.OURS or stamp is None:
            unproven.append(Unproven(config, whose(owner, stamp)))
        elif not deployment.id or stamp.id != deployment.id:
            unproven.append(Unproven(config, f"its stamp names deployment {stamp.id}, not {deployment.id or 'one'}"))
        elif not _SHA256.fullmatch(sha256) or short(sha256) != key[-SHORT:]:
            unproven.append(Unproven(config, "its sha256 label is not the one its name ends with"))
        else:
            found.append(Version(config, sha256, labels.get(DEPLOYED, ""), labels.get(TITLE, ""),
                                 labels.get(DATE, ""), labels.get(VERSION, ""), live=sha256 == deployment.sha256))
    found.sort(key=lambda v: (v.deployed, v.live), reverse=True)
    return Versions(tuple(found), tuple(unproven))


@dataclass(frozen=True)
class Switch:
    """A redeploy to the other content mode (`former` -> `to`): the versions kept in the former mode that it does
    not carry over (every one but the page it makes live), dropped once the new page is live."""

    former: str
    to: str
    dropped: tuple[Version, ...]
    # what the former mode's removal would take with them and nothing proves the deployment's: the folders under
    # a bind directory's v/ that history lists apart (the directory is removed whole)
    unproven: tuple[Unproven, ...] = ()

    def refusal(self, name: str, keep: int) -> DeployError | None:
        """Return why the deploy must not drop them: they are dropped only when deploy.keep_versions is 1, which
        keeps no version but the live one in any mode, so the drop is the one the configuration asks for; what is
        not proven the deployment's is never dropped, whatever deploy.keep_versions says."""
        if self.unproven:
            one = len(self.unproven) == 1
            listed = "; ".join(f"{u.config}: {u.why}" for u in self.unproven)
            return DeployError(f"{name} keeps {len(self.unproven)} folder{'' if one else 's'} in {self.former} mode "
                               f"that nothing proves to be its own ({listed}): this deploy in {self.to} mode would "
                               f"remove {'it' if one else 'them'} with the directory; left in place, nothing deployed",
                               hint=f"look at {'it' if one else 'them'} and remove {'it' if one else 'them'} by hand "
                                    f"if {'it is' if one else 'they are'} yours, then deploy again; or deploy with "
                                    f"--content {self.former}")
        if not self.dropped or keep == 1:
            return None
        count = f"{len(self.dropped)} version{'s' if len(self.dropped) > 1 else ''}"
        return DeployError(f"{name} keeps {count} in {self.former} mode ({', '.join(v.short for v in self.dropped)})"
                           f" that this deploy in {self.to} mode would drop: a content mode's versions are not "
                           "carried over to the other; nothing deployed",
                           hint=f"deploy with --content {self.former} to keep them (`graphsite history {name}` lists "
                                f"them); to switch and drop them, deploy with deploy.keep_versions = 1 "
                                "(GRAPHSITE_DEPLOY_KEEP_VERSIONS=1)")

    def reason(self) -> str:
        return f"kept in {self.former} mode, not carried over to {self.to}"


def dropped_line(version: Version, keep: int, switch: Switch | None = None, *, would: bool = False) -> str | None:
    """Return the line that says a deploy dropped `version` (`would`: a dry run's, in the same words), and why;
    None for the page a content mode switch makes live again in the other mode (it is not lost)."""
    did = "would drop" if would else "dropped"
    if switch is None:
        return f"{did} version {version.short} (deploy.keep_versions = {keep})"
    if version.sha256 in {v.sha256 for v in switch.dropped}:
        return f"{did} version {version.short} ({switch.reason()})"
    return None


def served_csp(version: Version, data: bytes) -> str:
    """Return the CSP the Caddyfile serves kept `version` with, read from its page `data`; raise DeployError (the
    deploy stops before anything is made, and the version is neither served nor dropped) when the page is not the
    one its sha256 label names, or its CSP could break out of the Caddyfile's quotes."""
    csp = caddy.page_csp(data.decode("utf-8", errors="replace"))
    refusal = page_refusal(version, data) or caddy.csp_refusal(csp)
    if refusal is not None:
        raise DeployError(f"{version.config}: kept version {version.short} cannot be served: {refusal}; "
                          "nothing deployed",
                          hint=f"{look_at(version)}; remove it by hand, or deploy with deploy.keep_versions = 1 "
                               "(which drops it)")
    return csp


def page_refusal(version: Version, data: bytes) -> str | None:
    """Return why `data`, read as the page of `version`, is not that version (its sha256 is another one), else
    None: a page is served or made live again only when its bytes are the ones its sha256 label names."""
    if hashlib.sha256(data).hexdigest() != version.sha256:
        return f"its data's sha256 is not the {version.short}… its label says"
    return None


def look_at(version: Version) -> str:
    """Return how to look at a kept version by hand: its directory (bind mode) or its config."""
    return (f"look at the directory {version.config}" if "/" in version.config
            else f"inspect it with `docker config inspect {version.config}`")


def kept(versions: Sequence[Version], live_sha256: str, keep: int, replaced: str = "") -> tuple[Version, ...]:
    """Return the versions that stay beside the live one (`live_sha256`, never dropped): the one it replaces
    (`replaced`: after a rollback it may be old, yet it is what a reader saw last), then the newest others, `keep - 1`
    in all. The rest are dropped by the deploy that makes them fall off."""
    others = sorted((v for v in versions if v.sha256 != live_sha256), key=lambda v: v.sha256 != replaced)
    return tuple(others[:max(0, keep - 1)])


def sha_prefix(text: str) -> str:
    """Return `text` as the start of a sha256 (7 to 64 hex digits, lower case); raise ValueError saying why not."""
    wanted = text.strip().lower()
    if not 7 <= len(wanted) <= 64 or any(c not in "0123456789abcdef" for c in wanted):
        raise ValueError(f"{text!r} is not a sha256 or its first 7 or more hex digits")
    return wanted


def choose(found: Versions, to: str | None, replaced: str = "") -> Version:
    """Return the version a rollback makes live: the one whose sha256 starts with `to` (at least 7 hex digits), or
    without `to` the one that was live before the live one (`replaced`: the page the last deploy or rollback
    replaced, as the service says), else the newest other one; raise DeployError naming what there is otherwise."""
    live = found.live
    candidates = [v for v in found.versions if not v.live]
    listed = ", ".join(v.short for v in found.versions) or "none"
    if to is None:
        if not candidates:
            raise DeployError("no earlier version is kept to roll back to" + (f" (live: {live.short})" if live
                                                                               else ""),
                              hint="`graphsite history NAME` lists the kept versions")
        return next((v for v in candidates if v.sha256 == replaced), candidates[0])
    try:
        wanted = sha_prefix(to)
    except ValueError as exc:
        raise DeployError(f"--to: {exc}", hint="`graphsite history NAME` lists the kept versions with their sha") \
            from None
    matches = [v for v in found.versions if v.sha256.startswith(wanted)]
    if not matches:
        raise DeployError(f"--to {to}: no kept version starts with it (kept: {listed})",
                          hint="`graphsite history NAME` lists the kept versions")
    if len(matches) > 1:
        raise DeployError(f"--to {to}: more than one kept version starts with it", hint="give more of the sha256")
    return matches[0]
