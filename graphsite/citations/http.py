"""A lean HTTP/1.1 client on asyncio streams, made for link checks: HEAD and GET, keep-alive per host, a cookie
jar, gzip and deflate, and a body read as a stream that the caller may stop at any byte.

Why not httpx: a link check sends hundreds of small requests, and httpx spends about 3 ms of CPU on each (and
0.1 s on its import); this client spends a tenth of that, which is most of the difference between graphsite
and lychee on a loaded machine. It has no timeouts of its own: the caller bounds every request as a whole
(asyncio.timeout), and a request cut off that way leaves no connection behind in the pool.
"""

from __future__ import annotations

import asyncio
import socket
import zlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from graphsite.citations import tls

if TYPE_CHECKING:
    import concurrent.futures
    import ssl

HEAD_LIMIT = 256 * 1024  # bytes of status line and headers (some CDNs send 80 KB); more is broken or hostile
READ_SIZE = 64 * 1024
_NO_BODY = {204, 304}


class HTTPError(Exception):
    """No usable answer: the connection failed (`dns` when the host name did not resolve) or the answer is
    not HTTP. `permanent`: asking again gets the same (a TLS failure, an answer that is not HTTP, headers over
    the limit), so it is not retried; `oversized`: an answer came, too large to read (headers over the limit),
    which says nothing of the page."""

    def __init__(self, message: str, *, dns: bool = False, permanent: bool = False, oversized: bool = False
                 ) -> None:
        super().__init__(message)
        self.dns, self.permanent, self.oversized = dns, permanent, oversized


# OpenSSL's verify codes (X509_V_ERR_*) in words; any other code is named by OpenSSL's own message.
_VERIFY_REASONS = {9: "the certificate is not valid yet", 10: "the certificate has expired",
                   18: "a self-signed certificate", 19: "a self-signed certificate in the chain",
                   20: "unknown issuer: no trusted authority signed the certificate",
                   21: "unknown issuer: the chain cannot be verified", 23: "the certificate was revoked",
                   62: "name mismatch: the certificate is for another host name",
                   64: "name mismatch: the certificate is for another IP address"}


class ShortBody(Exception):
    """The body ended before it was whole: the connection closed after `received` of `expected` bytes (None:
    chunked), or a chunked body's framing broke."""

    def __init__(self, received: int, expected: int | None) -> None:
        super().__init__(f"the body ended after {received} bytes")
        self.received, self.expected = received, expected


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.used = reader, writer, False

    def close(self) -> None:
        self.writer.close()


class Response:
    """A status, lower-case headers (Set-Cookie values apart) and a body to read once with `chunks()`."""

    def __init__(self, client: Client, key: tuple[str, str, int], connection: _Connection, method: str,
                 status: int, headers: dict[str, str], cookies: list[str], keep_alive: bool) -> None:
        self.status, self.headers, self.cookies = status, headers, cookies
        self._client, self._key, self._connection, self._keep_alive = client, key, connection, keep_alive
        self.received = 0  # body bytes received, before decoding
        self.complete = method == "HEAD" or status in _NO_BODY or 100 <= status < 200
        length = headers.get("content-length", "").strip()
        self.length = int(length) if _is_number(length) else None
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        self.encoding = headers.get("content-encoding", "").strip().lower()
        self.decodable = self.encoding in ("", "identity", "gzip", "x-gzip", "deflate")

    @property
    def charset(self) -> str | None:
        """Return the charset of the Content-Type header, if it names one."""
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.partition("=")
            if key.strip().lower() == "charset" and value.strip():
                return value.strip().strip("\"'")
        return None

    async def chunks(self) -> AsyncIterator[bytes]:
        """Yield the body, decoded (gzip, deflate); raise ShortBody if the connection closes too early."""
        decoder = _decoder(self.encoding)
        async for raw in self._raw():
            self.received += len(raw)
            data = decoder.decompress(raw) if decoder else raw
            if data:
                yield data
        if decoder:
            tail = decoder.flush()
            if tail:
                yield tail

    async def _raw(self) -> AsyncIterator[bytes]:
        if self.complete:
            return
        reader = self._connection.reader
        if self._chunked:
            while True:
                size = _chunk_size(await _line(reader, self.received), self.received)
                if size is None:  # an empty size line: read as the end, but the framing is off, so the
                    self._keep_alive, size = False, 0  # connection is not used for another request
                if size == 0:
                    while (await _line(reader, self.received)).strip():
                        pass  # trailers
                    break
                async for part in _exactly(reader, size, self.received, None):
                    yield part
                await _line(reader, self.received)
        elif self.length is not None:
            async for part in _exactly(reader, self.length, 0, self.length):
                yield part
        else:
            self._keep_alive = False
            while part := await reader.read(READ_SIZE):
                yield part
        self.complete = True

    def close(self) -> None:
        """Give the connection back for the next request when the body was read whole, else close it."""
        if self.complete and self._keep_alive:
            self._client._release(self._key, self._connection)
        else:
            self._connection.close()


