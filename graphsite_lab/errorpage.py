"""The page an edge in front of the API sends when the server behind it fails: what the fake Cloudflare answers
for an injected `html` fault (`faults.py`). A client that expects JSON gets a few KB of HTML with a 502.

Written for the lab in the shape of such pages (a title, the hops, what happened, a ray id); a Python module
rather than an .html file so that `processes.lab_code` sees a change to it and `lab up` restarts the server.
"""

from __future__ import annotations

import secrets
import time

_PAGE = """\
<!DOCTYPE html>
<html lang="en-US">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>502 Bad Gateway</title>
<style>
  *, *::before, *::after { box-sizing: border-box; }
  html { font-size: 16px; -webkit-text-size-adjust: 100%; }
  body {
    margin: 0;
    font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
    line-height: 1.5;
    color: #313131;
    background: #ffffff;
  }
  a { color: #2f7bbf; text-decoration: none; }
  a:hover { color: #f68b1f; text-decoration: underline; }
  .wrapper { max-width: 60rem; margin: 0 auto; padding: 0 1.5rem; }
  .header { padding: 3rem 0 1.5rem; border-bottom: 1px solid #dedede; }
  .header h1 { margin: 0; font-size: 2.75rem; font-weight: 300; line-height: 1.1; }
  .header h1 .code { color: #bd2426; font-weight: 600; }
  .header .when { margin-top: 0.5rem; color: #6b6b6b; font-size: 0.875rem; }
  .path { display: flex; flex-wrap: wrap; justify-content: space-between; padding: 2rem 0; gap: 1rem; }
  .hop { flex: 1 1 14rem; text-align: center; padding: 1rem; border-radius: 0.5rem; background: #f7f7f7; }
  .hop .role { display: block; font-size: 1.25rem; font-weight: 600; }
  .hop .place { display: block; color: #6b6b6b; font-size: 0.875rem; }
  .hop .state { display: block; margin-top: 0.5rem; font-weight: 600; }
  .hop.ok .state { color: #9bca3e; }
  .hop.failed .state { color: #bd2426; }
  .explain { display: flex; flex-wrap: wrap; gap: 2rem; padding: 1.5rem 0 2.5rem; border-top: 1px solid #dedede; }
  .explain section { flex: 1 1 20rem; }
  .explain h2 { margin: 0 0 0.75rem; font-size: 1.5rem; font-weight: 400; }
  .explain p { margin: 0 0 1rem; }
  .footer { padding: 1rem 0 2rem; border-top: 1px solid #dedede; color: #6b6b6b; font-size: 0.8125rem; }
  .footer span { white-space: nowrap; }
  .footer .sep { margin: 0 0.5rem; color: #c0c0c0; }
  @media (max-width: 40rem) {
    .header h1 { font-size: 2rem; }
    .path { flex-direction: column; }
  }
</style>
</head>
<body>
<div class="wrapper">
  <div class="header">
    <h1><span class="code">Error 502</span> Bad gateway</h1>
    <div class="when">WHEN</div>
  </div>
  <div class="path">
    <div class="hop ok">
      <span class="role">You</span>
      <span class="place">Client</span>
      <span class="state">Working</span>
    </div>
    <div class="hop ok">
      <span class="role">Edge</span>
      <span class="place">The network in front of the API</span>
      <span class="state">Working</span>
    </div>
    <div class="hop failed">
      <span class="role">api.cloudflare.com</span>
      <span class="place">Origin</span>
      <span class="state">Error</span>
    </div>
  </div>
  <div class="explain">
    <section>
      <h2>What happened?</h2>
      <p>The edge reached the server behind it, but that server sent back an answer the edge could not use,
        or no answer at all. The request you sent may or may not have been carried out before the failure:
        nothing on this page can tell you which.</p>
      <p>A gateway error of this kind is usually short-lived. It tends to follow a deployment, an overloaded
        origin, or a connection that was closed while the answer was still being written.</p>
    </section>
    <section>
      <h2>What can I do?</h2>
      <p><strong>If you are calling the API:</strong> this is not the JSON document you asked for. Read the state
        again before you act on it, and try the request again after a short pause; a request that changes
        something should only be repeated once you know it did not already take effect.</p>
      <p><strong>If you run the service:</strong> look at the origin's error log around the time above and at
        the health of the servers behind the edge. The ray identifier below names this request in the logs.</p>
    </section>
  </div>
  <div class="footer">
    <span>Ray ID: <strong>RAY_ID</strong></span>
    <span class="sep">&bull;</span>
    <span>Your address: <a href="#" onclick="return false">hidden</a></span>
    <span class="sep">&bull;</span>
    <span>Served by the graphsite lab in place of the edge's own page</span>
  </div>
</div>
</body>
</html>
"""


def bad_gateway() -> bytes:
    """Return the 502 page with a fresh ray id and the time, as UTF-8."""
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return _PAGE.replace("RAY_ID", secrets.token_hex(8)).replace("WHEN", when).encode()
