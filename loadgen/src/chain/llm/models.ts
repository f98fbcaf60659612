/** The model versions the simulated LLM hops serve, and how each one's speed differs (for A/B by version). */
export interface ModelSpec {
  id: string;
  /** Multiplies prefill time per prompt token. */
  prefill: number;
  /** Multiplies decode time per step. */
  decode: number;
  /** GPU memory the weights take per GPU (MiB), for DCGM framebuffer figures. */
  weightsMiB: number;
  /** KV-cache bytes per token (2 × layers × KV heads × head dim × 2 bytes in FP16): what an admission allocates. */
  kvBytesPerToken: number;
  /** The lighter model a gpu_oom falls back to (none for the lightest). */
  fallback?: string;
  /**
   * Share of the agent's plans this model gets wrong (a tool call with invalid arguments: the task fails), drawn per
   * question. A simulation parameter, not a measurement: small models call tools less reliably, and this makes the
   * fall-back path's task completion differ from the primary's as it does in practice. Absent: 0.
   */
  agentPlanFailure?: number;
}

// Llama-3 8B: 32 layers × 8 KV heads × 128 → 128 KiB/token; Llama-3.2 1B: 16 layers × 8 KV heads × 64 → 32 KiB/token.
const KV_8B = 2 * 32 * 8 * 128 * 2;
const KV_1B = 2 * 16 * 8 * 64 * 2;

export const MODELS: Record<string, ModelSpec> = {
  'hopscope-llama-8b-v1': {
    id: 'hopscope-llama-8b-v1',
    prefill: 1,
    decode: 1,
    weightsMiB: 16_400,
    kvBytesPerToken: KV_8B,
    fallback: 'hopscope-llama-1b',
  },
  'hopscope-llama-8b-v2': {
    id: 'hopscope-llama-8b-v2',
    prefill: 1.15,
    decode: 0.8,
    weightsMiB: 16_400,
    kvBytesPerToken: KV_8B,
    fallback: 'hopscope-llama-1b',
  },
  'hopscope-llama-1b': {
    id: 'hopscope-llama-1b',
    prefill: 0.3,
    decode: 0.45,
    weightsMiB: 2_500,
    kvBytesPerToken: KV_1B,
    agentPlanFailure: 0.35,
  },
};
export const DEFAULT_MODEL = 'hopscope-llama-8b-v1';
export const MODEL_IDS = Object.keys(MODELS);
