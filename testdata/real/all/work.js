// A node process with two worker threads hashing, for a perf capture.
const { Worker, isMainThread } = require('worker_threads');
const crypto = require('crypto');
function spin(ms) {
  const end = Date.now() + ms;
  let h = Buffer.from('x');
  while (Date.now() < end) h = crypto.createHash('sha256').update(h).digest();
  return h;
}
if (isMainThread) {
  const ws = [new Worker(__filename), new Worker(__filename)];
  spin(150);
  Promise.all(ws.map((w) => new Promise((r) => w.on('exit', r)))).then(() => spin(50));
} else {
  spin(120);
}
