import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../../src/contract/errors.js';
import { Catalogue } from '../../../src/domain/catalogue.js';
import { ConfigError, resolveConfig, type ConfigInput } from '../../../src/domain/config.js';
import { Latency } from '../../../src/domain/latency/control.js';
import { summarize } from '../../../src/domain/latency/distributions.js';
import type { Dist } from '../../../src/domain/latency/types.js';
import { schemas } from '../../support/index.js';

const catalogue = new Catalogue(schemas());
const control = (latency: ConfigInput['latency'] = {}, maxProfiles = 256) =>
  new Latency(resolveConfig({ latency }, schemas()).latency, catalogue, { maxQuotedChars: 64, maxProfiles });

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

const pick = (c: Latency, model: string, header?: string) => {
  const choice = c.choose(model, header);
  return choice && `${choice.name} ${choice.from}`;
};

test('off by default: no model has a profile, the view says so', () => {
  const c = control();
  assert.is(c.choose('gpt-4o'), undefined);
  assert.is(c.choose('dall-e-3'), undefined);
  const view = c.view();
  assert.is(view.profile, 'off');
  assert.is(view.queueFullStatus, 429);
  assert.is(view.retryAfterMs, 1000);
  assert.ok(view.models.every((m) => m.profile === null && m.from === null));
  assert.is(view.models.length, catalogue.models.length);
});

test("precedence: header > the admin API's per model > the configuration's per model > the global profile", () => {
  const c = control({ profile: 'catalogue', models: { 'gpt-4o': 'large-slow' } });
  assert.is(pick(c, 'gpt-4o-mini'), 'small-fast catalogue');
  assert.is(pick(c, 'gpt-4o'), 'large-slow config');
  c.update({ models: { 'gpt-4o': 'reasoning', 'gpt-4o-mini': 'off' } });
  assert.is(pick(c, 'gpt-4o'), 'reasoning admin');
  assert.is(pick(c, 'gpt-4o-mini'), undefined);
  assert.is(pick(c, 'gpt-4o', 'small-fast'), 'small-fast header');
  assert.is(pick(c, 'gpt-4o', 'off'), undefined);
  assert.is(pick(c, 'gpt-4o', 'catalogue'), 'medium header');
  // null takes the admin API's setting away: the configuration's is back.
  c.update({ models: { 'gpt-4o': null } });
  assert.is(pick(c, 'gpt-4o'), 'large-slow config');
  // A global profile from the admin API: every model without its own setting.
  c.update({ profile: 'medium' });
  assert.is(pick(c, 'o3-mini'), 'medium admin');
  assert.is(pick(c, 'gpt-4o'), 'large-slow config');
  assert.is(pick(c, 'gpt-4o-mini'), undefined);
  assert.is(c.view().profile, 'medium');
  c.reset();
  assert.is(pick(c, 'o3-mini'), 'reasoning catalogue');
  assert.is(pick(c, 'gpt-4o-mini'), 'small-fast catalogue');
});

test('a profile name for every model; the configuration adds and replaces profiles', () => {
  const own: Dist = { type: 'uniform', lower: 10, upper: 20 };
  const c = control({ profile: 'mine', profiles: { mine: { ttft: own }, medium: { ttft: 1 } } });
  assert.is(pick(c, 'gpt-4o'), 'mine config');
  assert.is(pick(c, 'dall-e-3'), 'mine config');
  assert.equal(c.choose('gpt-4o', 'medium')!.profile, { ttft: 1 });
  assert.equal(c.view().profiles.mine!.summary, { ttft: summarize(own) });
  assert.ok('large-slow' in c.view().profiles);
});

test('an unknown header name is a 400 invalid_header naming X-Mock-Pacing, listing the profiles, the name cut', () => {
  const e = thrown(() => control().choose('gpt-4o', 'x'.repeat(100))) as ApiError;
  assert.instance(e, ApiError);
  assert.is(e.status, 400);
  assert.is(e.code, 'invalid_header');
  assert.is(e.param, 'x-mock-pacing');
  assert.ok(e.message.startsWith(`Invalid x-mock-pacing header: '${'x'.repeat(64)}' is not a latency profile.`));
  for (const name of ['off', 'catalogue', ...catalogue.profiles.keys()]) assert.ok(e.message.includes(name), name);
});

