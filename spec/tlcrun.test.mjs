// Tests of how tlcrun.mjs names TLC's outcomes, on TLC's own words:
//   node --test spec/tlcrun.test.mjs
// With TLA2TOOLS set, TLC itself runs a small module whose properties fail
// one, two and three at a time, and the names must come back.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sameOutcome } from './manifest.mjs';
import { outcomeOf, propertyList, runTlc } from './tlcrun.mjs';

const cfgOf = (props) => `SPECIFICATION Spec\nPROPERTIES\n    ${props.join('\n    ')}\n`;

test('one temporal property', () => {
  const out = 'Error: Temporal property AckedJobsEndProp was violated.\n';
  assert.equal(outcomeOf(out, cfgOf(['AckedJobsEndProp', 'WaitReturnsProp'])),
    'violates AckedJobsEndProp');
});

test('two and three temporal properties', () => {
  assert.deepEqual(propertyList('P1 and P2'), ['P1', 'P2']);
  assert.deepEqual(propertyList('P1, P2, and P3'), ['P1', 'P2', 'P3']);
  const two = 'Error: Temporal properties WaitReturnsProp and TerminationProp were violated.\n';
  assert.equal(outcomeOf(two, cfgOf(['WaitReturnsProp', 'TerminationProp'])),
    'violates WaitReturnsProp and TerminationProp');
  const three = 'Error: Temporal properties A, B, and C were violated.\n';
  assert.equal(outcomeOf(three, cfgOf(['A', 'B', 'C'])), 'violates A and B and C');
});

test('unnamed temporal properties', () => {
  const out = 'Error: Temporal properties were violated.\n';
  assert.equal(outcomeOf(out, cfgOf(['P'])), 'violates P');
  assert.equal(outcomeOf(out, cfgOf(['P', 'Q'])), 'violates temporal property');
});

test('invariants, action properties, deadlock, pass', () => {
  assert.equal(outcomeOf('Error: Invariant DepthInv is violated.\n', ''), 'violates DepthInv');
  assert.equal(outcomeOf('Error: Action property NoRequeueProp is violated.\n', ''),
    'violates NoRequeueProp');
  assert.equal(outcomeOf('Error: Deadlock reached.\n', ''), 'deadlock');
  assert.equal(outcomeOf('Model checking completed. No error has been found.\n', ''), 'pass');
});

test('an outcome of several properties matches each of them', () => {
  assert.ok(sameOutcome('violates A and B', 'violates B'));
  assert.ok(sameOutcome('violates A', 'violates A'));
  assert.ok(!sameOutcome('violates A and B', 'violates C'));
  assert.ok(!sameOutcome('violates A and B', 'deadlock'));
  assert.ok(!sameOutcome('pass', 'violates A'));
});

const multi = `---- MODULE Multi ----
EXTENDS Naturals
VARIABLE x
Spec == x = 0 /\\ [][x' = 0]_x
P1 == <>(x = 1)
P2 == <>(x = 2)
P3 == <>(x = 3)
Q == [](x = 0)
====
`;

test('TLC names what it finds violated', { skip: !process.env.TLA2TOOLS && 'TLA2TOOLS is not set' }, () => {
  for (const [props, want] of [
    [['P1', 'Q'], 'violates P1'],
    [['P1', 'P2'], 'violates P1 and P2'],
    [['P1', 'P2', 'P3'], 'violates P1 and P2 and P3'],
  ]) {
    const r = runTlc(process.env.TLA2TOOLS, { 'Multi.tla': multi, 'Multi.cfg': cfgOf(props) },
      'Multi.tla', 'Multi.cfg');
    assert.equal(r.outcome, want, r.out);
  }
});
