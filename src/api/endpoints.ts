/** Paths of the proxy endpoints the Overview asks first: shared by the API client and the early requests of module.js. */
export const ENDPOINTS = {
  golden: '/golden',
  heatmap: '/gpu/heatmap',
  annotations: '/annotations',
  services: '/services',
} as const;
