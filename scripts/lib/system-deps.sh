# System packages the test tiers need, shared by scripts/test.sh and .ci/run (source this file).
#
#   system_missing          fills SYSTEM_MISSING (Debian package names) and SYSTEM_WHY (tier per package)
#   system_install          installs SYSTEM_MISSING with apt-get as root or through passwordless sudo;
#                           returns 1 (and sets SYSTEM_INSTALL_CMD) when it cannot
#
# Tiers: the widgets' browser tests drive Debian's Chromium; the training smoke test and the Python
# trace reader run Debian's torch/numpy under /usr/bin/python3; the fresh-clone test needs git.

SYSTEM_MISSING=()
SYSTEM_WHY=()
SYSTEM_INSTALL_CMD=""

_system_need() {
  local pkg="$1" why="$2" p
  for p in "${SYSTEM_MISSING[@]}"; do [[ "$p" == "$pkg" ]] && return 0; done
  SYSTEM_MISSING+=("$pkg")
  SYSTEM_WHY+=("$pkg: $why")
}

system_missing() {
  SYSTEM_MISSING=()
  SYSTEM_WHY=()
  command -v git >/dev/null 2>&1 || _system_need git "the fresh-clone test (test/cli/fresh-clone.test.ts)"
  if [[ -z "${FLOATSCOPE_CHROMIUM:-}" && ! -x /usr/bin/chromium ]]; then
    _system_need chromium "the widgets' browser tests (test/widgets/browser)"
  fi
  if ! /usr/bin/python3 -c 'import numpy' >/dev/null 2>&1; then
    _system_need python3-numpy "the Python trace reader test and the training tests (/usr/bin/python3)"
  fi
  if ! /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then
    _system_need python3-torch "the training smoke test (training/train.py --smoke under /usr/bin/python3)"
    _system_need libopenblas0-pthread "torch's BLAS for the training smoke test"
  fi
}

system_install() {
  [[ ${#SYSTEM_MISSING[@]} -eq 0 ]] && return 0
  local sudo=""
  if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo"; fi
  fi
  SYSTEM_INSTALL_CMD="sudo apt-get update && sudo apt-get install -y --no-install-recommends ${SYSTEM_MISSING[*]}"
  if ! command -v apt-get >/dev/null 2>&1; then
    SYSTEM_INSTALL_CMD="(no apt-get here) install the equivalents of: ${SYSTEM_MISSING[*]}"
    return 1
  fi
  if [[ "$(id -u)" != 0 && -z "$sudo" ]]; then return 1; fi
  echo "[system] installing apt packages: ${SYSTEM_MISSING[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq || return 1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${SYSTEM_MISSING[@]}" || return 1
  system_missing
  [[ ${#SYSTEM_MISSING[@]} -eq 0 ]]
}
