// tla-checker, loaded once, and what check.mjs and mutants.mjs share: run a
// spec text against a cfg text and name the outcome as the manifest does.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { initSync, check_spec_with_cfg } from 'tla-checker';

const require = createRequire(import.meta.url);
const wasm = join(dirname(require.resolve('tla-checker')), 'tla_checker_bg.wasm');
initSync({ module: readFileSync(wasm) });

const MAX_STATES = 2_000_000;
const MAX_DEPTH = 10_000;

// The INVARIANT(S) names of a cfg, in order: the checker reports a
// violated invariant by its index in that list.
export function invariantNames(cfg) {
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

// The outcome of a run as the manifest words it: "pass", "violates NAME",
// "deadlock", or "error ..." for anything else (a parse or evaluation
// error, a bound reached).
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

// tlaCheck model-checks spec (the text of a module) with cfg (the text of a
// configuration) and returns { outcome, states, trace, secs }. opts may
// raise maxDepth and allow deadlock (trace validation: a trace the spec
// cannot follow ends in a state without successor).
export function tlaCheck(spec, cfg, opts = {}) {
  const t0 = Date.now();
  const result = JSON.parse(
    check_spec_with_cfg(spec, cfg, '{}', opts.maxStates ?? MAX_STATES,
      opts.maxDepth ?? MAX_DEPTH, opts.allowDeadlock ?? false, false),
  );
  return {
    outcome: outcomeOf(result, cfg),
    states: result.states_explored,
    trace: result.trace,
    secs: (Date.now() - t0) / 1000,
  };
}
