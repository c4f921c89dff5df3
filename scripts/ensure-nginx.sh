#!/usr/bin/env bash
# scripts/bench-two-instances.ts puts two API instances behind Debian's nginx (a real load
# balancer, started by the bench with its own config in a temp dir). Install it when we can
# (root), otherwise stop with the exact command to run. Quiet when it is already there.
set -euo pipefail
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing nginx for the two-instance benchmark..."
  apt-get update -qq
  # nginx-light is the smaller build (older Debian); newer Debian ships only nginx.
  if apt-cache show nginx-light >/dev/null 2>&1; then pkg=nginx-light; else pkg=nginx; fi
  # Only the binary is wanted: the package's service is not started (policy-rc.d says no).
  DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
else
  echo "The two-instance benchmark needs nginx. Install it with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y nginx" >&2
  exit 1
fi
