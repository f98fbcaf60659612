import type { AppliedFault } from '../../../contract/runs';

/** What applied a run's fault: `chain fault <id>`, or the Chaos Mesh resource (`Chaos Mesh NetworkChaos ns/name`). */
export const appliedAs = (f: AppliedFault): string =>
  f.via === 'chaos-mesh' ? `Chaos Mesh ${f.resource ?? f.id}` : `chain fault ${f.id}`;
