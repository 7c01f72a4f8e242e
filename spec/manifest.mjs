// What check.mjs and tlc.mjs share: the manifest, the outcome each
// configuration must have, and the line each prints for it.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = dirname(fileURLToPath(import.meta.url));

// The manifest's configurations that keep(c) accepts.
export function loadConfigs(keep) {
  const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8'));
  return manifest.configs.filter(keep);
}

// The outcome the manifest expects of configuration c: "pass", or the
// invariant (or, for TLC, the temporal property) it must find violated.
export const expected = (c) =>
  c.expect === 'pass' ? 'pass' : `violates ${c.invariant ?? c.property}`;

// sameOutcome reports whether outcome got is want: the same words, or,
// where TLC reported several properties violated at once ("violates A
// and B"), want names one of them.
export function sameOutcome(got, want) {
  if (got === want) return true;
  if (!got.startsWith('violates ') || !want.startsWith('violates ')) return false;
  return got.slice('violates '.length).split(' and ').includes(want.slice('violates '.length));
}

// Tally compares outcomes and state counts with the manifest, prints one
// line per configuration, and ends with "NAME: N passed, N failed".
export class Tally {
  passed = 0;
  failed = 0;

  // record prints the line for configuration c and reports whether it
  // matched the manifest's outcome and distinct-state count want.
  record(c, got, states, want, secs) {
    const ok = sameOutcome(got, expected(c)) && states === want;
    if (ok) this.passed++;
    else this.failed++;
    const detail = ok
      ? `${got}, ${states} states`
      : `${got}, ${states} states; manifest: ${expected(c)}, ${want} states`;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${c.cfg.padEnd(32)} ${detail} (${secs}s)`);
    return ok;
  }

  // finish prints the summary and exits, non-zero on any mismatch.
  finish(name) {
    console.log(`${name}: ${this.passed} passed, ${this.failed} failed`);
    process.exit(this.failed === 0 ? 0 : 1);
  }
}
