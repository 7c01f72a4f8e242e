// Checks every configuration marked "ci" in manifest.json with the pinned
// tla-checker and compares the outcome and the distinct-state count with
// the manifest.  One line per configuration, then a summary; exits non-zero
// on any mismatch.
//
//   node spec/check.mjs [--trace] [CONFIG.cfg ...]
//
// --trace prints the counterexample of every configuration that violates
// an invariant.  Names of configurations restrict the run to those.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { initSync, check_spec_with_cfg } from 'tla-checker';
import { Tally, here, loadConfigs } from './manifest.mjs';

const require = createRequire(import.meta.url);
const wasm = join(dirname(require.resolve('tla-checker')), 'tla_checker_bg.wasm');
initSync({ module: readFileSync(wasm) });

const MAX_STATES = 2_000_000;
const MAX_DEPTH = 10_000;

const args = process.argv.slice(2);
const showTrace = args.includes('--trace');
const only = args.filter((a) => !a.startsWith('--'));

const configs = loadConfigs((c) => c.ci && (only.length === 0 || only.includes(c.cfg)));
if (only.length > 0 && configs.length !== only.length) {
  console.error(`unknown or non-ci configuration among: ${only.join(', ')}`);
  process.exit(2);
}

// The INVARIANT(S) names of a cfg, in order: the checker reports a
// violated invariant by its index in that list.
function invariantNames(cfg) {
  const names = [];
  let inList = false;
  for (const raw of cfg.split('\n')) {
    const line = raw.replace(/\\\*.*$/, '').trim();
    if (line === '') continue;
    const m = line.match(/^INVARIANTS?\b(.*)$/);
    if (m) {
      inList = true;
      names.push(...m[1].split(/\s+/).filter(Boolean));
    } else if (/^[A-Z_]+\b/.test(line) && /^(CONSTANTS?|INIT|NEXT|SPECIFICATION|PROPERT(Y|IES)|SYMMETRY|CONSTRAINTS?|ACTION_CONSTRAINTS?|VIEW|CHECK_DEADLOCK)\b/.test(line)) {
      inList = false;
    } else if (inList) {
      names.push(...line.split(/\s+/));
    }
  }
  return names;
}

function outcomeOf(result, cfg) {
  if (result.success) return 'pass';
  if (result.error_type === 'InvariantViolation') {
    const m = /Invariant (\d+) violated/.exec(result.error_message ?? '');
    const name = m ? invariantNames(cfg)[Number(m[1])] : undefined;
    return `violates ${name ?? result.error_message}`;
  }
  if (result.error_type === 'Deadlock') return 'deadlock';
  return `error ${result.error_type}: ${result.error_message}`;
}

const tally = new Tally();
const started = Date.now();
for (const c of configs) {
  const spec = readFileSync(join(here, c.spec), 'utf8');
  const cfg = readFileSync(join(here, c.cfg), 'utf8');
  const t0 = Date.now();
  const result = JSON.parse(
    check_spec_with_cfg(spec, cfg, '{}', MAX_STATES, MAX_DEPTH, false, false),
  );
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  tally.record(c, outcomeOf(result, cfg), result.states_explored, c.tlaChecker.distinct, secs);
  if (showTrace && result.trace) console.log(result.trace.join('\n'));
}
console.log(`tla-checker: ${((Date.now() - started) / 1000).toFixed(1)}s in all`);
tally.finish('spec');
