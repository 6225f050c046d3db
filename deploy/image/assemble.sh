#!/usr/bin/env sh
# The image's runtime file tree, assembled from a built checkout: the bundle and the production
# dependencies only (no sources, no dev tools). The Dockerfile runs this in its build stage; CI
# runs the same script without Docker (deploy/image/smoke.sh), so the two cannot drift apart.
# Usage: assemble.sh CHECKOUT OUT — CHECKOUT has run `npm ci` (which builds dist/); OUT is created.
set -eu
src=$(cd "$1" && pwd)
out=$2
if [ ! -f "$src/dist/src/bundle/agents.js" ]; then
  echo "assemble.sh: $src/dist/src/bundle/agents.js is missing; run npm ci (or npm run build) in $src first" >&2
  exit 1
fi
mkdir -p "$out/dist/src"
cp "$src/package.json" "$src/package-lock.json" "$out/"
cp -R "$src/dist/src/bundle" "$out/dist/src/bundle"
[ -f "$src/LICENSE" ] && cp "$src/LICENSE" "$out/"
cd "$out"
# Production dependencies only. Install scripts are off (the package's own `prepare` builds from
# sources this tree does not have); better-sqlite3 ships its prebuilt binaries in the package.
npm ci --omit=dev --ignore-scripts --no-audit --no-fund
# What the bundle loads at run time is all here: fail now, not in the container.
node -e "require('better-sqlite3')(':memory:').close()"
