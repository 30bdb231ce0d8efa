#!/usr/bin/env python3
"""Starts one process for the bench and times it, with as little of the launcher's own cost as can be.

Node's spawnSync forks the whole bench process and sets up an event loop, pipes and a reader for every
child: ~5 ms a process on the machine the README's figures come from, which is as much as a whole
`sh -c 'exit 0'`. posix_spawn (vfork + exec) from this small process costs a fraction of that. The
bench times every figure and its `node -e 0` baseline through this same launcher, so both sides pay
the same, smaller, overhead.

stdin: one JSON line {"argv": [...], "cwd": "...", "env": {...}}, then the child's input, raw.
stdout: one JSON line {"ms": wall time from spawn to reaped, "status": exit code or null, "signal":
number or null}, then what the child wrote on its stdout, raw. The child's stderr is dropped.
"""
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time


def main():
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
    sys.stdout.buffer.write(json.dumps({"ms": ms, "status": status, "signal": signum}).encode() + b"\n")
    out.seek(0)
    shutil.copyfileobj(out, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
