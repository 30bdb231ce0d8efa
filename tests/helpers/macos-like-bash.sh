# shellcheck shell=sh disable=SC2154 # the forge_ variables are set by the program that sources this
# The `bash` of the stock-Mac test pass (scripts/test-shell.mjs), sourced by the `bash` program that
# pass makes first on PATH (the system's bash in POSIX mode), which sets forge_shim (its folder),
# forge_mac_bin (the stand-in's bin/), forge_host_path (PATH before the pass), forge_system_bash and
# forge_no_proc.
#
# A kit hook (its path the first argument: how the runtimes, the tests and a shebang's env start
# one) runs in the stand-in's bash 3.2, as a Mac runs it: PATH is the caller's own entries (a test's
# fake tools, in its temp folder) with the stand-in's bin/ in place of the system's folders, OSTYPE
# darwin23, no /proc unless the caller named one. Anything else (`bash -c` of a test body, a test's
# helper script) runs in the system bash, with nothing changed.

case ${1-} in
  reflect-*-hook.sh | */reflect-*-hook.sh | */hooks/lib/*.sh | */forge-reflect/lib/*.sh | */text-encoding-check.bash) ;;
  *)
    # A script that is not a hook: noted for the pass's summary, where a hook among them would show
    # a call this file does not recognise.
    case ${1-} in *.sh | *.bash) [ -f "$1" ] && printf '%s\n' "$1" >>"$forge_shim/system-scripts" ;; esac
    exec "$forge_system_bash" "$@"
    ;;
esac

forge_path='' forge_mac_added=''
forge_ifs=$IFS
IFS=:
set -f
for forge_dir in $PATH; do
  case $forge_dir in
    '' | "$forge_shim" | */node_modules/*) continue ;; # this folder; npm's and bats' own
  esac
  case ":$forge_host_path:" in
    *":$forge_dir:"*)
      # A folder of the system's: the stand-in's bin/ takes the place of the first, the rest go.
      if [ -z "$forge_mac_added" ]; then
        forge_path=${forge_path:+$forge_path:}$forge_mac_bin
        forge_mac_added=1
      fi
      continue
      ;;
  esac
  forge_path=${forge_path:+$forge_path:}$forge_dir
done
set +f
IFS=$forge_ifs

PATH=$forge_path
OSTYPE=darwin23 UNAME_s=Darwin UNAME_r=23.6.0 UNAME_m=arm64
export PATH OSTYPE UNAME_s UNAME_r UNAME_m
if [ -z "${FORGE_PROC_ROOT+set}" ]; then
  FORGE_PROC_ROOT=$forge_no_proc
  export FORGE_PROC_ROOT
fi
unset forge_path forge_mac_added forge_ifs forge_dir
exec "$forge_mac_bin/bash" "$@"
