#!/usr/bin/env bash
# Prepare the `docker` sandbox backend on a Debian 12 host, with Podman serving the Docker API.
#
#   scripts/podman-setup.sh            # as root; safe to run again (every step checks before it acts)
#
# 1. installs podman and runc with apt-get when missing (crun refuses cgroup v1 hybrid hosts);
# 2. writes /etc/containers/containers.conf.d/50-jax-judge.conf: runc, cgroupfs, no event log (a file
#    one grows without bound), default ulimits that fit under the host's hard limits;
# 3. builds the skeleton image with `podman import` when it is absent: empty directories, /bin /lib ...
#    symlinks that match the host, and a small passwd/group. Nothing else: the backend binds /usr, the Python
#    install, the venv and the sandbox package read-only at run time. No registry is needed;
# 4. starts `podman system service` on the socket in the background (logged to a file) unless a service
#    already answers there (one this script started is restarted when step 2 changed the config), and
#    waits until it answers. Its pid is in podman-service.pid next to the socket. The service runs in its
#    own state directory, never in the caller's: the container monitors it spawns inherit that working
#    directory and write files there (an `oom` marker after a memory kill), which must not land in a
#    checkout.
#
# Settings (environment): JUDGE_PODMAN_SOCKET (default /run/jax-judge/podman.sock), JUDGE_DOCKER_IMAGE
# (default localhost/jax-judge-skeleton:3, must match sandbox/backends/docker.py), JUDGE_PODMAN_LOG
# (default /var/log/jax-judge/podman-service.log), JUDGE_PODMAN_STATE (the service's working directory,
# default: service/ next to the socket), JUDGE_PODMAN_WAIT (seconds, default 30).
#
# Access to the socket is root-equivalent: its directory is 0700 root.
set -euo pipefail

SOCKET="${JUDGE_PODMAN_SOCKET:-/run/jax-judge/podman.sock}"
IMAGE="${JUDGE_DOCKER_IMAGE:-localhost/jax-judge-skeleton:3}"
LOG="${JUDGE_PODMAN_LOG:-/var/log/jax-judge/podman-service.log}"
WAIT="${JUDGE_PODMAN_WAIT:-30}"
STATE="${JUDGE_PODMAN_STATE:-$(dirname "$SOCKET")/service}"
CONF_DIR=/etc/containers/containers.conf.d
CONF="$CONF_DIR/50-jax-judge.conf"
PIDFILE="$(dirname "$SOCKET")/podman-service.pid"
URL="unix://$SOCKET"

say() { printf 'podman-setup: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (podman's API service and the cgroup limits need it)"

# One run at a time (parallel test workers may call this together).
mkdir -p "$(dirname "$SOCKET")"
chmod 0700 "$(dirname "$SOCKET")"
exec 9>"$(dirname "$SOCKET")/setup.lock"
flock 9

# ---------------------------------------------------------------------------------------------- packages
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || die "podman/runc missing and apt-get is not available"
    say "installing podman and runc with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -q -y --no-install-recommends podman runc; then
        apt-get update -q
        apt-get install -q -y --no-install-recommends podman runc
    fi
fi
command -v podman >/dev/null 2>&1 || die "podman is still missing after apt-get"
command -v runc >/dev/null 2>&1 || die "runc is still missing after apt-get"

# ---------------------------------------------------------------------------------------------- config
# Podman's default ulimits (nofile 1048576) exceed the hard limits of many hosts and runc then refuses to
# start; these fit. The backend sets its own tighter ulimits per container on top.
mkdir -p "$CONF_DIR"
WANT_CONF='# Written by jax-judge scripts/podman-setup.sh; rewritten on every run.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "none"'
CONF_CHANGED=0
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$WANT_CONF" ]; then
    say "writing $CONF"
    CONF_CHANGED=1
    printf '%s\n' "$WANT_CONF" >"$CONF.tmp"
    mv -f "$CONF.tmp" "$CONF"
fi

# ---------------------------------------------------------------------------------------------- image
if podman image exists "$IMAGE"; then
    say "image $IMAGE present"
