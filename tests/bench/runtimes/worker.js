// tests/bench/runtimes/worker.js - a Node.js worker for host-bench's mixed
// host: what a web worker builds at start (a map of 200,000 entries and a
// typed array), then it waits to be killed.  Every worker builds the same.
const m = new Map();
for (let i = 0; i < 200000; i++) m.set(i, ["entry-" + i, i * 1.5]);
const a = new Float64Array(1000000).map((_, i) => i);
setInterval(() => m.size + a.length, 1 << 30);