class Client:
    """Connections kept alive per (scheme, host, port), cookies kept per host; the caller limits concurrency."""

    def __init__(self, headers: dict[str, str], *, keep_per_host: int = 4, ca_bundle: str = "",
                 tls_context: concurrent.futures.Future[ssl.SSLContext] | None = None) -> None:
        """`tls_context`: the context https connections use, already being made (tls.start); else it is made
        when the first https URL is contacted (a run over http does without it)."""
        self.headers, self.keep_per_host, self.ca_bundle = headers, keep_per_host, ca_bundle
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._cookies: dict[str, dict[str, str]] = {}
        self._tls = tls_context
        self._tls_waiter: asyncio.Future[ssl.SSLContext] | None = None
        self._unresolved: dict[str, str] = {}  # host -> why it did not resolve: asked once a run, not per link
        self.sent = 0  # requests written out
        self._wave: tuple[int, asyncio.Future[None]] | None = None  # written(): how many, and its waiter

    async def send(self, method: str, url: str) -> Response:
        """Send `method` for `url`; return the response once its headers are in (the body is not read yet)."""
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname or ""
        if scheme not in ("http", "https") or not host:
            raise HTTPError(f"not an http(s) URL: {url}")
        key = (scheme, host, parts.port or (443 if scheme == "https" else 80))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if not target.isascii():
            target = quote(target, safe="/?&=%:@!$'()*+,;~-._")
        lines = [f"{method} {target} HTTP/1.1", f"Host: {parts.netloc.rpartition('@')[2]}",
                 *(f"{k}: {v}" for k, v in self.headers.items()), "Accept-Encoding: gzip, deflate"]
        jar = self._cookies.get(host)
        if jar:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in jar.items()))
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")
        while True:
            connection = await self._connection(key)
            try:
                connection.writer.write(request)
                self.sent += 1
                if self._wave is not None and self.sent >= self._wave[0] and not self._wave[1].done():
                    self._wave[1].set_result(None)
                head = await connection.reader.readuntil(b"\r\n\r\n")
                while head[9:10] == b"1" and head[9:12] != b"101":  # 100 Continue and friends: skip
                    head = await connection.reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError) as exc:
                connection.close()
                if connection.used and not getattr(exc, "partial", b""):
                    continue  # a kept-alive connection the server had closed meanwhile: once more, on a new one
                raise HTTPError("the server closed the connection without an answer") from None
            except asyncio.LimitOverrunError:
                connection.close()
                raise HTTPError(f"the status line and headers are over {HEAD_LIMIT // 1024} KiB",
                                permanent=True, oversized=True) from None
            except BaseException:
                connection.close()
                raise
            connection.used = True
            return self._response(key, connection, method, head)

    async def written(self, count: int) -> None:
        """Return once `count` requests have been written out in all (the caller bounds the wait)."""
        if self.sent < count:
            self._wave = (count, asyncio.get_running_loop().create_future())
            await self._wave[1]

    def _response(self, key: tuple[str, str, int], connection: _Connection, method: str, head: bytes) -> Response:
        lines = head.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/") or not _is_number(code):
            connection.close()
            raise HTTPError(f"not an HTTP answer: {lines[0][:60]!r}", permanent=True)
        headers: dict[str, str] = {}
        cookies: list[str] = []
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon:
                continue
            name, value = name.strip().lower(), value.strip()
            if name == "set-cookie":
                cookies.append(value)
            headers[name] = f"{headers[name]}, {value}" if name in headers and name != "set-cookie" else value
        self._remember(key[1], cookies)
        connection_header = headers.get("connection", "").lower()
        keep_alive = "close" not in connection_header and (version != "HTTP/1.0" or "keep-alive" in connection_header)
        return Response(self, key, connection, method, int(code), headers, cookies, keep_alive)

    def _remember(self, host: str, cookies: list[str]) -> None:
        for cookie in cookies:
            name, _, value = cookie.split(";")[0].partition("=")
            if name.strip():
                self._cookies.setdefault(host, {})[name.strip()] = value.strip()

    async def _connection(self, key: tuple[str, str, int]) -> _Connection:
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if not connection.reader.at_eof() and not connection.writer.is_closing():
                return connection
            connection.close()
        scheme, host, port = key
        if host in self._unresolved:
            raise HTTPError(self._unresolved[host], dns=True)
        try:
            context = await self._context() if scheme == "https" else None
            reader, writer = await asyncio.open_connection(
                host, port, limit=HEAD_LIMIT, ssl=context, server_hostname=host if context else None)
        except socket.gaierror as exc:
            self._unresolved[host] = f"DNS: {host} not found ({exc.strerror})"
            raise HTTPError(self._unresolved[host], dns=True) from None
        except OSError as exc:
            if type(exc).__name__.startswith("SSL"):  # a refused certificate will not change; a cut handshake may
                raise HTTPError(_tls_failure(exc), permanent=getattr(exc, "verify_code", None) is not None) \
                    from None
            raise HTTPError(f"{exc.strerror or exc} ({host}:{port})") from None
        return _Connection(reader, writer)

    def _release(self, key: tuple[str, str, int], connection: _Connection) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) < self.keep_per_host:
            idle.append(connection)
        else:
            connection.close()

    async def _context(self) -> ssl.SSLContext:
        """Return the TLS context, waiting (without holding the event loop) while its thread makes it; a bundle
        that cannot be read raises tls.TrustError here, which ends the run (no link's verdict)."""
        if self._tls is None:
            self._tls = tls.start(self.ca_bundle)
        if self._tls.done():
            return self._tls.result()
        if self._tls_waiter is None:  # one waiter for every connection; its error is read even if none is left
            self._tls_waiter = asyncio.wrap_future(self._tls)
            self._tls_waiter.add_done_callback(lambda done: done.cancelled() or done.exception())
        return await asyncio.shield(self._tls_waiter)  # a connection cancelled meanwhile leaves it to the others

    def close(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


async def _line(reader: asyncio.StreamReader, received: int) -> bytes:
    try:
        return await reader.readuntil(b"\r\n")
    except asyncio.IncompleteReadError:
        raise ShortBody(received, None) from None
    except asyncio.LimitOverrunError:
        raise HTTPError("a chunk size line is too long") from None


def _tls_failure(exc: OSError) -> str:
    """Return a TLS failure in words: why the certificate was refused (expired, unknown issuer, name mismatch),
    with OpenSSL's message; else OpenSSL's reason."""
    code, message = getattr(exc, "verify_code", None), getattr(exc, "verify_message", None)
    if code is not None:
        words = _VERIFY_REASONS.get(code, message or "the certificate was refused")
        return f"TLS: {words} ({message}; CERTIFICATE_VERIFY_FAILED)"
    return f"TLS: {getattr(exc, 'reason', None) or exc}"


def _is_number(text: str) -> bool:
    """True for ASCII digits only (headers are decoded as latin-1, where str.isdigit() also takes '²')."""
    return text.isascii() and text.isdigit()


def _chunk_size(line: bytes, received: int) -> int | None:
    """Return the size a chunked body's size line gives (hexadecimal, extensions after ';'), None for an empty
    line (read as the last chunk, as before). A line that is no size ends the body there, like a connection
    that closed: what came is kept."""
    digits = line.split(b";")[0].strip()
    if not digits:
        return None
    if len(digits) > 16 or digits.strip(b"0123456789abcdefABCDEF"):
        raise ShortBody(received, None)
    return int(digits, 16)


async def _exactly(reader: asyncio.StreamReader, size: int, received: int, expected: int | None
                   ) -> AsyncIterator[bytes]:
    left = size
    while left > 0:
        part = await reader.read(min(left, READ_SIZE))
        if not part:
            raise ShortBody(received + size - left, expected)
        left -= len(part)
        yield part


def _decoder(encoding: str) -> zlib._Decompress | None:
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None
