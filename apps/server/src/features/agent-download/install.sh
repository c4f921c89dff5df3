#!/bin/sh
# Installs the Flotilla device agent from this Flotilla server, registers the device with a
# configuration file downloaded from the dashboard, and runs it as a systemd service:
#
#   curl -fsSL @API_URL@/install.sh | sh -s -- --config config.json
#
# Needs Node.js 20+ with npm, curl or wget, and (for the service) root and systemd.
set -eu

API='@API_URL@'
API_GIVEN=0
CONFIG=''
PREFIX='/opt/flotilla-agent'
PREFIX_GIVEN=0
STATE=''
SERVICE=1
TERMINAL=1
DOCKER_SOCKET=''

fail() {
  echo "flotilla install: $*" >&2
  exit 1
}

usage() {
  cat <<EOF
Usage: sh install.sh --config FILE [options]
  --config FILE         the device configuration downloaded from the dashboard (required unless --no-register)
  --no-register         install only; register later with: flotilla-agent register --config FILE --state FILE
  --prefix DIR          install into DIR (default /opt/flotilla-agent; the command is DIR/bin/flotilla-agent)
  --state FILE          the device identity (default /var/lib/flotilla-agent/flotilla-agent.json, or DIR/flotilla-agent.json with --prefix)
  --docker-socket ADDR  the container engine the service runs releases on (default: the agent's own choice)
  --no-service          do not write or start the systemd unit
  --without-terminal    skip the Host OS terminal support (@lydell/node-pty, fetched from the npm registry)
  --api URL             the Flotilla API to install from and register with (default $API;
                        without it the device registers with the configuration file's apiEndpoint)
EOF
}

REGISTER=1
while [ $# -gt 0 ]; do
  case "$1" in
    --config) [ $# -ge 2 ] || fail "--config needs a file"; CONFIG="$2"; shift 2 ;;
    --prefix) [ $# -ge 2 ] || fail "--prefix needs a directory"; PREFIX="$2"; PREFIX_GIVEN=1; shift 2 ;;
    --state) [ $# -ge 2 ] || fail "--state needs a file"; STATE="$2"; shift 2 ;;
    --docker-socket) [ $# -ge 2 ] || fail "--docker-socket needs an address"; DOCKER_SOCKET="$2"; shift 2 ;;
    --api) [ $# -ge 2 ] || fail "--api needs a URL"; API="$2"; API_GIVEN=1; shift 2 ;;
    --no-service) SERVICE=0; shift ;;
    --no-register) REGISTER=0; shift ;;
    --without-terminal) TERMINAL=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; fail "unknown option $1" ;;
  esac
done

if [ "$REGISTER" = 1 ]; then
  [ -n "$CONFIG" ] || fail "--config FILE is required: download the device configuration in the dashboard's Add device dialog"
  [ -r "$CONFIG" ] || fail "cannot read the configuration file $CONFIG"
fi

command -v node >/dev/null 2>&1 || fail "Node.js 20 or later is needed (https://nodejs.org, or your distribution's nodejs package)"
command -v npm >/dev/null 2>&1 || fail "npm is needed next to Node.js (Debian: apt-get install npm)"
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
[ "$NODE_MAJOR" -ge 20 ] || fail "Node.js 20 or later is needed; this host has $(node --version)"

mkdir -p "$PREFIX" 2>/dev/null || fail "cannot create $PREFIX (run as root, or choose --prefix DIR)"
[ -w "$PREFIX" ] || fail "cannot write to $PREFIX (run as root, or choose --prefix DIR)"
PREFIX=$(cd "$PREFIX" && pwd)
if [ -z "$STATE" ]; then
  if [ "$PREFIX_GIVEN" = 1 ]; then STATE="$PREFIX/flotilla-agent.json"; else STATE=/var/lib/flotilla-agent/flotilla-agent.json; fi
fi
mkdir -p "$(dirname "$STATE")"
STATE="$(cd "$(dirname "$STATE")" && pwd)/$(basename "$STATE")"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "Downloading the agent from $API/download/agent.tgz"
if command -v curl >/dev/null 2>&1; then
  curl -fsSL "$API/download/agent.tgz" -o "$TMP/flotilla-agent.tgz" || fail "cannot download $API/download/agent.tgz"
elif command -v wget >/dev/null 2>&1; then
  wget -q -O "$TMP/flotilla-agent.tgz" "$API/download/agent.tgz" || fail "cannot download $API/download/agent.tgz"
else
  fail "curl or wget is needed to download the agent"
fi

echo "Installing flotilla-agent into $PREFIX"
# The tarball has no dependencies: this step needs no npm registry.
npm install --global --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "$TMP/flotilla-agent.tgz" ||
  fail "npm could not install the agent"
AGENT="$PREFIX/bin/flotilla-agent"
[ -x "$AGENT" ] || fail "npm did not install $AGENT"
if [ "$TERMINAL" = 1 ]; then
  # Native, one prebuilt package per platform, so not in the bundle; the agent runs without it.
  echo "Adding the Host OS terminal support (@lydell/node-pty@@NODE_PTY_VERSION@ from the npm registry)"
  npm install --prefix "$PREFIX/lib/node_modules/flotilla-agent" --no-save --no-audit --no-fund --loglevel=error \
    "@lydell/node-pty@@NODE_PTY_VERSION@" ||
    echo "flotilla install: warning: could not install @lydell/node-pty; the Host OS terminal will be unavailable" >&2
fi
if [ "$PREFIX_GIVEN" = 0 ] && [ -d /usr/local/bin ] && [ -w /usr/local/bin ]; then
  ln -sf "$AGENT" /usr/local/bin/flotilla-agent
fi
echo "Installed $("$AGENT" --version)"

if [ "$REGISTER" = 1 ]; then
  if [ "$API_GIVEN" = 1 ]; then
    "$AGENT" register --config "$CONFIG" --state "$STATE" --api "$API" || fail "registration failed (the line above says why)"
  else
    "$AGENT" register --config "$CONFIG" --state "$STATE" || fail "registration failed (the line above says why)"
  fi
fi

RUN="$AGENT run --state $STATE"
[ -z "$DOCKER_SOCKET" ] || RUN="$RUN --docker-socket $DOCKER_SOCKET"
if [ "$SERVICE" = 0 ]; then
  echo "No service written (--no-service). Start the agent with: $RUN"
  exit 0
fi
if ! command -v systemctl >/dev/null 2>&1 || [ ! -d /run/systemd/system ]; then
  echo "systemd is not running on this host, so no service was written. Start the agent with: $RUN"
  exit 0
fi
[ "$(id -u)" = 0 ] || fail "writing the systemd unit needs root (or pass --no-service and start: $RUN)"
cat >/etc/systemd/system/flotilla-agent.service <<EOF
[Unit]
Description=Flotilla device agent
Wants=network-online.target
After=network-online.target docker.service balena-engine.service podman.socket

[Service]
ExecStart=$(command -v node) $PREFIX/lib/node_modules/flotilla-agent/flotilla-agent.mjs run --state $STATE${DOCKER_SOCKET:+ --docker-socket $DOCKER_SOCKET}
Restart=always
RestartSec=5

[Install]
WantedBy=multi-user.target
EOF
systemctl daemon-reload
systemctl enable --now flotilla-agent.service
echo "flotilla-agent runs as the systemd service flotilla-agent (journalctl -u flotilla-agent -f)"
