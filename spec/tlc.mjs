// Runs TLC on every configuration in manifest.json and compares the
// outcome and the distinct-state count with the manifest.  TLC is the
// reference checker; it is not a dependency of the build.
//
//   TLA2TOOLS=/path/to/tla2tools.jar node spec/tlc.mjs [CONFIG.cfg ...]
//
// JAVA (default "java"), JAVA_OPTS (default "-XX:+UseParallelGC") and
// TLC_WORKERS (default 1) are honoured.  A configuration expected to fail
// always runs with one worker: the count at a violation depends on the
// order of exploration, and one worker makes it reproducible.  Each run
// works in a scratch directory, so TLC's state files and trace modules
// never land in the tree.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Tally, here, loadConfigs } from './manifest.mjs';
import { runTlc, tlcJar } from './tlcrun.mjs';

const jar = tlcJar();
const workers = process.env.TLC_WORKERS ?? '1';

const only = process.argv.slice(2);
const configs = loadConfigs((c) => only.length === 0 || only.includes(c.cfg));

// Every module and configuration of spec/, as TLC will see them.
const files = {};
for (const f of readdirSync(here)) {
  if (f.endsWith('.tla') || f.endsWith('.cfg')) files[f] = readFileSync(join(here, f), 'utf8');
}

const tally = new Tally();
for (const c of configs) {
  const r = runTlc(jar, files, c.spec, c.cfg, c.expect === 'pass' ? workers : '1');
  // A configuration whose TLC count is not recorded yet fails, saying so.
  tally.record(c, r.outcome, r.distinct, c.tlc?.distinct ?? 'no recorded', r.secs.toFixed(1));
  if (r.outcome === 'error') console.log(r.out.split('\n').slice(-30).join('\n'));
}
tally.finish('tlc');
