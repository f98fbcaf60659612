/**
 * The symbol check a found file passes before it counts toward its kind's cap (core/uprobe-files.ts): it must export
 * the symbols of at least one probe that attaches to that kind (all of them, or one for an `anyOf` kind), as
 * `bpftrace -l` lists them. A file named libssl.so.3 that exports nothing is refused, so dummies cannot crowd out the
 * real library. Without bpftrace (or root) nothing attaches anyway: every file passes, and the probes say why.
 */
import { exportedSymbols, machinePreflight } from './preflight';
import type { ProbeModule } from './probe';

export function usableBySymbols(
  probes: ProbeModule[],
  bpftrace: string
): (file: string, path: string) => Promise<true | string> {
  return async (file, path) => {
    const machine = machinePreflight(bpftrace);
    if (!machine.ok) return true;
    const kinds = probes.flatMap((p) => p.uprobes ?? []).filter((k) => k.file === file);
    for (const k of kinds) {
      const have = await exportedSymbols(machine.bin, path, k.symbols);
      if (k.anyOf ? k.symbols.some((s) => have.has(s)) : k.symbols.every((s) => have.has(s))) return true;
    }
    return `exports none of the symbol sets a probe needs (${kinds.map((k) => k.symbols.join(', ')).join(' | ')}); not counted toward the cap`;
  };
}
