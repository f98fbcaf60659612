// Kernel evidence kept past the exporters' rings: the service (lease, rounds, health), one stream reader per
// exporter, the keeper that writes the notable events, and the window answer root cause reads.
export { KernelEvidenceService, KEEPER_LEASE, type KernelEvidenceHealth, type KernelEvidenceOptions } from './service';
export { StreamReader, type EvidenceSink, type ExporterStreamState, type StreamReaderDeps } from './stream-reader';
export { KernelEvidenceKeeper, type KernelEvidenceKeeperOptions, type KernelEvidenceStats } from './keeper';
export { isNotableKernelEvent, DEFAULT_NOTABLE, type NotableThresholds } from './notable';
export { kernelWindow, type KernelWindow, type WindowSources } from './window';
export { formatDuration } from './format-duration';
