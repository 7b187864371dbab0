#!/usr/bin/env bash
# A pull request's preview, as both CI recipes beside this file run it (and tests/publisher/test_lab_ci_preview.py
# runs it against the lab):
#   preview.sh open NUMBER REPOSITORY REPORT   build REPORT with --strict, deploy it as pr-NUMBER-REPOSITORY and
#                                              verify it; print the page's URL (from `deploy --json`) on stdout
#   preview.sh close NUMBER REPOSITORY         tear the preview down and prove nothing is left
#   preview.sh nightly                         tear down every expired preview (`gc`; previews expire after
#                                              $PREVIEW_TTL, 14d by default, in case a close never ran)
# graphsite reads graphsite.toml (or $GRAPHSITE_CONFIG) and the Cloudflare token from $CLOUDFLARE_API_TOKEN.
# $GRAPHSITE is the command to run (default: graphsite); $PREVIEW_OUT receives the JSON of each step.
set -euo pipefail

graphsite=${GRAPHSITE:-graphsite}
python=${PYTHON:-python3}
out=${PREVIEW_OUT:-preview-out}
mkdir -p "$out"

name() {
  "$python" -m graphsite.previews "$1" "$2"
}

case "${1:-}" in
  open)
    [ $# -eq 4 ] || { echo "usage: $0 open NUMBER REPOSITORY REPORT" >&2; exit 2; }
    subdomain=$(name "$2" "$3")
    "$graphsite" build "$4" --strict --subdomain "$subdomain" --out "$out/site" >&2
    # deploy verifies the page itself (seven checks) and exits 1 when one fails
    "$graphsite" deploy "$4" --subdomain "$subdomain" --ttl "${PREVIEW_TTL:-14d}" --json > "$out/deploy.json"
    "$python" -c 'import json, sys; print(json.load(sys.stdin)["url"])' < "$out/deploy.json"
    ;;
  close)
    [ $# -eq 3 ] || { echo "usage: $0 close NUMBER REPOSITORY" >&2; exit 2; }
    "$graphsite" teardown "$(name "$2" "$3")" --json > "$out/teardown.json"
    ;;
  nightly)
    [ $# -eq 1 ] || { echo "usage: $0 nightly" >&2; exit 2; }
    # only previews: another deployment on the zone is not this job's to judge
    "$graphsite" gc --prefix "${PREVIEW_PREFIX:-pr-}" --json > "$out/gc.json"
    ;;
  *)
    echo "usage: $0 open NUMBER REPOSITORY REPORT | close NUMBER REPOSITORY | nightly" >&2
    exit 2
    ;;
esac
