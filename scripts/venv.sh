# Sourced by the scripts: make .venv with the project and its test extra installed. Reinstalls
# only when pyproject.toml changed since the last install, so repeated runs start quickly.
python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "bohnanza-p2p needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    echo "== creating .venv"
    "$python" -m venv .venv
fi
stamp=.venv/.installed-pyproject
if ! cmp -s pyproject.toml "$stamp"; then
    echo "== installing bohnanza-p2p and its test tools into .venv"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
    cp pyproject.toml "$stamp"
fi
