"""One typed configuration: `graphsite.toml` (or `--config` / `GRAPHSITE_CONFIG`), then environment
variables `GRAPHSITE_<SECTION>_<KEY>`, then flags. Unknown keys and wrong types are errors that name the
field path; every error is collected before stopping.

The Cloudflare token is never a configuration value: it comes from `CLOUDFLARE_API_TOKEN` or from the
file named by `dns.token_file`, and it is kept out of every repr.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import typing
from dataclasses import field
from pathlib import Path
from typing import Any

from graphsite.codes import CITATION_CODES, LINK_STATES
from graphsite.errors import ConfigError
from graphsite.values import frozen

CONFIG_ENV = "GRAPHSITE_CONFIG"
TOKEN_ENV = "CLOUDFLARE_API_TOKEN"
PASSWORD_ENV = "GRAPHSITE_PASSWORD"  # a private page's password for verify (never a flag: argv is visible)
DEFAULT_FILENAME = "graphsite.toml"
MOST_VERSIONS = 50  # each kept version is one more config mounted into the page's service
MOST_SOURCE_BYTES = 1 << 30  # build.max_bytes: 1 GiB; a source is read whole, in chunks up to its size


# Any, as dataclasses.field is: the class body reads the result as the field's value, whatever its type.
def _doc(text: str, default: Any = dataclasses.MISSING, factory: Any = dataclasses.MISSING,
         bounds: tuple[int, int] | None = None) -> Any:
    """Return the field documented by `text`; `bounds` (lowest, highest) go into the JSON Schema too."""
    metadata = {"doc": text, **({"bounds": bounds} if bounds else {})}
    if factory is not dataclasses.MISSING:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


@frozen
class SiteConfig:
    domain: str = _doc("Zone the pages live under: <subdomain>.<domain>.", "hhdevs.space")
    prefix: str = _doc("Prefix of random subdomains: <prefix>-<6 hex>.", "graph-eng")
    indexable: bool = _doc("Let search engines index the page: the robots meta tag and the X-Robots-Tag header "
                           "its server sends (off: noindex, nofollow).", False)
    show_changes: bool = _doc("Put a short \"Changed since <date>\" note on a redeployed page, listing the sections "
                              "that changed against the live version (never on a first deploy, nor when the live "
                              "page could not be read).", True)


@frozen
class DeployConfig:
    network: str = _doc("Attachable overlay network Traefik shares with the page's service.", "dokploy-network")
    dynamic_dir: str = _doc("Directory watched by Traefik's file provider.", "/etc/dokploy/traefik/dynamic")
    image: str = _doc("Caddy image that serves the page.", "caddy:2-alpine")
    port: int = _doc("Port Caddy listens on inside the overlay.", 20128, bounds=(1, 65535))
    replicas: int = _doc("Number of Caddy replicas.", 1, bounds=(1, 1000))
    endpoint_mode: str = _doc("Swarm endpoint mode: vip (default) or dnsrr (kernels without IPVS).", "vip")
    content: str = _doc("How the page reaches Caddy: config (Swarm configs) or bind (host directory).", "config")
    bind_root: str = _doc("Parent directory of bind-mounted pages (content = bind).", "/srv/graphsite")
    cert_resolver: str = _doc("Traefik certificate resolver of the websecure router.", "letsencrypt")
    tls: str = _doc("Certificate request: host (per-host, HTTP challenge) or wildcard (main/sans).", "host")
    https_entrypoint: str = _doc("Traefik entry point for https.", "websecure")
    http_entrypoint: str = _doc("Traefik entry point for http.", "web")
    redirect_middleware: str = _doc("Middleware that redirects http to https.", "redirect-to-https@file")
    middlewares: tuple[str, ...] = _doc("Middlewares of the operator's (e.g. security-headers@file) attached to "
                                        "the page's websecure router, in order.", factory=tuple)
    undefined_middleware: str = _doc("When a deploy.middlewares entry is not defined in the dynamic directory: "
                                     "refuse (stop before deploying) or warn.", "refuse")
    converge_timeout: float = _doc("Seconds to wait for the service to converge.", 60.0)
    lock_dir: str = _doc("Directory of per-subdomain deploy locks.", "/tmp/graphsite-locks")
    strict_permissions: bool = _doc("Refuse to deploy, not only warn, when group or others can read "
                                    "dns.token_file or create files in deploy.dynamic_dir, bind_root or lock_dir.",
                                    False)
    docker_timeout: float = _doc("Seconds one Docker API request may take before it fails.", 30.0)
    gc_grace: float = _doc("Seconds a partial deployment (a run that died halfway) is left before gc removes it.",
                           900.0)
    keep_versions: int = _doc("Versions of a name kept, the live one included: each served at /v/<sha12>/ and a "
                              "`graphsite rollback` target; a deploy drops the oldest beyond it (1-50).", 5,
                              bounds=(1, MOST_VERSIONS))
    traefik_static: str = _doc("Traefik's static configuration, read by `graphsite doctor` (empty: not checked).",
                               "/etc/dokploy/traefik/traefik.yml")


@frozen
class DnsConfig:
    api_base_url: str = _doc("Cloudflare API base URL.", "https://api.cloudflare.com/client/v4")
    zone_id: str = _doc("Cloudflare zone id; looked up from site.domain when empty.", "")
    record_content: str = _doc("IPv4 address the A record points at (the Swarm manager).", "129.146.163.180")
    ttl: int = _doc("Record TTL in seconds (1 = automatic; Cloudflare takes 1, or 30 to 86400).", 60,
                    bounds=(1, 86400))
    proxied: bool = _doc("Whether Cloudflare proxies the record.", False)
    token_file: str = _doc("File holding the API token (else CLOUDFLARE_API_TOKEN).", "")
    ca_bundle: str = _doc("CA bundle for the Cloudflare API (empty: system trust).", "")
    retries: int = _doc("Retries of a throttled (429) or failed (5xx) API call, with backoff.", 4)
    timeout: float = _doc("Seconds per Cloudflare API request.", 15.0)
    teardown_deadline: float = _doc("Seconds teardown keeps trying Cloudflare (all retries) before it stops and "
                                    "says what is left.", 60.0)


@frozen
class VerifyConfig:
    origin_address: str = _doc("host:port of the edge on this host (origin check, https).", "127.0.0.1:443")
    resolve_https: str = _doc("host:port the public https URL is connected to instead of DNS (empty: DNS).", "")
    resolve_http: str = _doc("host:port the public http URL is connected to instead of DNS (empty: DNS).", "")
    ca_bundle: str = _doc("CA bundle that verifies the page's certificate (empty: system trust).", "")
    deadline: float = _doc("Seconds each check retries before it fails.", 60.0)
    confirm_after: float = _doc("Seconds verify waits before it reads a mismatch (a header, the content, a record) "
                                "once more to confirm it: at least the time the edge takes to apply a changed "
                                "route file (Traefik's providersThrottleDuration, 2 s by default).", 2.0)
    task_header: str = _doc("Header by which the edge at origin_address proxies to one task's overlay address, so "
                            "the origin check reaches every replica (empty: the service, as the edge picks).", "")


@frozen
class Acceptance:
    code: str = _doc("Finding code to accept, e.g. citation-mismatch.", "")
    reason: str = _doc("Why the finding is accepted (required).", "")
    number: int = _doc("Citation number the acceptance is limited to (0: any).", 0)
    url: str = _doc("URL (or glob pattern, e.g. file:///home/*) the acceptance is limited to (empty: any).", "")


@frozen
class CitationsConfig:
    accept: tuple[Acceptance, ...] = _doc("Findings the author accepts, each with a reason.", factory=tuple)


@frozen
class LinksConfig:
    timeout: float = _doc("Seconds one request may take in all: connect, headers and body.", 10.0)
    link_timeout: float = _doc("Seconds one link may take in all: every attempt, wait and redirect.", 30.0)
    deadline: float = _doc("Seconds the whole check may take (0: no limit); later verdicts are timeouts.", 0.0)
    concurrency: int = _doc("Requests in flight in total.", 128)
    per_host: int = _doc("Requests in flight per host (the host contacted, after redirects too).", 4)
    retries: int = _doc("Retries for timeouts, connection failures, 5xx and 429.", 2)
    max_retry_after: float = _doc("Longest Retry-After honoured, in seconds.", 10.0)
    max_page_mib: float = _doc("MiB of a page read while looking for a #fragment (past it: unverified).", 32.0)
    max_age: float = _doc("Seconds a cached success stays fresh (failures are always checked again).", 86400.0)
    cache_dir: str = _doc("Where the link cache lives (empty: $XDG_CACHE_HOME/graphsite or ~/.cache/graphsite).",
                          "")
    allow_private: bool = _doc("Also request loopback, private and single-label hosts (else: private).", False)
    ca_bundle: str = _doc("CA bundle that https links are verified against (empty: certifi's).", "")
    skip: tuple[str, ...] = _doc("URL prefixes never checked.", factory=tuple)
    fail_on: tuple[str, ...] = _doc("States that make `graphsite links` exit 1.", factory=lambda: ("dead",))
    user_agent: str = _doc(
        "User-Agent sent with every request.",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
    )

    def cache_path(self) -> Path:
        """Return the directory of the link cache: links.cache_dir (with ~ expanded), else the user's cache; raise
        ConfigError when that needs a home directory the user has none of."""
        if self.cache_dir.strip():
            return user_path("links.cache_dir", self.cache_dir)
        from graphsite.paths import user_cache_dir

        directory = user_cache_dir()
        if directory is None:
            raise ConfigError(f"links.cache_dir: not set, and there is no user cache to keep the link cache in "
                              f"({_NO_HOME}, and XDG_CACHE_HOME is not set to one)",
                              hint="set links.cache_dir (GRAPHSITE_LINKS_CACHE_DIR) to an absolute path")
        return directory


_NO_HOME = "this user has no home directory: HOME is not an absolute path, or unset with no password entry"


def user_path(setting: str, text: str) -> Path:
    """Return the path `text` of `setting` with a leading ~ expanded; raise ConfigError naming `setting` when
    there is no such home directory."""
    from graphsite.paths import expand_user

    path = expand_user(text)
    if path is None:
        raise ConfigError(f"{setting}: {text!r} is under a home directory, and {_NO_HOME}",
                          hint=f"set {setting} to an absolute path")
    return path


# Keys that must be a finite number above zero, and those that may also be zero (inf or nan is never a count of
# seconds: `deploy.docker_timeout = inf` ended in an OverflowError in the Docker client).
_POSITIVE = ("build.max_bytes", "build.max_image_bytes", "build.max_page_image_bytes",
             "links.timeout", "links.link_timeout", "links.concurrency", "links.per_host", "links.max_page_mib",
             "deploy.converge_timeout", "deploy.docker_timeout", "dns.timeout", "dns.teardown_deadline")
_NOT_NEGATIVE = ("links.deadline", "links.retries", "links.max_retry_after", "links.max_age", "deploy.gc_grace",
                 "dns.retries", "verify.deadline", "verify.confirm_after")


# Values a text setting accepts, where its type alone does not say (the schema of `graphsite config schema` says
# them too): checked when the configuration is loaded, and again by deploy for a Config built in code.
CHOICES: dict[str, tuple[str, ...]] = {
    "deploy.endpoint_mode": ("vip", "dnsrr"),
    "deploy.content": ("config", "bind"),
    "deploy.tls": ("host", "wildcard"),
    "deploy.undefined_middleware": ("refuse", "warn"),
}


def choice_errors(config: Config) -> list[str]:
    """Return a message for every setting of CHOICES whose value is not one it accepts."""
    errors = []
    for key, allowed in CHOICES.items():
        section, _, name = key.partition(".")
        value = getattr(getattr(config, section), name)
        if value not in allowed:
            errors.append(f"{key}: expected {' or '.join(allowed)}, got {value!r}")
    return errors


_MOST = 100_000_000  # no count or number of seconds is larger (1e12 s made the Docker client fail misleadingly)


def number_limits() -> dict[str, tuple[bool, int]]:
    """Return {key: (whether it must be above 0, not only 0 or more; its largest value)} of the numbers checked
    beyond their type: the loader's bounds, which the JSON Schema gives too."""
    limits = {key: (key in _POSITIVE, _MOST) for key in (*_POSITIVE, *_NOT_NEGATIVE)}
    limits["build.max_bytes"] = (True, MOST_SOURCE_BYTES)  # 100 MiB and more: a report is bytes, not a count
    return limits
