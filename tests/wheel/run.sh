#!/usr/bin/env bash
# Build the sdist and the wheel, install the wheel into a clean virtualenv per extra, and run the smoke test
# from outside the repository, so that nothing is read from the source tree. Used by .ci/run (make wheel-test).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$repo/.venv/bin/python" -m build --sdist --wheel --outdir "$work/dist" "$repo" >"$work/build.log" 2>&1 \
  || { tail -20 "$work/build.log"; exit 1; }
wheel="$(ls "$work"/dist/*.whl)"
echo "built $(basename "$wheel") and $(basename "$(ls "$work"/dist/*.tar.gz)")"
cp "$repo/tests/wheel/smoke.py" "$work/smoke.py"
cd "$work"  # outside the repository: the source tree is not on the path
extras="core web rl ray bench"
# The installs side by side (mostly downloads and unpacking: one after another they took minutes), then each
# extra's smoke test alone, in its own venv.
for extra in $extras; do
  (
    "$python" -m venv "$work/venv-$extra"
    spec="$wheel"; [ "$extra" = core ] || spec="$wheel[$extra]"
    "$work/venv-$extra/bin/pip" install -q --disable-pip-version-check "$spec"
  ) >"$work/pip-$extra.log" 2>&1 &
  pids="${pids:-} $!"
done
set -- $extras
for pid in $pids; do
  wait "$pid" || { echo "installing the wheel with extra $1 failed:"; grep -v '^WARNING: Location' "$work/pip-$1.log" | tail -20; exit 1; }
  shift
done
for extra in $extras; do
  "$work/venv-$extra/bin/python" smoke.py "$extra"  # each extra's part alone: core is checked in its own venv
  rm -rf "$work/venv-$extra"
done
echo "wheel smoke test: passed for core, web, rl, ray and bench"
