/**
 * The demo's reaper: a small process of its own (own process group) that ends every part when the demo supervisor
 * (scripts/demo.ts) is gone without stopping them — killed with SIGKILL, its terminal closed, its caller giving up.
 * The supervisor holds the write end of this process's stdin and writes one line per part it starts (`+<pgid>`), and
 * `done` once it has stopped them itself. End of input without `done` means the supervisor died: every group gets
 * SIGTERM, then SIGKILL after GRACE_MS, and the reaper exits. Nothing else reads or writes the pipe; the kernel closes
 * it when the supervisor dies, however it dies.
 */
import { createInterface } from 'node:readline';

const GRACE_MS = Number(process.env.HOPSCOPE_DEMO_REAPER_GRACE_MS ?? 5000);
const groups = new Set<number>();
let done = false;

const alive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};
const signal = (pgid: number, sig: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, sig);
  } catch {
    /* gone */
  }
};

// The reaper outlives the terminal and the supervisor's group by design: their signals are not for it, and a closed
// terminal (EIO on stderr) must not stop it before it has done its work.
for (const sig of ['SIGINT', 'SIGHUP'] as const) process.on(sig, () => undefined);
process.stderr.on('error', () => undefined);

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const m = /^\+(\d+)$/.exec(line.trim());
  if (m) groups.add(Number(m[1]));
  else if (line.trim() === 'done') done = true;
});
lines.on('close', async () => {
  if (done) process.exit(0);
  const live = [...groups].filter(alive);
  for (const g of live) signal(g, 'SIGTERM');
  if (live.length)
    process.stderr.write(`[demo] the demo supervisor is gone: stopping the ${live.length} part(s) it left\n`);
  const deadline = Date.now() + GRACE_MS;
  while (live.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const g of live.filter(alive)) signal(g, 'SIGKILL');
  process.exit(0);
});
