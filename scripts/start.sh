#!/usr/bin/env bash
# Set up if needed, then launch JupyterLab on notebooks/ with the floatscope kernel and widgets.
#
#   npm start                       # port 8888 (or the next free one)
#   FLOATSCOPE_PORT=9999 npm start
#   npm start -- --ServerApp.ip=0.0.0.0     # extra arguments go to `jupyter lab`
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

[[ "${FLOATSCOPE_SKIP_SETUP:-0}" == 1 ]] || FLOATSCOPE_SETUP_QUIET=1 bash scripts/setup.sh

# Our kernelspec first (it lives in .venv); Jupyter's config, data and runtime files (the cookie
# secret) inside the checkout, not in the home folder.
source scripts/lib/jupyter-env.sh

port="$(.venv/bin/python - "${FLOATSCOPE_PORT:-8888}" <<'PY'
import socket, sys
start = int(sys.argv[1])
for port in range(start, start + 50):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        print(port)
        break
else:
    sys.exit(f"no free port in {start}..{start + 49}")
PY
)"
token="${FLOATSCOPE_TOKEN:-$(.venv/bin/python -c 'import secrets; print(secrets.token_hex(24))')}"
extra=()
[[ "$(id -u)" == 0 ]] && extra+=(--allow-root)

url="http://127.0.0.1:${port}/lab?token=${token}"
cat <<MSG

  floatscope JupyterLab — open this URL in your browser:

      ${url}

  Notebooks: ${ROOT}/notebooks   Kernel: "TypeScript (floatscope)"   Stop: Ctrl-C

MSG
exec .venv/bin/jupyter lab \
  --no-browser \
  --ServerApp.root_dir="$ROOT/notebooks" \
  --ServerApp.ip=127.0.0.1 \
  --ServerApp.port="$port" \
  --ServerApp.port_retries=0 \
  --IdentityProvider.token="$token" \
  --MultiKernelManager.default_kernel_name=floatscope \
  "${extra[@]}" "$@"
