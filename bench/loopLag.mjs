// Loaded into the server measured by bench/bodies.ts (node --import): the longest the event loop was held by the
// server's own work. A 10 ms timer that fires late was held back either by the server's CPU or by a machine too busy
// to run it; the CPU the process used meanwhile tells the two apart, so each lateness counts at most that CPU. On
// SIGUSR2 the longest since the last signal is written to the file UAM_LOOP_LAG_FILE names, and starts again.
import { writeFileSync } from 'node:fs';

const TICK_MS = 10;
let worst = 0;
let last = performance.now();
let lastCpu = process.cpuUsage();
setInterval(() => {
  const now = performance.now();
  const cpu = process.cpuUsage(lastCpu);
  const late = now - last - TICK_MS;
  worst = Math.max(worst, Math.min(late, (cpu.user + cpu.system) / 1000));
  last = now;
  lastCpu = process.cpuUsage();
}, TICK_MS).unref();
process.on('SIGUSR2', () => {
  writeFileSync(process.env.UAM_LOOP_LAG_FILE ?? '/dev/null', String(Math.round(worst)));
  worst = 0;
});
