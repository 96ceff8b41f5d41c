// Writes src/tools/meta-validators-2020.ts and meta-validators-07.ts: ajv's validators of
// the JSON Schema meta-schemas (2020-12 and draft-07) as standalone code. ajv checks every
// schema it compiles against its dialect's meta-schema, and compiling that meta-schema is
// most of what a process's first tool call costs (about 100 ms); generated once here, it is
// only parsed. Run `node scripts/meta-validators.mjs` after upgrading ajv; a test checks that
// the files are what the installed ajv generates.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { metaValidatorSources } from './meta-validators-source.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const [file, text] of Object.entries(metaValidatorSources())) writeFileSync(`${root}src/tools/${file}`, text);