else
    say "building image $IMAGE with podman import"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    skel="$work/root"
    mkdir -p "$skel"/{etc,dev,proc,sys,run,usr,opt/judge,var/tmp,tmp}
    chmod 1777 "$skel/tmp" "$skel/var/tmp"
    # /root may hold the Python install (bound under it at run time): traversable, not listable.
    mkdir -m 0711 "$skel/root"
    # Same /bin, /lib ... layout as the host: symlinks where the host has merged /usr, directories (bound
    # read-only by the backend) where it does not.
    for d in bin sbin lib lib32 lib64 libx32; do
        if [ -L "/$d" ]; then
            ln -s "$(readlink "/$d")" "$skel/$d"
        elif [ -d "/$d" ]; then
            mkdir "$skel/$d"
        fi
    done
    {
        echo 'root:x:0:0:root:/root:/usr/sbin/nologin'
        for slot in $(seq 0 999); do echo "judge$slot:x:$((60000 + slot)):$((60000 + slot)):judge:/tmp:/usr/sbin/nologin"; done
        echo 'nobody:x:65534:65534:nobody:/tmp:/usr/sbin/nologin'
    } >"$skel/etc/passwd"
    {
        echo 'root:x:0:'
        for slot in $(seq 0 999); do echo "judge$slot:x:$((60000 + slot)):"; done
        echo 'nogroup:x:65534:'
    } >"$skel/etc/group"
    echo 'passwd: files
group: files
hosts: files' >"$skel/etc/nsswitch.conf"
    tar --numeric-owner --owner=0 --group=0 -C "$skel" -cf "$work/skeleton.tar" .
    podman import --quiet --change 'CMD ["/bin/sh"]' --change 'WORKDIR /opt/judge' "$work/skeleton.tar" "$IMAGE" >/dev/null
    podman image exists "$IMAGE" || die "podman import did not create $IMAGE"
fi

# ---------------------------------------------------------------------------------------------- service
answers() { podman --remote --url "$URL" version >/dev/null 2>&1; }
our_service() {  # the pid in our pid file, if it is still the service this script started
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null)" || return 1
    [ -n "$pid" ] && tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q "system service --time=0 $URL" \
        && echo "$pid"
}

if [ "$CONF_CHANGED" = 1 ] && pid="$(our_service)"; then
    say "config changed: stopping the service this script started (pid $pid)"
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$PIDFILE"
fi

if answers; then
    say "a Podman API service already answers on $URL"
    if pid="$(our_service)" && [ "$(readlink "/proc/$pid/cwd")" != "$(readlink -f "$STATE" 2>/dev/null)" ]; then
        # Started by an older version of this script from the caller's directory. Not restarted here:
        # other judges on this host may be using it right now.
        say "note: it runs in $(readlink "/proc/$pid/cwd"), where its container monitors write files" \
            "(an 'oom' marker after a memory kill); restart it when idle: kill $pid && $0"
    fi
    exit 0
fi

mkdir -p "$(dirname "$LOG")" "$STATE"
chmod 0700 "$STATE"
if pid="$(our_service)"; then
    # Started by an earlier run and still coming up: wait for it rather than start a second one.
    say "service pid $pid is running; waiting for it to answer"
else
    rm -f "$SOCKET"
    say "starting podman system service on $URL (log: $LOG)"
    # A subshell in the state directory: the service and every conmon it starts work there.
    (cd "$STATE" && exec setsid nohup podman --runtime runc system service --time=0 "$URL" \
        </dev/null >>"$LOG" 2>&1 9>&-) &
    echo $! >"$PIDFILE"
fi

for _ in $(seq 1 $((WAIT * 5))); do
    if answers; then
        say "service answers on $URL (pid $(cat "$PIDFILE"))"
        exit 0
    fi
    if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
        tail -n 20 "$LOG" >&2 || true
        die "podman system service exited; see $LOG"
    fi
    sleep 0.2
done
tail -n 20 "$LOG" >&2 || true
die "podman system service did not answer on $URL within ${WAIT}s"
