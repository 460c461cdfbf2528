#!/usr/bin/env bash
# Renders a campaign's report.html in headless Chromium and saves a PNG, to check that the
# self-contained page (inline SVG charts, no network) shows its charts.
#
#   ci/screenshot_report.sh runs/quick/report.html [out.png]
# SCREENSHOT_WINDOW=W,H (default 1280,2200) and SCREENSHOT_SCALE=S (default 1) size the picture:
# the README's docs/report.png is SCREENSHOT_WINDOW=1280,1100 SCREENSHOT_SCALE=0.7.
# Needs Debian's chromium (apt-get install chromium).
set -euo pipefail
report="$(realpath "$1")"
out="${2:-${report%.html}.png}"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[ -n "$browser" ] || { echo "no chromium on PATH: apt-get install chromium" >&2; exit 3; }
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size="${SCREENSHOT_WINDOW:-1280,2200}" \
  --force-device-scale-factor="${SCREENSHOT_SCALE:-1}" \
  --screenshot="$out" "file://$report" >/dev/null 2>&1
[ -s "$out" ] || { echo "no screenshot written" >&2; exit 1; }
echo "$out"