test('names that are not profiles, or models not in the catalogue, stop the start naming the field', () => {
  const cases: [ConfigInput['latency'], RegExp][] = [
    [{ profile: 'fast' }, /latency\.profile: 'fast' is not a profile \(off, catalogue, small-fast, /],
    [{ models: { 'gpt-4o': 'fast' } }, /latency\.models\.gpt-4o: 'fast' is not a profile/],
    [{ models: { 'gpt-99': 'medium' } }, /latency\.models: 'gpt-99' is not a model of the catalogue/],
    [{ profiles: { p: { ttft: { type: 'uniform', lower: 3, upper: 1 } } } }, /latency\.profiles\.p\.ttft: lower/],
  ];
  for (const [latency, message] of cases) {
    const e = thrown(() => control(latency));
    assert.instance(e, ConfigError);
    assert.match(e.message, message);
  }
  // The schema's own checks, through the catalogue's $defs/profile.
  const noSd = { type: 'normal', mean: 1 } as unknown as Dist;
  assert.throws(() => control({ profiles: { p: { ttft: noSd } } }), /latency\.profiles\.p\.ttft/);
  assert.throws(() => control({ profiles: { off: {} } }), /latency\.profiles/);
});

test('a refused change names its field and changes nothing', () => {
  const c = control({ profile: 'catalogue' });
  const before = c.view();
  const cases: [Parameters<Latency['update']>[0], string][] = [
    [{ profile: 'fast', seed: 9 }, 'profile'],
    [{ models: { 'gpt-4o': 'fast' } }, 'models.gpt-4o'],
    [{ models: { 'gpt-99': 'medium' } }, 'models.gpt-99'],
    [
      { profiles: { p: { interToken: { type: 'normal', mean: 1, sd: 1, min: 5, max: 2 } } }, seed: 3 },
      'profiles.p.interToken',
    ],
  ];
  for (const [change, param] of cases) {
    const e = thrown(() => c.update(change)) as ApiError;
    assert.instance(e, ApiError);
    assert.is(e.status, 400);
    assert.is(e.param, param);
  }
  assert.equal(c.view(), before);
  // A profile added by the change may be used by the same change.
  c.update({ profiles: { p: { ttft: 5 } }, models: { 'gpt-4o': 'p' } });
  assert.is(pick(c, 'gpt-4o'), 'p admin');
});

test("the profiles held are bounded, the catalogue's included: one more is refused", () => {
  const builtIn = catalogue.profiles.size;
  assert.throws(
    () => control({ profiles: { a: {}, b: {} } }, builtIn + 1),
    (e: Error) => e instanceof ConfigError && /more than \d+ profiles \(latencyProfiles\.maxCount/.test(e.message),
  );
  const c = control({ profiles: { a: {} } }, builtIn + 2);
  c.update({ profiles: { b: {} } });
  c.update({ profiles: { b: { ttft: 5 } } }); // a replacement is not one more
  const e = thrown(() => c.update({ profiles: { z: {} } })) as ApiError;
  assert.is(e.status, 400);
  assert.is(e.param, 'profiles');
  assert.match(e.message, /at most \d+ profiles are held/);
  c.reset();
  c.update({ profiles: { z: {} } });
});

test('draws: the n-th request draws from (seed, n); a new seed and reset start again', () => {
  const dist: Dist = { type: 'normal', mean: 100, sd: 20 };
  const c = control({ profile: 'medium', seed: 5 });
  const three = () => [c.draws(), c.draws(), c.draws()].map((d) => [d.draw(dist), d.draw(dist)]);
  const first = three();
  assert.is(c.view().draws, 3);
  assert.not.equal(first[0], first[1]);
  c.reset();
  assert.equal(three(), first);
  c.update({ seed: 5 });
  assert.is(c.view().draws, 0);
  assert.equal(three(), first);
  c.update({ seed: 6 });
  assert.not.equal(three(), first);
  assert.equal(control({ seed: 5 }).draws().draw(dist), first[0]![0]);
});

test.run();
