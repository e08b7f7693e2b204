// The system's Chromium for the browser tests: no browser is downloaded (`apt-get install -y chromium` on
// Debian; .ci/run installs it).
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The system's Chromium: the first of these names on PATH. */
export function findChromium(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
      const file = join(dir, name);
      if (dir && existsSync(file)) return file;
    }
  }
  return undefined;
}

/** Headless, and none of the background connections this machine's closed network would refuse. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
