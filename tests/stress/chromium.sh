#!/bin/sh
# The browser tests' chromium: Debian's (Playwright's own browser download does not work here), found by
# tests/conftest.py at $GGP_CHROMIUM or /usr/bin/chromium.
# `make test` runs this first: when chromium is missing and this user may install packages (root, or
# password-less sudo) it installs it with apt-get; otherwise, or when the install fails, it says so and
# the tests run without it (tests/conftest.py then ends the run with one line: how many browser tests were
# skipped and the command that enables them). GGP_NO_INSTALL=1 installs nothing.
browser="${GGP_CHROMIUM:-/usr/bin/chromium}"
[ -x "$browser" ] && exit 0
if [ -n "${GGP_CHROMIUM:-}" ]; then
  echo "chromium: GGP_CHROMIUM=$GGP_CHROMIUM is not there; the browser tests cannot run" >&2
  exit 0
fi
if [ -n "${GGP_NO_INSTALL:-}" ]; then
  echo "chromium: missing, not installed (GGP_NO_INSTALL is set); the browser tests cannot run" >&2
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo="sudo -n"
else
  echo "chromium: missing, and this user cannot install packages; the browser tests cannot run" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "chromium: missing, and there is no apt-get here; the browser tests cannot run" >&2
  exit 0
fi
echo "chromium: missing; installing Debian's chromium for the browser tests (apt-get install chromium)" >&2
$sudo apt-get update -q >/dev/null &&
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null ||
  echo "chromium: the install failed; the browser tests cannot run" >&2
exit 0
