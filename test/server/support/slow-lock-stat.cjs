// Preloaded (`node --require`) by the takeover race of data-directory-lock.test.ts: every stat of
// proper-lockfile's file system (graceful-fs) answers 300 ms late, as on a loaded machine or a
// network file system, so that starts that find the same stale lock all judge it stale before any
// of them has replaced it.
const { dirname } = require('node:path');
const gracefulFs = require(require.resolve('graceful-fs', { paths: [dirname(require.resolve('proper-lockfile'))] }));
const stat = gracefulFs.stat;
gracefulFs.stat = function (path, ...rest) {
  const done = rest.pop();
  stat.call(gracefulFs, path, ...rest, (...answer) => setTimeout(() => done(...answer), 300));
};
