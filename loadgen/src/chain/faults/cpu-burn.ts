/**
 * Real CPU burn for the `cpu_hog` fault: a worker thread per hop replica spins for the requested milliseconds and the
 * hop waits for it. The burn is real (the kernel sees a busy thread of this process), the hop's own requests queue
 * behind it (one worker = one busy core), and the other hops' event loop keeps running.
 */
import { Worker } from 'node:worker_threads';

const SPIN = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, ms }) => {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) { for (let i = 0; i < 1000; i++) x += Math.sqrt(i * x + 1); }
  parentPort.postMessage({ id, x });
});`;

export class CpuBurner {
  private worker?: Worker;
  private next = 0;
  private readonly pending = new Map<number, () => void>();

  burn(ms: number): Promise<void> {
    if (!this.worker) {
      this.worker = new Worker(SPIN, { eval: true });
      this.worker.unref();
      this.worker.on('message', ({ id }: { id: number }) => {
        this.pending.get(id)?.();
        this.pending.delete(id);
      });
    }
    const id = this.next++;
    return new Promise<void>((resolve) => {
      this.pending.set(id, resolve);
      this.worker!.postMessage({ id, ms });
    });
  }

  async close(): Promise<void> {
    for (const r of this.pending.values()) r();
    this.pending.clear();
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
