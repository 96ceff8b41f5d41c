/**
 * Fake secrets in the real formats, assembled at run time so that no secret scanner
 * mistakes this file for a leak.
 */
const join = (...parts: string[]) => parts.join('');
const mixed = (n: number) => 'aB3dE5fG7h'.repeat(Math.ceil(n / 10)).slice(0, n);

export const fake = {
  openaiLegacy: join('sk', '-', mixed(48)),
  openaiProject: join('sk', '-proj-', mixed(40), '_', mixed(20), '-', mixed(24)),
  anthropic: join('sk', '-ant-api03-', mixed(80), '-', mixed(10), 'AA'),
  awsAccessKey: join('AK', 'IA', 'IOSFODNN7', 'EXAMPLE'),
  awsSessionKey: join('AS', 'IA', 'Z2B4D6F8H0J2L4N6'),
  awsSecret: join('wJalrXUtnFEMI', '/K7MDENG/bPxRfiCY', 'EXAMPLEKEY'),
  githubClassic: join('gh', 'p_', mixed(36)),
  githubOauth: join('gh', 'o_', mixed(36)),
  githubApp: join('gh', 's_', mixed(36)),
  githubFine: join('github', '_pat_', mixed(22), '_', mixed(59)),
  gitlab: join('gl', 'pat-', mixed(20)),
  slackBot: join('xo', 'xb-', '123456789012-1234567890123-', mixed(24)),
  slackUser: join('xo', 'xp-', '123456789012-1234567890123-1234567890123-', mixed(32)),
  slackWebhook: join('https://hooks.', 'slack.com/services/', 'T00000000/B00000000/', mixed(24)),
  google: join('AI', 'za', 'Sy', mixed(33)),
  stripeLive: join('sk', '_live_', mixed(24)),
  stripeRestricted: join('rk', '_live_', mixed(24)),
  npm: join('np', 'm_', mixed(36)),
  huggingface: join('h', 'f_', mixed(34)),
  jwt: join(
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
    '.',
    'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ',
    '.',
    'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
  ),
  bearer: join('ya29', '.', mixed(40)),
  pem: [
    '-----BEGIN RSA PRIVATE',
    ' KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF0qJ\n',
    mixed(64),
    '\n-----END RSA PRIVATE',
    ' KEY-----',
  ].join(''),
};
