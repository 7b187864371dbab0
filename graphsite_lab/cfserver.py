"""The fake Cloudflare API: a stateful HTTP server on 127.0.0.1 that honours Cloudflare's DNS-records contract.

`python -m graphsite_lab.cfserver --lab-dir .lab --port 8790 --zone lab.graphsite.test --zone-id …` serves
`/client/v4` (bearer token from `<lab-dir>/cf-token`, records kept in `<lab-dir>/cloudflare-state.json`) and a
control API under `/__lab/` for tests: faults, latency, reset, the request log. Every request it accepts and
every response it sends is checked against the contract (`contract.py`); a request that does not fit gets a 400
and a line in `<lab-dir>/cloudflare.log`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from graphsite_lab import faults, records, routes
from graphsite_lab.cfstate import REQUESTS_KEPT, FakeCloudflare

API = "/client/v4"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "graphsite-lab-cloudflare"
    app: FakeCloudflare  # set on the subclass made by serve()

    def log_message(self, format: str, *args: Any) -> None:  # the request log replaces stderr chatter
        return

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _send(self, reply: faults.Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        for name, value in reply.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)

    def _dispatch(self) -> None:
        url = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if url.path.startswith("/__lab/"):
            self._send(faults.plain(*routes.control(self.app, self.command, url.path, body)))
        elif url.path.startswith(API + "/"):
            self._api(url.path, parse_qsl(url.query, keep_blank_values=True), body)
        else:
            self._send(faults.plain(404, records.error(routes.NO_ROUTE)))

    def _api(self, path: str, query: list[tuple[str, str]], body: bytes) -> None:
        app, started = self.app, time.monotonic()
        if app.latency_ms:
            time.sleep(app.latency_ms / 1000)
        fault = app.take_fault(f"{self.command} {self.path} {body.decode('utf-8', 'replace')}",
                               routes.shape(self.command, path))
        answer = None
        # `after`: the call is carried out, then its answer is replaced; a lie made from the answer of a call
        # not carried out is made from what it would have answered, the zone left as it was.
        if fault is None or fault.after or fault.kind in faults.DISTORTING:
            answer = self._answer(path, query, body, commit=fault is None or fault.after)
        lie = faults.reply(fault, answer) if fault else None
        if fault and lie is None:  # nothing to distort (a real failure, an empty list): the real answer goes out
            app.give_back(fault)  # and the fault waits; nothing was lost, for a failure changes nothing
            fault = None
        if lie is not None:  # deliberate: not checked against the contract, which it is meant to break
            reply = lie
        else:  # the lab's own answer, checked against the contract in routes.answer
            assert answer is not None  # without a fault (or with one given back) the call was answered
            reply = faults.plain(*answer)
        entry = {"method": self.command, "path": path, "query": query, "status": reply.status,
                 "body": _json_or_text(app.redact(body.decode("utf-8", "replace"))),
                 "fault": bool(fault), "fault_kind": str(fault.kind) if fault else None,
                 "ms": round((time.monotonic() - started) * 1000, 1)}
        with app.lock:
            app.answered += 1
            entry["seq"] = app.answered
            app.requests.append(entry)
            del app.requests[:max(0, len(app.requests) - app.requests_kept)]  # [:-0] would keep them all
        injected = f" (injected {fault.kind}, exempt from the contract)" if fault else ""
        app.log(f"{self.command} {path} {reply.status}{injected}")
        self._send(reply)

    def _answer(self, path: str, query: list[tuple[str, str]], body: bytes,
                commit: bool) -> tuple[int, dict[str, Any]]:
        try:
            return routes.answer(self.app, self.command, path, query, dict(self.headers.items()), body, commit)
        except Exception as exc:  # noqa: BLE001 -- a lab bug must answer loudly, not drop the connection
            self.app.log(f"lab bug: {self.command} {path}: {exc.__class__.__name__}: {exc}")
            return 500, records.error(routes.LAB_BUG, detail=f"{exc.__class__.__name__}: {exc}")


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return text


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The standard library listens with a backlog of 5: a burst of connections (eight deploys at once, or what
    # queued while the process was stopped) lost SYNs to it, and a client waits a second or more before it
    # tries again, as long as the fast DNS timeouts some tests set.
    request_queue_size = 128


def serve(lab_dir: Path, port: int, zone: str, zone_id: str, *,
          requests_kept: int = REQUESTS_KEPT) -> ThreadingHTTPServer:
    """Return the bound server (call serve_forever); 127.0.0.1 only. Its request log keeps the last
    `requests_kept` calls."""
    app = FakeCloudflare(lab_dir, zone, zone_id, requests_kept)
    handler = type("BoundHandler", (Handler,), {"app": app})
    server = _Server(("127.0.0.1", port), handler)
    app.log(f"listening on http://127.0.0.1:{port}{API} (zone {zone} {zone_id}, pid {os.getpid()})")
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m graphsite_lab.cfserver",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--lab-dir", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--zone", required=True)
    parser.add_argument("--zone-id", required=True)
    args = parser.parse_args(argv)
    serve(args.lab_dir.resolve(), args.port, args.zone, args.zone_id).serve_forever()


if __name__ == "__main__":
    main()
