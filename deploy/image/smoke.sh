#!/usr/bin/env bash
# The container image's smoke test without a Docker engine (CI has none): assembles the runtime
# tree with the Dockerfile's own script, then runs the server from it the way the image does —
# as an unprivileged user, data in one directory, only the tree's node_modules — and checks that
# it answers /health, /ready and a SendMessage, and stops cleanly on SIGTERM.
# Usage: deploy/image/smoke.sh [CHECKOUT] — a checkout where `npm ci` (or `npm run build`) ran.
set -euo pipefail
src=$(cd "${1:-.}" && pwd)
work=$(mktemp -d /tmp/ca-image.XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
sh "$src/deploy/image/assemble.sh" "$src" "$work/opt/cleveragents"
# The image runs as its `node` user; here, when root, as `nobody` with its own copy of node (root's
# Node may live under /root, which nobody cannot read); setpriv execs, so SIGTERM reaches the server.
run=()
node_bin=$(command -v node)
if [ "$(id -u)" = 0 ]; then
  cp "$node_bin" "$work/node"
  node_bin="$work/node"
  mkdir "$work/data"
  chown nobody "$work/data"
  chmod 755 "$work"
  run=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
else
  mkdir "$work/data"
fi
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
token=smoke-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
cd "$work"
"${run[@]}" env -i PATH=/usr/bin:/bin HOME="$work/data" CLEVERAGENTS_DATA_DIR="$work/data" \
  CLEVERAGENTS_SERVER_TOKEN="$token" NODE_ENV=production \
  "$node_bin" "$work/opt/cleveragents/dist/src/bundle/agents.js" serve --host 127.0.0.1 --port "$port" \
  >"$work/server.log" 2>&1 &
pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  curl -fs "$base/ready" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/server.log"; echo "smoke: the server exited at start" >&2; exit 1; }
  sleep 0.1
done
curl -fs "$base/health" | grep -q '"ok"' || { cat "$work/server.log"; echo "smoke: /health is not ok" >&2; exit 1; }
curl -fs "$base/ready" | grep -q '"ready":true' || { echo "smoke: /ready is not ready" >&2; exit 1; }
answer=$(curl -fs -H "Authorization: Bearer $token" -H 'content-type: application/json' "$base/a2a" \
  -d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"smoke-1","role":"ROLE_USER","parts":[{"text":"hello image"}]}}}')
echo "$answer" | grep -q 'TASK_STATE_COMPLETED' || { echo "smoke: SendMessage answered $answer" >&2; exit 1; }
echo "$answer" | grep -q 'hello image' || { echo "smoke: the echo is missing from $answer" >&2; exit 1; }
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" = 0 ] || { cat "$work/server.log"; echo "smoke: the server exited $status on SIGTERM" >&2; exit 1; }
if find "$work/opt/cleveragents" -name '*.ts' -not -name '*.d.ts' -not -path '*/node_modules/*' | grep -q .; then
  echo "smoke: sources in the runtime tree" >&2
  exit 1
fi
echo "image smoke: ok ($(du -sh "$work/opt/cleveragents" | cut -f1) runtime tree; served /health, /ready and SendMessage as $("${run[@]}" id -un 2>/dev/null || id -un))"
