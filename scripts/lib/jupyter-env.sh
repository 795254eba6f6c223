# Sourced by scripts/start.sh and scripts/reproduce.sh (ROOT set): where Jupyter looks for and
# writes its files. Everything stays inside the checkout — nothing under $HOME:
#   JUPYTER_PATH         .venv/share/jupyter first: our kernelspec and labextension, ahead of any
#                        same-named kernel in the home folder
#   JUPYTER_CONFIG_DIR   .cache/jupyter/config   (else ~/.jupyter or ~/.config/jupyter: lab user
#                        settings and workspaces)
#   JUPYTER_DATA_DIR     .cache/jupyter/data     (else ~/.local/share/jupyter: notebook signatures,
#                        file ids)
#   JUPYTER_RUNTIME_DIR  .cache/jupyter/runtime  (else ~/.local/share/jupyter/runtime: the cookie
#                        secret, server info, kernel connection files)
#   IPYTHONDIR           .cache/ipython          (else ~/.ipython: Jupyter's bundled Python kernel
#                        package creates it when the server lists kernels)
# A value already set in the environment wins (except JUPYTER_PATH, which is prefixed).
# scripts/run-notebooks.py applies the same defaults when it is run on its own.
export JUPYTER_PATH="$ROOT/.venv/share/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"
export JUPYTER_PLATFORM_DIRS=1
export JUPYTER_CONFIG_DIR="${JUPYTER_CONFIG_DIR:-$ROOT/.cache/jupyter/config}"
export JUPYTER_DATA_DIR="${JUPYTER_DATA_DIR:-$ROOT/.cache/jupyter/data}"
export JUPYTER_RUNTIME_DIR="${JUPYTER_RUNTIME_DIR:-$ROOT/.cache/jupyter/runtime}"
export IPYTHONDIR="${IPYTHONDIR:-$ROOT/.cache/ipython}"
mkdir -p "$JUPYTER_CONFIG_DIR" "$JUPYTER_DATA_DIR" "$JUPYTER_RUNTIME_DIR" "$IPYTHONDIR"
