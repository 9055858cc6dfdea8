#!/bin/sh
# workerd, tethered to the process that starts it (Miniflare runs this as its workerd binary,
# see scripts/runtime.ts): the kernel kills it when that process dies, however it dies (kill -9
# included), so it never outlives its launcher holding the port and the state directory.
# - setsid: its own session and process group, so a terminal's Ctrl-C reaches the launcher,
#   which stops the runtime itself, instead of killing workerd under the launcher's feet.
# - setpriv --pdeathsig KILL: SIGKILL when the parent dies. A parent that died before that
#   was set is caught by the check that follows: the parent is no longer the one we started with.
# RELAY_WORKERD is the real workerd binary.
parent=$PPID
exec setsid setpriv --pdeathsig KILL -- /bin/sh -c '[ "$PPID" = "$0" ] || exit 70; exec "$@"' "$parent" "$RELAY_WORKERD" "$@"
