/** The model versions the simulated LLM hops serve, and how each one's speed differs (for A/B by version). */
export interface ModelSpec {
  id: string;
  /** Multiplies prefill time per prompt token. */
  prefill: number;
  /** Multiplies decode time per step. */
  decode: number;
  /** GPU memory the weights take per GPU (MiB), for DCGM framebuffer figures. */
  weightsMiB: number;
  /** The lighter model a gpu_oom falls back to (none for the lightest). */
  fallback?: string;
}

export const MODELS: Record<string, ModelSpec> = {
  'hopscope-llama-8b-v1': { id: 'hopscope-llama-8b-v1', prefill: 1, decode: 1, weightsMiB: 16_400, fallback: 'hopscope-llama-1b' },
  'hopscope-llama-8b-v2': { id: 'hopscope-llama-8b-v2', prefill: 1.15, decode: 0.8, weightsMiB: 16_400, fallback: 'hopscope-llama-1b' },
  'hopscope-llama-1b': { id: 'hopscope-llama-1b', prefill: 0.3, decode: 0.45, weightsMiB: 2_500 },
};
export const DEFAULT_MODEL = 'hopscope-llama-8b-v1';
export const MODEL_IDS = Object.keys(MODELS);