_ADDRESSES = ("verify.origin_address", "verify.resolve_https", "verify.resolve_http")  # host:port, or empty


def settings_errors(config: Config) -> list[str]:
    """Return a message for every setting a Config holds that no run can work with: a value outside its
    choices, a number out of range, an address that is not host:port. The loader checks them, and deploy
    again for a Config built in code."""
    return choice_errors(config) + _number_errors(config) + _address_errors(config) + _bounds_errors(config)


def _bounds_errors(config: Config) -> list[str]:
    """Return a message for every whole number outside the bounds its field declares (`_doc(bounds=…)`, which the
    JSON Schema gives too): the bounds are written once, on the field."""
    errors = []
    for section in _SECTIONS:
        values = getattr(config, section)
        for setting in dataclasses.fields(values):
            if "bounds" not in setting.metadata:
                continue
            low, high = setting.metadata["bounds"]
            value = getattr(values, setting.name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                errors.append(f"{section}.{setting.name}: expected a whole number from {low} to {high}, "
                              f"got {_shown(value)}")
    return errors


_HUGE_BITS = 4096  # an integer longer is shown by its size: tomllib reads hex, octal and binary ones of any length,
# which repr() refuses past sys.get_int_max_str_digits() (and takes quadratic time to write before that)


def _shown(value: Any, *, typed: bool = False) -> str:
    """Return the repr of `value` for a message (after its type's name when `typed`): its first 40 characters
    when it is longer (4,301 digits of a number are no help in one), the size of an integer too long to write."""
    if isinstance(value, int) and value.bit_length() > _HUGE_BITS:
        return f"an integer of {value.bit_length():,} bits"
    try:
        text = repr(value)
    except ValueError:  # a list or table holding such an integer
        return f"a {type(value).__name__} holding an integer too long to write"
    text = text if len(text) <= 48 else f"{text[:40]}… ({len(text):,} characters)"
    return f"{type(value).__name__} {text}" if typed else text


def _number_errors(config: Config) -> list[str]:
    """Return a message for every number out of its range (the file and the environment alike)."""
    errors = []
    for key, (positive, most) in number_limits().items():
        section, _, name = key.partition(".")
        value = getattr(getattr(config, section), name)
        floor_ok = value > 0 if positive else value >= 0
        if value != value or not floor_ok:  # nan (math.isnan would overflow on an integer past the largest float)
            wanted = "a number above 0" if positive else "a number of 0 or more"
            errors.append(f"{key}: expected {wanted}, got {_shown(value)}")
        elif value > most:  # infinity too (1e400, or an integer past the largest float)
            errors.append(f"{key}: expected at most {most:,}, got {_shown(value)}")
    return errors


def _address_errors(config: Config) -> list[str]:
    """Return a message for every verify address that is set but not host:port (a port of 1-65535)."""
    from urllib.parse import urlsplit

    errors = []
    for key in _ADDRESSES:
        value = getattr(config.verify, key.partition(".")[2]).strip()
        if not value:
            continue
        try:
            parts = urlsplit(f"//{value}")
            valid = bool(parts.hostname) and parts.port is not None and parts.port > 0 and not parts.path
        except ValueError:
            valid = False
        if not valid:
            errors.append(f"{key}: expected host:port (e.g. 127.0.0.1:443), got {value!r}")
    return errors


def _links_errors(links: LinksConfig) -> list[str]:
    """Return a message for every links.* setting that cannot work: the CA bundle, the states of fail_on."""
    errors = []
    try:
        bundle = user_path("links.ca_bundle", links.ca_bundle) if links.ca_bundle else None
    except ConfigError as exc:
        errors.append(exc.detail)
        bundle = None
    if bundle is not None and not bundle.is_file():
        errors.append(f"links.ca_bundle: no such file {links.ca_bundle!r}")
    elif bundle is not None:
        from graphsite.trust import bundle_context  # the context the link check will take: the file is read once

        try:
            bundle_context(str(bundle))
        except (OSError, ValueError) as exc:
            errors.append(f"links.ca_bundle: cannot load {links.ca_bundle!r} as PEM CA certificates "
                          f"({getattr(exc, 'reason', None) or exc})")
    errors += [f"links.fail_on: unknown state {state!r} (known: {', '.join(LINK_STATES)})"
               for state in links.fail_on if state not in LINK_STATES]
    return errors


@frozen
class BuildConfig:
    max_bytes: int = _doc("Largest Markdown source `graphsite build` reads, in bytes (at most 1 GiB, 1073741824).",
                          20 * 1024 * 1024)
    max_image_bytes: int = _doc("Largest local image the page embeds (a file beside the report), in bytes.",
                                2 * 1024 * 1024)
    max_page_image_bytes: int = _doc("Most bytes of local images one page embeds, all together.",
                                     10 * 1024 * 1024)


@frozen
class Config:
    site: SiteConfig = field(default_factory=SiteConfig)
    build: BuildConfig = field(default_factory=BuildConfig)
    deploy: DeployConfig = field(default_factory=DeployConfig)
    dns: DnsConfig = field(default_factory=DnsConfig)
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    citations: CitationsConfig = field(default_factory=CitationsConfig)
    links: LinksConfig = field(default_factory=LinksConfig)
    path: Path | None = field(default=None, compare=False)

    def replace(self, section: str, **values: Any) -> Config:
        """Return a copy with `values` set in `section` (flags override the file)."""
        return dataclasses.replace(self, **{section: dataclasses.replace(getattr(self, section), **values)})

    def token(self) -> str | None:
        """Return the Cloudflare API token, or None; never log or print it."""
        value = os.environ.get(TOKEN_ENV, "").strip()
        if value:
            return value
        if self.dns.token_file:
            path = user_path("dns.token_file", self.dns.token_file)
            try:
                return path.read_text(encoding="utf-8").strip() or None
            except OSError as exc:
                raise ConfigError(f"dns.token_file: cannot read {path}: {exc.strerror}") from None
            except UnicodeDecodeError:  # its message quotes a byte of the file: never shown
                raise ConfigError(f"dns.token_file: {path} is not UTF-8 text",
                                  hint="write the Cloudflare API token alone in it, as plain text") from None
        return None


_SECTIONS = {f.name: f.type for f in dataclasses.fields(Config) if f.name != "path"}


_NO = object()  # a value that does not fit its type
_TRUE, _FALSE = {"true", "1", "yes"}, {"false", "0", "no"}


def _bool(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    return _NO


def _int(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    digits = value.strip().removeprefix("-") if isinstance(value, str) else ""
    # ASCII digits only: str.isdigit() also passes "²", which int() refuses; int() also refuses more digits than
    # sys.get_int_max_str_digits()
    if digits.isascii() and digits.isdigit():
        try:
            return int(value)
        except ValueError:
            return _NO
    return _NO


def _float(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an integer past the largest float: infinite, as the same digits in a string read
            return float("inf") if value > 0 else float("-inf")
    try:
        return float(value) if isinstance(value, str) else _NO
    except ValueError:
        return _NO


def _str(value: Any) -> Any:
    return value if isinstance(value, str) else _NO


_SCALARS = {bool: _bool, int: _int, float: _float, str: _str}


def _coerce(path: str, value: Any, annotation: Any, errors: list[str]) -> Any:
    """Return `value` checked against `annotation`; append a message naming `path` when it does not fit."""
    if annotation in _SCALARS:
        result, expected = _SCALARS[annotation](value), annotation.__name__
    elif typing.get_origin(annotation) is tuple:
        result, expected = _sequence(path, value, typing.get_args(annotation)[0], errors), "a list"
    elif dataclasses.is_dataclass(annotation):
        result = _build(path, annotation, value, errors) if isinstance(value, dict) else _NO
        expected = "a table"
    else:
        result, expected = _NO, getattr(annotation, "__name__", str(annotation))
    if result is _NO:
        digits = value.strip().removeprefix("-") if isinstance(value, str) else ""
        if annotation is int and digits.isascii() and digits.isdigit():  # what _int refuses: int()'s digit limit
            expected = f"a whole number of at most {sys.get_int_max_str_digits():,} digits"
        errors.append(f"{path}: expected {expected}, got {_shown(value, typed=True)}")
        return None
    return result


def _sequence(path: str, value: Any, item_type: Any, errors: list[str]) -> Any:
    """Return a tuple of `item_type` from a list (or, for strings, a comma-separated string)."""
    if isinstance(value, str) and item_type is str:
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list):
        return _NO
    return tuple(_coerce(f"{path}[{i}]", v, item_type, errors) for i, v in enumerate(value))


def _build(prefix: str, cls: Any, data: dict[str, Any], errors: list[str]) -> Any:
    # get_type_hints compiles every annotation of `cls` (they are strings): not needed when nothing is set, as
    # in a build without graphsite.toml
    hints = typing.get_type_hints(cls) if data else {}
    known = {f.name for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, raw in data.items():
        path = f"{prefix}.{key}" if prefix else key
        if key not in known:
            errors.append(f"{path}: unknown key (known: {', '.join(sorted(known))})")
            continue
        coerced = _coerce(path, raw, hints[key], errors)
        if coerced is not None:
            values[key] = coerced
    return cls(**values)


def _env_overrides(environ: typing.Mapping[str, str]) -> dict[str, dict[str, tuple[str, str]]]:
    """Return {section: {key: (value, variable)}} of the GRAPHSITE_SECTION_KEY variables. The key part is read
    in any case; when two spellings of one setting are set, the upper-case one wins (whatever the order)."""
    overrides: dict[str, dict[str, tuple[str, str]]] = {}
    for name in sorted(environ, key=lambda n: n == n.upper()):  # the upper-case spelling last: it wins
        if not name.startswith("GRAPHSITE_") or name == CONFIG_ENV:
            continue
        rest = name[len("GRAPHSITE_"):].lower()
        section, _, key = rest.partition("_")
        if section in _SECTIONS and key:
            overrides.setdefault(section, {})[key] = (environ[name], name)
    return overrides


def _finding_codes() -> tuple[str, ...]:
    return CITATION_CODES


def _known_finding_code(code: str) -> bool:
    return code in _finding_codes() or f"citation-{code}" in _finding_codes()


def _name_source(error: str, from_env: dict[str, str]) -> str:
    """Return `error` followed by the environment variable it came from, when it came from one."""
    key = error.partition(":")[0]
    return f"{error} (from {from_env[key]})" if key in from_env else error


def find_config_file(explicit: str | Path | None = None, cwd: Path | None = None,
                     environ: typing.Mapping[str, str] | None = None) -> Path | None:
    """Return the configuration file in effect: the flag, then GRAPHSITE_CONFIG (of `environ`, default the
    process's), then ./graphsite.toml."""
    if explicit:
        return Path(explicit)
    env = (os.environ if environ is None else environ).get(CONFIG_ENV)
    if env:
        return Path(env)
    local = (cwd or Path.cwd()) / DEFAULT_FILENAME
    return local if local.is_file() else None


def load_config(explicit: str | Path | None = None, *, environ: typing.Mapping[str, str] | None = None) -> Config:
    """Return the validated configuration, or raise ConfigError listing every problem found."""
    return load_config_sources(explicit, environ=environ)[0]


def _read_file(path: Path) -> dict[str, Any]:
    """Return the TOML document at `path`, or raise ConfigError saying why it cannot be read."""
    import tomllib  # only a build with a configuration file needs it

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found",
                          hint=f"create it, or unset {CONFIG_ENV} / --config") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the configuration: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except ValueError:  # not a TOMLDecodeError: int()'s own, for a number longer than Python converts
        raise ConfigError(f"{path}: invalid TOML: a number{_long_number_line(text)} has more digits than can be "
                          f"read ({sys.get_int_max_str_digits()})",
                          hint="shorten it: no setting takes a number that long") from None
    except RecursionError:  # tomllib recurses once a nested array or inline table
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply to read",
                          hint="no setting nests more than a list of tables") from None


def _long_number_line(text: str) -> str:
    """Return " at line N" for the first line of `text` holding a run of digits longer than Python converts, or
    "" when none does."""
    import re

    run = re.compile(rf"[0-9a-fA-F_]{{{sys.get_int_max_str_digits() + 1},}}")
    for number, line in enumerate(text.splitlines(), 1):
        if run.search(line):
            return f" at line {number}"
    return ""


def _acceptance_errors(config: Config) -> list[str]:
    errors = []
    for acceptance in config.citations.accept:
        if not acceptance.code or not acceptance.reason:
            errors.append("citations.accept: every entry needs a code and a reason")
        elif not _known_finding_code(acceptance.code):
            errors.append(f"citations.accept: unknown code {acceptance.code!r} (known: {', '.join(_finding_codes())})")
    return errors


def load_config_sources(explicit: str | Path | None = None, *, environ: typing.Mapping[str, str] | None = None
                        ) -> tuple[Config, dict[str, str]]:
    """Return the validated configuration and where each value not left at its default came from
    ({"links.timeout": "environment GRAPHSITE_LINKS_TIMEOUT" or "file PATH"}); raise ConfigError listing
    every problem found."""
    path = find_config_file(explicit, environ=environ)
    data = _read_file(path) if path is not None else {}
    sources = {f"{section}.{key}": f"file {path}" for section, values in data.items() if isinstance(values, dict)
               for key in values}
    from_env: dict[str, str] = {}
    for section, values in _env_overrides(os.environ if environ is None else environ).items():
        data.setdefault(section, {})
        if isinstance(data[section], dict):
            data[section].update({key: value for key, (value, _) in values.items()})
            from_env.update({f"{section}.{key}": variable for key, (_, variable) in values.items()})
    sources.update({key: f"environment {variable}" for key, variable in from_env.items()})
    errors: list[str] = []
    config = _build("", Config, data, errors)
    errors += _acceptance_errors(config) + settings_errors(config) + _links_errors(config.links)
    errors = [_name_source(error, from_env) for error in errors]
    if errors:
        where = f"{path}: " if path else ""
        raise ConfigError(where + "invalid configuration:\n  " + "\n  ".join(errors))
    return dataclasses.replace(config, path=path), sources
