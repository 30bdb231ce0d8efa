#!/usr/bin/env bash
# Installs Debian's chromium for the HTML report's browser test when it is missing (CI runs as
# root on Debian). Quiet and quick when it is there already. No browser download from elsewhere:
# playwright-core drives this system browser.
set -euo pipefail
if [[ -x /usr/bin/chromium ]]; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no /usr/bin/chromium and no apt-get; install Chromium, or the browser test is skipped" >&2
  exit 0
fi
sudo=''
[[ $(id -u) -eq 0 ]] || sudo='sudo'
echo "ensure-chromium: installing Debian's chromium for the browser test" >&2
$sudo apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version >&2
