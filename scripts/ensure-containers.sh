#!/usr/bin/env bash
# The agent's container tests need podman (its Docker Engine API service), runc, the CNCF registry
# and a static busybox for images built FROM scratch (../shared/notes/containers.md). Install them
# when we can (root), otherwise stop with the exact command to run. Never skip the tests silently.
# Also writes the containers.conf this sandbox needs (runc instead of crun, ulimits it may set) to
# a project-owned path; the tests point CONTAINERS_CONF at it, /etc stays untouched.
# The server's SSH gateway test drives Debian's OpenSSH client (ssh, ssh-keygen), as balena-cli does,
# and its git push test Debian's git (which the server runs too: git receive-pack, git archive).
# The invoice test renders a PDF page with poppler's pdftoppm and reads its text with pdftotext.
# The balenaOS tests run Debian's openvpn (the device VPN and a device's client) and write
# config.json into a FAT boot partition with mtools (mkfs.fat from dosfstools builds the test image).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CONF="$ROOT/.cache/containers/containers.conf"
missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
command -v docker-registry >/dev/null || missing+=(docker-registry)
command -v ssh >/dev/null && command -v ssh-keygen >/dev/null || missing+=(openssh-client)
command -v git >/dev/null || missing+=(git)
# The images are FROM scratch: only the static build of busybox runs in them.
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "ok installed" || missing+=(busybox-static)
command -v pdftoppm >/dev/null && command -v pdftotext >/dev/null || missing+=(poppler-utils)
command -v openvpn >/dev/null || [ -x /usr/sbin/openvpn ] || missing+=(openvpn)
command -v mcopy >/dev/null || missing+=(mtools)
command -v mkfs.fat >/dev/null || [ -x /usr/sbin/mkfs.fat ] || [ -x /sbin/mkfs.fat ] || missing+=(dosfstools)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    echo "Installing ${missing[*]} for the agent's container tests..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc docker-registry busybox-static openssh-client git poppler-utils openvpn mtools dosfstools >/dev/null
  else
    echo "The container, SSH, git push, invoice and balenaOS tests need podman, runc, docker-registry, busybox-static, openssh-client, git, poppler-utils, openvpn, mtools and dosfstools. Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y podman runc docker-registry busybox-static openssh-client git poppler-utils openvpn mtools dosfstools" >&2
    exit 1
  fi
fi
mkdir -p "$(dirname "$CONF")"
cat >"$CONF.tmp" <<'CONF'
# Written by scripts/ensure-containers.sh for the tests (crun fails on this kind of host, and the
# sandbox refuses to raise RLIMIT_NOFILE/RLIMIT_NPROC past these).
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
mv "$CONF.tmp" "$CONF"
