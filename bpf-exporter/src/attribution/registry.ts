/**
 * pid → pod declarations (POST /register) for processes that are not in Kubernetes, e.g. the simulated chain's hops.
 * Bounded: the oldest registration is forgotten when full.
 */
export interface Registration {
  pid: number;
  pod: string;
  namespace?: string;
  node?: string;
  service?: string;
  /** Workload labels declared with the registration (as a pod's would be). */
  labels?: Record<string, string>;
  registeredAt: number;
}

export class PidRegistry {
  private readonly byPid = new Map<number, Registration>();

  constructor(readonly capacity = 10_000) {}

  set(r: Omit<Registration, 'registeredAt'>): Registration {
    const reg = { ...r, registeredAt: Date.now() };
    this.byPid.delete(r.pid);
    if (this.byPid.size >= this.capacity) this.byPid.delete(this.byPid.keys().next().value as number);
    this.byPid.set(r.pid, reg);
    return reg;
  }

  get(pid: number): Registration | undefined {
    return this.byPid.get(pid);
  }
  delete(pid: number): boolean {
    return this.byPid.delete(pid);
  }
  list(): Registration[] {
    return [...this.byPid.values()];
  }
  get size(): number {
    return this.byPid.size;
  }
}
