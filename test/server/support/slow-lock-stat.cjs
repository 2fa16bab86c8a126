// Preloaded (`node --require`) by the takeover race of data-directory-lock.test.ts: every look at
// a data directory's sandbox.lock answers 300 ms late, as on a loaded machine or a network file
// system: proper-lockfile's (graceful-fs `stat`) and the takeover's own (`fs.lstatSync`, before
// its ESM bindings are made). Starts that find the same stale lock then all judge it stale before
// any of them has replaced it.
const fs = require('node:fs');
const { dirname } = require('node:path');
const LATE_MS = 300;
const isLock = (path) => String(path).endsWith('/sandbox.lock');
const gracefulFs = require(require.resolve('graceful-fs', { paths: [dirname(require.resolve('proper-lockfile'))] }));
const stat = gracefulFs.stat;
gracefulFs.stat = function (path, ...rest) {
  const done = rest.pop();
  stat.call(gracefulFs, path, ...rest, (...answer) => setTimeout(() => done(...answer), isLock(path) ? LATE_MS : 0));
};
const lstatSync = fs.lstatSync;
fs.lstatSync = function (path, ...rest) {
  const answer = lstatSync.call(fs, path, ...rest); // looked at now, answered late: the judgement is 300 ms old when acted on
  if (isLock(path)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LATE_MS);
  return answer;
};
require('node:module').syncBuiltinESMExports();
