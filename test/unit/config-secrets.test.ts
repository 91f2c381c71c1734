/**
 * Config problems never print a secret (found by test/integration/secret-scan.test.ts): a
 * mistyped `management.token` or `controller.token` is described by its shape, and a
 * `controller.url` with `user:password@` is refused (nothing would send them) and shown masked — problems go to stderr, journald and
 * `rackside doctor`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, parseConfigYaml } from '../../agent/config.js';
import { describeSecretValue, redactUrlCredentials } from '../../agent/config-decode.js';

const SECRET = 'canary-7f3a9c1e';

function messageOf(yaml: string): string {
  try {
    parseConfigYaml(yaml, 'rackside.yaml', { agentId: 'rack-a' });
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message;
  }
  assert.fail('expected a ConfigError');
}

const cases: Record<string, { yaml: string; path: string; got: RegExp }> = {
  'management.token too short': { yaml: `management:\n  token: ${SECRET}\n`, path: 'management.token', got: /got a string of 15 characters \(not shown: a secret\)/ },
  'management.token with spaces': { yaml: `management:\n  token: "my ${SECRET} token"\n`, path: 'management.token', got: /got a string of 24 characters with whitespace/ },
  'controller.token a number': { yaml: 'controller:\n  url: http://c.example/push\n  token: 736193001\n', path: 'controller.token', got: /got a number \(not shown: a secret\)/ },
  'controller.url with credentials': { yaml: `controller:\n  url: ftp://ops:${SECRET}@c.example/push\n`, path: 'controller.url', got: /got "ftp:\/\/\*\*\*@c\.example\/push"/ },
  'controller.url https with credentials': {
    yaml: `controller:\n  url: https://ops:${SECRET}@c.example/push\n`, path: 'controller.url',
    got: /without user:password@ \(put the secret in controller\.token\), got "https:\/\/\*\*\*@c\.example\/push"/,
  },
  'controller.url with a user only': { yaml: `controller:\n  url: http://${SECRET}@c.example/push\n`, path: 'controller.url', got: /without user:password@/ },
};
for (const [name, c] of Object.entries(cases)) {
  test(`config problem without the secret: ${name}`, () => {
    const message = messageOf(c.yaml);
    assert.ok(message.includes(c.path), message);
    assert.match(message, c.got);
    assert.ok(!message.includes(SECRET) && !message.includes('736193001'), `the secret is not printed: ${message}`);
  });
}

test('describeSecretValue and redactUrlCredentials', () => {
  assert.equal(describeSecretValue(undefined), 'nothing');
  assert.equal(describeSecretValue({ a: SECRET }), 'a mapping');
  assert.equal(redactUrlCredentials('https://u:p@h/x@y'), 'https://***@h/x@y');
  assert.equal(redactUrlCredentials('https://h/x?u=a@b'), 'https://h/x?u=a@b');
  assert.equal(redactUrlCredentials('not a url'), 'not a url');
});
