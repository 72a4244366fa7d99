#!/usr/bin/env python3
"""A pre-fork worker pool for the estimate benchmark.

The parent loads what a web worker loads (numpy and Django when they are
installed), builds a 200,000-entry dict, forks WORKERS workers that each
read everything (reference counts change, so every page becomes the
worker's own copy), then prints all PIDs on one line and waits to be killed.
"""
import os
import signal
import sys
import time

workers = int(sys.argv[1]) if len(sys.argv) > 1 else 8
loaded = []
for mod in ("numpy", "django", "django.db.models", "json", "email.mime.text"):
    try:
        __import__(mod)
        loaded.append(mod)
    except ImportError:
        pass
data = {i: (str(i) * 3, float(i)) for i in range(200000)}
kids = []
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
