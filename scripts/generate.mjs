// Build step after tsc: writes dist/generated/, what the built server would otherwise compute at
// start-up: the schemas' validators as code (no Ajv compile) and the tokenizer tables as JSON.
import { writeRanks } from '../dist/text/ranks.js';
import { ENCODINGS } from '../dist/text/tokenizer.js';
import { writeGenerated } from '../dist/contract/validators/generate.js';

writeGenerated();
writeRanks(ENCODINGS);
