// TLC, run in a scratch directory, and what tlc.mjs and mutants.mjs share:
// the outcome of a run named as the manifest names it.  TLC's state files
// and trace modules stay in the scratch directory, never in spec/.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The jar named by TLA2TOOLS; without it, say where to get it and exit.
export function tlcJar() {
  const jar = process.env.TLA2TOOLS;
  if (!jar) {
    console.error(`TLA2TOOLS is not set.
Point it at tla2tools.jar, the TLA+ tools release from
https://github.com/tlaplus/tlaplus/releases (Java 11 or later), e.g.
  TLA2TOOLS=$HOME/tla2tools.jar make tlc`);
    process.exit(2);
  }
  return jar;
}

// The PROPERTY/PROPERTIES names of a cfg.
function propertyNames(cfg) {
  const m = /^PROPERT(?:Y|IES)\b([\s\S]*?)(?=^[A-Z_]+\b|(?![\s\S]))/m.exec(cfg.replace(/\\\*.*$/gm, ''));
  return m ? m[1].split(/\s+/).filter(Boolean) : [];
}

// The names of the properties in TLC's report of several violated at
// once: "A and B", "A, B, and C".
export function propertyList(text) {
  return text.split(/,\s*(?:and\s+)?|\s+and\s+/).map((s) => s.trim()).filter(Boolean);
}

// The outcome of a TLC run on cfg, as the manifest words it; several
// temporal properties violated at once are joined by " and "
// (sameOutcome in manifest.mjs matches one of them).
export function outcomeOf(out, cfg) {
  if (/Model checking completed\. No error has been found\./.test(out)) return 'pass';
  let m = /Error: Invariant (\w+) is violated/.exec(out);
  if (m) return `violates ${m[1]}`;
  m = /Error: Action property (\w+) is violated/.exec(out);
  if (m) return `violates ${m[1]}`;
  m = /Error: Temporal property (\S+) was violated/.exec(out);
  if (m) return `violates ${m[1]}`;
  m = /Error: Temporal properties (\S.*?) were violated/.exec(out);
  if (m) return `violates ${propertyList(m[1]).join(' and ')}`;
  // A property that is another module's specification (a refinement,
  // Abs!Spec) is reported by where its clause is, not by name: name it
  // when the cfg checks only one property.
  if (/Error: (Action property|Property) line \d+, col \d+ to line \d+, col \d+ of module \w+ is violated/.test(out)) {
    const names = propertyNames(cfg);
    return names.length === 1 ? `violates ${names[0]}` : 'violates refinement';
  }
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

// runTlc writes files ({ name: text }, the modules, configurations and
// any file they read) to a scratch directory, runs TLC there on module spec
// with configuration cfg, removes the directory and returns { outcome,
// distinct, out, secs, status }: status is TLC's exit status (null when
// java did not exit by itself). jar is the class path: tla2tools.jar, or
// it and the jars of modules TLC loads from there (path.delimiter apart).
export function runTlc(jar, files, spec, cfg, workers = '1') {
  const java = process.env.JAVA ?? 'java';
  const javaOpts = (process.env.JAVA_OPTS ?? '-XX:+UseParallelGC').split(/\s+/).filter(Boolean);
  const work = mkdtempSync(join(tmpdir(), 'tlc-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(work, name), text);
  const t0 = Date.now();
  const run = spawnSync(
    java,
    [...javaOpts, '-cp', jar, 'tlc2.TLC', '-workers', workers, '-cleanup',
      '-metadir', join(work, 'states'), '-config', cfg, spec],
    { cwd: work, encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  const secs = (Date.now() - t0) / 1000;
  rmSync(work, { recursive: true, force: true });
  const out = `${run.stdout ?? ''}${run.stderr ?? ''}`;
  if (run.error) return { outcome: 'error', out: `${out}${run.error.message}\n`, secs, status: null };
  return { outcome: outcomeOf(out, files[cfg]), distinct: distinctOf(out), out, secs, status: run.status };
}
