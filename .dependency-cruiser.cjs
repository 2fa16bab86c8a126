// `make lint` runs dependency-cruiser with this: no import cycle between files, nor between folders,
// in the code of the three packages (server/, client/, contract/) and the scripts.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular-files',
      comment: 'A file that reaches itself through its imports: move the shared part to a module both import.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-circular-folders',
      comment: 'Two folders that import each other: the shared part belongs in a third (http/ for the app and the areas).',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'server-and-client-apart',
      comment: 'The sandbox and the client never import each other; what both need is in the contract package.',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^client/' },
    },
    {
      name: 'client-and-server-apart',
      comment: 'The sandbox and the client never import each other; what both need is in the contract package.',
      severity: 'error',
      from: { path: '^client/' },
      to: { path: '^server/' },
    },
  ],
  options: {
    // Type-only imports count: a cycle of types is a cycle a reader has to untangle too.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|\\.test-builds)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: false,
  },
};
