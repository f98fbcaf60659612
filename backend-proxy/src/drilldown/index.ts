// The drill-down: services → pods → a pod's kernel events, each figure from the first origin that counts it
// (one origin a file under origins/, asked together by gather.ts, chosen field by field by pick.ts).
export { DrilldownService, type DrilldownDeps } from './service';
export { countByType } from './kernel-counts';
