#!/usr/bin/env python3
"""Starts one process for the bench and times it, with as little of the launcher's own cost as can be.

Node's spawnSync forks the whole bench process and sets up an event loop, pipes and a reader for every
child: ~5 ms a process on the machine the README's figures come from, which is as much as a whole
`sh -c 'exit 0'`. posix_spawn (vfork + exec) from this small process costs a fraction of that. The
bench times every figure and its `node -e 0` baseline through this same launcher, so both sides pay
the same, smaller, overhead.

stdin: one JSON line {"argv": [...], "cwd": "...", "env": {...}}, then the child's input, raw.
stdout: one JSON line {"ms": wall time from spawn to reaped, "status": exit code or null, "signal":
number or null, "settle_ms": how long the processes it left behind ran on after it, "left": how many
still ran after SETTLE_LIMIT_S (both null where this launcher cannot wait for them)}, then what the
child wrote on its stdout, raw. The child's stderr is dropped.

The Stop hook's helper finishes after the hook (it starts the drain and tears node down once the hook
has exited: the runtime does not wait for that). Those ~10 ms of CPU are not the hook's wall time,
but a `node -e 0` started during them runs slower, which would flatter every ratio to it: so this
launcher waits for them (Linux: as the child subreaper) before it answers, untimed.
"""
import ctypes
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time


PR_SET_CHILD_SUBREAPER = 36
SETTLE_LIMIT_S = 10


def become_subreaper():
    """On Linux, the timed process's orphans (the Stop hook's helper, which lives on after the hook
    exits) become this process's children, so it can wait for them. False where it cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def settle():
    """Waits, untimed, until every process the timed one left behind has exited (at most
    SETTLE_LIMIT_S): the next timed process, the baseline `node -e 0` included, then starts on a
    machine this one no longer loads. Returns (ms waited, processes still running)."""
    start = time.perf_counter_ns()
    deadline = time.monotonic() + SETTLE_LIMIT_S
    left = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > deadline:
                left = sum(1 for _ in children())
                break
            time.sleep(0.0005)
    return (time.perf_counter_ns() - start) / 1e6, left


def children():
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[1].decode() == me:
                yield entry


def main():
    subreaper = become_subreaper()
    raw = sys.stdin.buffer.read()
    head, _, data = raw.partition(b"\n")
    job = json.loads(head)
    argv, env = job["argv"], job["env"]
    exe = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH", os.defpath))
    if exe is None:
        sys.stderr.write(f"launch.py: {argv[0]} is not on PATH\n")
        return 127
    os.chdir(job["cwd"])
    read_end, write_end = os.pipe()
    out = tempfile.TemporaryFile()
    devnull = os.open(os.devnull, os.O_WRONLY)

    def feed():
        # A child that exits without reading its input (a hook with the mode off) closes the pipe:
        # that is a result, not a failure.
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(write_end, view):]
        except BrokenPipeError:
            pass
        finally:
            os.close(write_end)

    # What fits the pipe's buffer is written before the clock starts; more is fed while it runs.
    small = len(data) <= 65536
    if small:
        feed()
    actions = [
        (os.POSIX_SPAWN_DUP2, read_end, 0),
        (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
        (os.POSIX_SPAWN_DUP2, devnull, 2),
    ]
    if not small:
        actions.append((os.POSIX_SPAWN_CLOSE, write_end))
    start = time.perf_counter_ns()
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across exec: the child
    # gets the defaults back, as from any shell or runtime.
    pid = os.posix_spawn(exe, argv, env, file_actions=actions, setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    feeder = None
    if not small:
        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
    _, wait_status = os.waitpid(pid, 0)
    ms = (time.perf_counter_ns() - start) / 1e6
    os.close(read_end)
    if feeder is not None:
        feeder.join(5)
    status = os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else None
    signum = os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else None
    settle_ms, left = settle() if subreaper else (None, None)
    timing = {"ms": ms, "status": status, "signal": signum, "settle_ms": settle_ms, "left": left}
    sys.stdout.buffer.write(json.dumps(timing).encode() + b"\n")
    out.seek(0)
    shutil.copyfileobj(out, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
