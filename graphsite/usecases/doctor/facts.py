"""The doctor's facts from the systems, read-only: the Docker daemon through the Swarm adapter, Cloudflare through
the Dns adapter; and `gather`, which collects every fact (`host.py` reads this host's). Nothing here decides PASS
or FAIL."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from graphsite.config import TOKEN_ENV, Config
from graphsite.errors import GraphsiteError
from graphsite.usecases.doctor import host
from graphsite.usecases.doctor.model import Facts, Token, Unknown

T = TypeVar("T")

# --- Docker ---------------------------------------------------------------------------------------------------


def docker_facts(config: Config, *, image: bool = True, client: Any = None) -> dict[str, Any]:
    """Return the daemon, network (and image) facts; Unknown for each when the daemon does not answer. `client`:
    a connected Swarm adapter to use (and leave open), else one is made and closed here."""
    from graphsite.publisher import swarm

    own = client is None
    try:
        client = client or swarm.Swarm(timeout=config.deploy.docker_timeout)
    except GraphsiteError as exc:
        return {"daemon": Unknown(_docker_reason(exc))}
    try:
        facts: dict[str, Any] = {"daemon": _read(client.daemon),
                                 "network": _read(lambda: client.network(config.deploy.network))}
        if image:
            facts["image"] = _read(lambda: swarm.image_facts(client, config.deploy.image))
        return facts
    finally:
        if own:
            client.close()


def _docker_reason(exc: GraphsiteError) -> str:
    where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    return f"{exc.message.splitlines()[0]} (DOCKER_HOST={where})"


def _read(reader: Callable[[], T]) -> T | Unknown:
    try:
        return reader()
    except GraphsiteError as exc:
        return Unknown(exc.message.splitlines()[0])


# --- Cloudflare -----------------------------------------------------------------------------------------------


def token_facts(config: Config) -> Token | Unknown:
    """Return where the token comes from and its shape (length, characters), never the token itself."""
    try:
        token = config.token()
    except GraphsiteError as exc:
        return Unknown(exc.message.splitlines()[0])
    if not token:
        return Token(source="")
    source = TOKEN_ENV if os.environ.get(TOKEN_ENV, "").strip() else f"dns.token_file {config.dns.token_file}"
    return Token(source=source, length=len(token),
                 charset_ok=all(c.isascii() and (c.isalnum() or c in "-_") for c in token))


def cloudflare_facts(config: Config) -> dict[str, Any]:
    """Return the token's status, the zone and whether its records can be listed (read-only API calls)."""
    from graphsite.publisher import cloudflare

    try:
        dns = cloudflare.Dns(config)
    except GraphsiteError as exc:
        return {"token_status": Unknown(exc.message.splitlines()[0])}
    # The calls retry throttling and failures like deploy's, within one deadline for all of them: an unreachable
    # Cloudflare costs the doctor twice dns.timeout, not every call's every retry.
    dns.limit(2 * config.dns.timeout)
    try:
        facts: dict[str, Any] = {"token_status": _read(dns.token_status)}
        if config.dns.zone_id:
            zone = _read(lambda: dns.zone_by_id(config.dns.zone_id))
        else:
            zone = _read(lambda: dns.zone_by_name(config.site.domain))
            facts["zone_looked_up"] = True
        facts["zone"] = zone
        if zone is not None and not isinstance(zone, Unknown):
            facts["records"] = _read(lambda: dns.count_records(zone.id))
        return facts
    finally:
        dns.close()


def gather(config: Config, *, cheap: bool = False, swarm: Any = None) -> Facts:
    """Return the facts of every check (`cheap`: only local ones and the daemon, no registry or Cloudflare call);
    `swarm`: a connected Swarm adapter to reuse."""
    values: dict[str, Any] = docker_facts(config, image=not cheap, client=swarm)
    deploy = config.deploy
    dirs = [("deploy.lock_dir", deploy.lock_dir)] + ([("deploy.bind_root", deploy.bind_root)]
                                                     if deploy.content == "bind" else [])
    values.update(ipvs=host.ipvs_facts(), dynamic_dir=host.dynamic_dir_facts(Path(deploy.dynamic_dir)),
                  writable_dirs=tuple(host.writable_dir(setting, Path(path)) for setting, path in dirs),
                  permissions=host.permission_facts(config))
    if not cheap:
        values.update(static=host.static_facts(config.deploy.traefik_static), token=token_facts(config),
                      addresses=host.host_addresses(), ca_bundles=host.ca_bundle_facts(config))
        token = values["token"]
        if isinstance(token, Token) and token.source:
            values.update(cloudflare_facts(config))
    return Facts(**values)
