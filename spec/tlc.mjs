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

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tally, here, loadConfigs } from './manifest.mjs';

const jar = process.env.TLA2TOOLS;
if (!jar) {
  console.error(`TLA2TOOLS is not set.
Point it at tla2tools.jar, the TLA+ tools release from
https://github.com/tlaplus/tlaplus/releases (Java 11 or later), e.g.
  TLA2TOOLS=$HOME/tla2tools.jar make tlc`);
  process.exit(2);
}
const java = process.env.JAVA ?? 'java';
const javaOpts = (process.env.JAVA_OPTS ?? '-XX:+UseParallelGC').split(/\s+/).filter(Boolean);
const workers = process.env.TLC_WORKERS ?? '1';

const only = process.argv.slice(2);
const configs = loadConfigs((c) => only.length === 0 || only.includes(c.cfg));

// The PROPERTY/PROPERTIES names of a cfg.
function propertyNames(cfg) {
  const m = /^PROPERT(?:Y|IES)\b([\s\S]*?)(?=^[A-Z_]+\b|(?![\s\S]))/m.exec(cfg.replace(/\\\*.*$/gm, ''));
  return m ? m[1].split(/\s+/).filter(Boolean) : [];
}

// The outcome of a TLC run on cfg, as the manifest words it.
function outcomeOf(out, cfg) {
  if (/Model checking completed\. No error has been found\./.test(out)) return 'pass';
  let m = /Error: Invariant (\w+) is violated/.exec(out);
  if (m) return `violates ${m[1]}`;
  m = /Error: Action property (\w+) is violated/.exec(out);
  if (m) return `violates ${m[1]}`;
  m = /Error: Temporal property (\w+) was violated/.exec(out);
  if (m) return `violates ${m[1]}`;
  if (/Error: Temporal properties were violated/.test(out)) {
    // Older TLC releases do not name the property: name it when the cfg
    // checks only one.
    const names = propertyNames(cfg);
    return names.length === 1 ? `violates ${names[0]}` : 'violates temporal property';
  }
  if (/Error: Deadlock reached/.test(out)) return 'deadlock';
  return 'error';
}

function distinctOf(out) {
  const all = [...out.matchAll(/([\d,]+) distinct states found/g)];
  return all.length ? Number(all[all.length - 1][1].replaceAll(',', '')) : undefined;
}

const tally = new Tally();
for (const c of configs) {
  const work = mkdtempSync(join(tmpdir(), 'tlc-'));
  for (const f of readdirSync(here)) {
    if (f.endsWith('.tla') || f.endsWith('.cfg')) copyFileSync(join(here, f), join(work, f));
  }
  const t0 = Date.now();
  const run = spawnSync(
    java,
    [...javaOpts, '-cp', jar, 'tlc2.TLC', '-workers', c.expect === 'pass' ? workers : '1', '-cleanup',
      '-metadir', join(work, 'states'), '-config', c.cfg, c.spec],
    { cwd: work, encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  rmSync(work, { recursive: true, force: true });
  const out = `${run.stdout ?? ''}${run.stderr ?? ''}`;
  const got = outcomeOf(out, readFileSync(join(here, c.cfg), 'utf8'));
  tally.record(c, got, distinctOf(out), c.tlc.distinct, secs);
  if (got === 'error') console.log(out.split('\n').slice(-30).join('\n'));
}
tally.finish('tlc');
