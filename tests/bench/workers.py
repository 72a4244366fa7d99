#!/usr/bin/env python3
"""Python workers for the estimate benchmark.

    workers.py WORKERS prefork|independent

prefork: the parent loads what a web worker loads (numpy and Django when
they are installed), builds a 200,000-entry dict, forks WORKERS workers that
each read everything (reference counts change, so the pages they touch
become their own copies; the rest stay shared copy-on-write).
independent: WORKERS separate interpreters, each loading and building the
same on its own (the issue's 8 Python workers).
Prints all PIDs on one line, then waits to be killed.
"""
import os
import signal
import sys
import time

workers = int(sys.argv[1]) if len(sys.argv) > 1 else 8
mode = sys.argv[2] if len(sys.argv) > 2 else "prefork"
if mode == "worker":
    workers = 0
loaded = []
for mod in ("numpy", "django", "django.db.models", "json", "email.mime.text"):
    try:
        __import__(mod)
        loaded.append(mod)
    except ImportError:
        pass
data = {i: (str(i) * 3, float(i)) for i in range(200000)}
kids = []
if mode == "worker":
    signal.pause()
    sys.exit(0)
if mode == "independent":
    import subprocess
    procs = [subprocess.Popen([sys.executable, __file__, "0", "worker"]) for _ in range(workers)]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    time.sleep(8)   # let each build its data
    # the parent holds the same modules and data, and is merged too
    print(" ".join(str(p) for p in [os.getpid()] + [p.pid for p in procs]), "loaded=" + ",".join(loaded), flush=True)
    try:
        signal.pause()
    finally:
        for p in procs:
            p.terminate()
    sys.exit(0)
for _ in range(workers):
    pid = os.fork()
    if pid == 0:
        for k, v in data.items():
            pass
        signal.pause()
        os._exit(0)
    kids.append(pid)
# Killed, the parent takes its workers along.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
time.sleep(1)
print(" ".join(str(p) for p in [os.getpid()] + kids), "loaded=" + ",".join(loaded), flush=True)
try:
    signal.pause()
finally:
    for p in kids:
        os.kill(p, signal.SIGTERM)
