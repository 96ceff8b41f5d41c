#!/usr/bin/env node
// The `rein` command. The CLI is built into dist/bundle/ by `npm ci` (the `prepare` script).
import('../dist/bundle/cli.js').then(
  (cli) => cli.main(process.argv.slice(2)),
  (error) => {
    if (error && error.code === 'ERR_MODULE_NOT_FOUND') {
      process.stderr.write('rein: dist/ is missing. Run `npm ci` (or `npm run build`) in the rein folder first.\n');
    } else {
      process.stderr.write(`rein: ${error && error.stack ? error.stack : String(error)}\n`);
    }
    process.exitCode = 1;
  },
);
